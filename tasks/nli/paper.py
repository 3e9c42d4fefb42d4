"""What Peters et al. (2018) report for nli (``tasks.common.paper_reference``)."""

from ..common.paper_reference import PaperReference

REFERENCE = PaperReference(
    sweeps=("table2", "table3", "sample_efficiency", "encoders"),
    dataset="SNLI",
    data_here="SICK",
    row=2,
    table1=(88.0, 88.7),
    data_note="SICK (4,439 training pairs) stands in for SNLI (550,152)",
    table2={"baseline": 88.1, "last_only": 89.1, "all_lambda1": 89.3, "all_lambda0.001": 89.5},
    table3={"input": 88.9, "both": 89.5, "output": 88.7},
    table7="72.1 → 16.8 (SNLI)",
    settings=(
        ("ELMo location", "both", "elmo_position", "A.3, Table 3"),
        ("λ", 0.001, "elmo.l2", "A.3"),
        ("layer norm", True, "elmo.layer_norm", "A.3"),
        ("LSTM and feed-forward size", 300, "task.model.hidden", "A.3"),
        ("dropout", 0.5, "task.model.dropout", "A.3"),
        ("optimizer", "adam", "trainer.optimizer", "A.3"),
        ("learning rate", 0.0004, "trainer.lr", "A.3"),
        ("halve learning rate when dev does not improve", True, "trainer.lr_halving", "A.3"),
        (
            "updates without a better dev score before a halving (one SNLI epoch)",
            17193,
            "trainer.lr_halving_updates",
            "A.3: halved per SNLI epoch (550,152 pairs, 32 a batch); SICK's epoch is 139 updates",
        ),
        ("gradient norm clipping", 5.0, "trainer.grad_clip", "A.3"),
        ("batch size", 32, "trainer.batch_size", "A.3"),
        ("ℓ2 on weight matrices", 0.0001, "trainer.weight_decay", "A.3"),
        (
            "pretrained word vectors frozen (the suite's word2vec vectors stand in)",
            True,
            "task.model.freeze_vectors",
            "A.3: GloVe 300-d, frozen",
        ),
        ("word embedding size (pretrained vectors)", 300, "task.model.word_dim", "A.3"),
        ("ELMo mix (softmax weights s_j, γ)", "all", "elmo.mix", "§3.2 eq. 1"),
        ("ELMo dropout (paper silent)", 0.0, "elmo.dropout", "allennlp-models esim_elmo.jsonnet"),
        (
            "biLM fine-tuned on the task's training text, 1 epoch (§3.4)",
            True,
            "encoder.finetune",
            "A.1: SNLI's best model used the fine-tuned biLM (dev 88.9 → 89.5); Table 7",
        ),
        ("biLM fine-tuning epochs", 1, "encoder.finetune_epochs", "A.1"),
        (
            "word and char embedding init (words without a pretrained vector)",
            "xavier_uniform",
            "task.model.embedding_init",
            "allennlp Embedding; paper: GloVe 840B",
        ),
    ),
    training_set={
        "name": "SNLI 1.0 train",
        "examples": 550152,
        "texts": {"premise": 183384, "hypothesis": 550152},
        "lengths": {"premise": 14.1, "hypothesis": 8.3},
        "source": "550,152 pairs and mean lengths 14.1 / 8.3 tokens (Bowman et al. 2015, Tables 1-2); each premise "
        "was given one hypothesis per label, so about a third of the pairs have a distinct premise (an "
        "assumption); every hypothesis taken as distinct",
    },
)
