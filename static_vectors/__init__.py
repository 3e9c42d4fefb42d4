"""Static word vectors, the input the paper's baselines start from (Peters et al. 2018 §4 and appendix A:
GloVe or Senna vectors at each task's input, with ELMo added to them). GloVe and Senna cannot be
downloaded here, so the suite ships vectors trained by word2vec on the embedded biLM's own text
(``static_vectors/pretrained/lm-text/``, card beside them); a user's own GloVe text file works the same.

``store`` reads and writes both formats; ``build`` (``python -m static_vectors.build``) trains the shipped
ones; ``intrinsic`` scores a file on gensim's analogy and word-similarity sets."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent / "pretrained"
SHIPPED = "lm-text"  # the shipped set's folder under ROOT
SHIPPED_VECTORS = "shipped"  # task.model.vectors=shipped: the shipped file of the model's word_dim


def shipped_path(dim: int, name: str = SHIPPED) -> Path:
    """The shipped vectors of ``dim`` dimensions (a ``vectors_<dim>d.hdf5`` file under ``ROOT/name``)."""
    return ROOT / name / f"vectors_{dim}d.hdf5"


def shipped_dims(name: str = SHIPPED) -> list[int]:
    """The dimensions shipped in ``ROOT/name``, smallest first."""
    return sorted(int(p.stem[len("vectors_") : -1]) for p in (ROOT / name).glob("vectors_*d.hdf5"))


def shipped_vectors(dim: int) -> str | None:
    """What ``task.model.vectors=shipped`` reads for a ``dim``-wide word embedding: the shipped file of that
    size, or None where none is shipped (the embedding then starts from ``task.model.embedding_init``)."""
    path = shipped_path(dim)
    return str(path) if path.is_file() else None
