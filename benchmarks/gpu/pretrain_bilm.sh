#!/usr/bin/env bash
# The embedded biLM trained on one GPU (elmo_core.size_pilots): three LSTM sizes piloted at equal
# wall-clock time, each learning curve extrapolated to the long run's budget, the chosen size
# continued to that budget and exported in the original format. It prints the GPU, the versions and
# the dates, and every run's tokens/s (pilots.md).
#
#   CORPUS_TGZ=lm_corpus.tgz OUT=results_dir benchmarks/gpu/pretrain_bilm.sh
#
# CORPUS_TGZ: a tarball of lm_corpus/ (train/*.txt, heldout.txt, stats.json as in ../shared/data);
# OUT: where the report and the model come back, the model as model.tgz.part-* pieces of 15 MB
# (join with `cat model.tgz.part-* | tar xz`). Timing (PILOT_MINUTES, TOTAL_MINUTES, DEADLINE_MINUTES)
# fits about 10 minutes on the GPU; with more time raise all three.
set -euo pipefail
: "${CORPUS_TGZ:?a tarball of lm_corpus/}" "${OUT:?where the results go}"
WORK=${WORK:-/tmp/bilm-gpu}
PY=${PY:-python3}
mkdir -p "$WORK" "$OUT"
tar xzf "$CORPUS_TGZ" -C "$WORK"
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  $PY -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no CUDA device')"
  lscpu | grep -m1 'Model name' || true
} | tee "$OUT/machine.txt"
PYTHONUNBUFFERED=1 $PY -m elmo_core.size_pilots --cells ${CELLS:-512 1024 2048} \
  --pilot-minutes "${PILOT_MINUTES:-1.25}" --total-minutes "${TOTAL_MINUTES:-4.5}" \
  --deadline-minutes "${DEADLINE_MINUTES:-8.2}" --out "$WORK/pilots" \
  --preset small --projection-dim 128 --vocab elmo_core/pretrained/small/vocab.txt \
  --train "$WORK/lm_corpus/train/*.txt" --heldout "$WORK/lm_corpus/heldout.txt" \
  --batch-size "${BATCH_SIZE:-512}" --device cuda --data-workers 6 --matmul-precision high \
  --checkpoint-every 2000 --seed 0 ${EXTRA:-} 2>&1 | tee "$OUT/train.log"
date -u +%Y-%m-%dT%H:%M:%SZ | tee -a "$OUT/machine.txt"
cp "$WORK/pilots/pilots.json" "$WORK/pilots/pilots.md" "$OUT/"
chosen=$($PY -c "import json,sys; print(json.load(open(sys.argv[1]))['chosen_cells'])" "$WORK/pilots/pilots.json")
tar czf - -C "$WORK/pilots/cells-$chosen" options.json weights.hdf5 summary.json train_log.jsonl pilot_summary.json \
  | split -b 15000000 - "$OUT/model.tgz.part-"
ls -la "$OUT"
