"""Settings every part of the suite must read the same way, each decided here once (Peters et al. 2018
§3.3: where ELMo goes; §3.4: the frozen encoder a run reads):

* ``effective_position``: ``elmo.position``, with ``paper`` meaning the task's own placement
  (``task.elmo_position``: NER/SRL/coref ``input``, SST/SQuAD/NLI ``both``; ``probe`` for probes);
* ``uses_encoder``: whether a run reads contextual layers at all (ELMo somewhere, a probe, or
  ``mode=finetune``); a run that does not is the same run whatever biLM or encoder is named;
* ``ElmoSettings``: both of those and how the mixes are made, typed, as a run's plan holds them;
* the keys that do not change a run's result: ``VOLATILE`` (how and where it runs), ``PATH_KEYS``
  (where its files are: their content is in the identity instead; ``CONTENT_KEYS`` likewise for the optional
  files a task model reads) and ``NEUTRAL`` (a run either goes
  ahead or stops). They are left out of a run's identity (``identity``) and, with ``task``, out
  of its directory name (``run_dir_excludes``, Hydra's ``override_dirname.exclude_keys``), and they
  are what ``mode=evaluate`` takes from the command line over a checkpoint's settings. They are named
  in today's layout (``experiments.config_layout``).

Configurations may be ``DictConfig`` or plain dicts (a record's stored ``config``).
"""

from __future__ import annotations

from dataclasses import dataclass

# "demo": embed_sample's earlier name, in the configurations of earlier records
VOLATILE = ("device", "threads", "mode", "checkpoint", "runs_root", "embed_sample", "demo")
PATH_KEYS = {
    "data": ("dir", "train_path", "dev_path", "test_path"),
    "encoder": ("options", "weights", "model", "preset"),  # preset: a name for published weights (options, weights)
    "cache": ("dir",),
}
NEUTRAL = {"encoder": ("allow_extra_weights",), "cache": ("max_gb",)}
# optional path-valued settings read by a task model: their file's SHA-256 replaces the path in the identity
# (``identity["files_sha256"]``), and they never name a run directory; unset (null) they count as before
CONTENT_KEYS = ("task.model.vectors",)
# keys added after runs were recorded, with the value every earlier run had: at that value a key is
# left out of the identity, so earlier records keep their digests; any other value is a new identity
ADDED_AT_DEFAULT = {
    ("task", "model", "embedding_init"): "normal",
    ("task", "batching"): "token_capped",
    ("task", "model", "dropout_style"): "variational",
    ("task", "model", "lowercase_words"): False,
}


def without_added_defaults(config: dict) -> dict:
    """``config`` (a plain dict) less the ``ADDED_AT_DEFAULT`` keys that hold their default."""
    out = dict(config)
    for path, default in ADDED_AT_DEFAULT.items():
        parents, node = [out], out
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
            parents.append(node)
        if not isinstance(node, dict) or node.get(path[-1], default) != default:
            continue
        node = {k: v for k, v in node.items() if k != path[-1]}
        for depth in range(len(path) - 2, -1, -1):  # copy the branch down to the key, never the caller's dicts
            node = {**parents[depth], path[depth]: node}
        out = node
    return out


def _get(node, key: str, default=None):
    return node.get(key, default) if node is not None else default


def effective_position(config) -> str | None:
    """Where ELMo goes in this run: ``none | input | output | both | probe``."""
    elmo, task = _get(config, "elmo") or {}, _get(config, "task") or {}
    position = _get(elmo, "position")
    return _get(task, "elmo_position") if position == "paper" else position


def uses_encoder(config) -> bool:
    """Whether the run reads contextual layers (ELMo at some position, a probe, or biLM fine-tuning)."""
    name = str(_get(_get(config, "task") or {}, "name", ""))
    return name.startswith("probe_") or _get(config, "mode") == "finetune" or effective_position(config) != "none"


@dataclass(frozen=True)
class ElmoSettings:
    """How one run uses ELMo (§3.2-3.3), read once from its configuration: where the mixes go
    (``position``), whether it reads an encoder's layers at all (``reads_encoder``), and how each mix is
    made (``mix``, ``dropout``, ``layer_norm``, ``l2``). The plan of a run holds one; a trained run's
    is made from its checkpoint's configuration."""

    position: str | None  # none | input | output | both | probe
    reads_encoder: bool
    mix: str  # all | last | average
    dropout: float
    layer_norm: bool
    l2: float

    @classmethod
    def of(cls, config) -> ElmoSettings:
        elmo = _get(config, "elmo") or {}
        return cls(
            position=effective_position(config),
            reads_encoder=uses_encoder(config),
            mix=str(_get(elmo, "mix", "all")),
            dropout=float(_get(elmo, "dropout", 0.0)),
            layer_norm=bool(_get(elmo, "layer_norm", False)),
            l2=float(_get(elmo, "l2", 0.0)),
        )


def keys_of(groups: dict) -> list[str]:
    return [f"{group}.{key}" for group, keys in groups.items() for key in keys]


def run_dir_excludes() -> list[str]:
    """Overrides that do not name a run directory: the task (the directory above it) and every key
    that does not change the result."""
    return [
        "task",
        *[k for k in VOLATILE if k not in ("embed_sample", "demo")],
        *keys_of(PATH_KEYS),
        *keys_of(NEUTRAL),
        *CONTENT_KEYS,
    ]


def evaluate_overrides() -> tuple[str, ...]:
    """What ``mode=evaluate`` takes from its command line over the checkpoint's own settings: the
    data (a test file and how to read it) and where the encoder's files and cache are."""
    return ("data.", *[k for k in keys_of(PATH_KEYS) + keys_of(NEUTRAL) if not k.startswith("data.")])


# Every configuration key, declared in or out of a run's identity (tests/experiments/test_run_settings.py fails on a
# key that is neither, so that a new key is a decision). Out: ``VOLATILE``, ``PATH_KEYS``, ``NEUTRAL``,
# ``CONTENT_KEYS`` (their files' content counts instead of their paths) and the groups below. In: every key
# that can change a result; ``identity.comparable`` adds three conditions: the ``data.hf_*`` keys count
# only when the hub copy is read, ``trainer.equal_updates`` only with ``data.fraction`` < 1, and the
# ``encoder`` group only for a Transformer (a biLM counts by its weights' SHA-256) in a run that reads it.
OUT_OF_IDENTITY_GROUPS = ("embed_sample",)  # mode=embed_sample's settings: no training run reads them
IDENTITY_KEYS = (
    "seed",
    "source",
    # the task: its head and how its data are cut (Peters et al. 2018, appendix A per task)
    "task.name",
    "task.elmo_position",
    "task.batching",
    "task.binary",
    "task.max_answer_length",
    "task.max_tokens_per_batch",
    "task.max_training_sentences",
    "task.phrases_min_tokens",
    *(
        f"task.model.{k}"
        for k in (
            "char_dim",
            "char_filters",
            "char_width",
            "dropout",
            "dropout_style",
            "embedding_init",
            "feature_size",
            "feedforward",
            "ffnn_depth",
            "ffnn_size",
            "freeze_vectors",
            "hidden",
            "layers",
            "lexical_dropout",
            "linear",
            "lowercase_words",
            "max_antecedents",
            "max_span_width",
            "min_word_count",
            "predicate_dim",
            "span_ratio",
            "word_dim",
        )
    ),  # fmt: skip
    # the data: which files (their content is hashed too), how they are read and sampled
    "data.format",
    "data.fraction",
    "data.split_seed",
    "data.train_file",
    "data.dev_file",
    "data.test_file",
    "data.words",
    "data.hf_name",
    "data.hf_revision",
    "data.hf_data_dir",
    "data.hf_split.train",
    "data.hf_split.dev",
    "data.hf_split.test",
    # ELMo's mixes (§3.2-3.3)
    "elmo.position",
    "elmo.mix",
    "elmo.l2",
    "elmo.dropout",
    "elmo.layer_norm",
    # the encoder's reading of the text (a Transformer's; a biLM's state policy and fine-tuning are in its
    # configuration too): how it pools, cuts and batches, and the weights' revision
    "encoder.kind",
    "encoder.state",
    "encoder.warmup_batches",
    "encoder.finetune",
    "encoder.finetune_epochs",
    "encoder.batch_size",
    "encoder.pooling",
    "encoder.max_length",
    "encoder.revision",
    # the cache's number format changes the layers' last bits; whether a cache is used at all changes nothing
    # measurable but is kept, as records have always had it
    "cache.dtype",
    "cache.enabled",
    # the trainer (appendix A's optimizers and schedules)
    *(
        f"trainer.{k}"
        for k in (
            "optimizer",
            "lr",
            "adadelta_rho",
            "batch_size",
            "eval_batch_size",
            "max_epochs",
            "patience",
            "grad_clip",
            "weight_decay",
            "ema",
            "lr_halving",
            "equal_updates",
        )
    ),  # fmt: skip
)


def out_of_identity(key: str) -> bool:
    """Whether a dotted configuration key is declared out of a run's identity."""
    group = key.split(".", 1)[0]
    return (
        key in VOLATILE
        or group in VOLATILE
        or group in OUT_OF_IDENTITY_GROUPS
        or key in keys_of(PATH_KEYS)
        or key in keys_of(NEUTRAL)
        or key in CONTENT_KEYS
    )
