"""What every package of the suite shares and none owns: its exception types (``errors``), files
that appear complete or not at all (``atomic_files``) and progress bars (``progress``). Standard
library only (``tqdm`` when installed), so ``elmo_core`` still needs only torch, numpy and h5py."""
