"""What Peters et al. (2018) report for sst (``tasks.common.paper_reference``)."""

from ..common.paper_reference import PaperReference

REFERENCE = PaperReference(
    sweeps=("encoders",),
    dataset="SST-5",
    data_here="SST-5",
    row=5,
    table1=(51.4, 54.7),
    table7="131.5 → 78.6",
    settings=(
        ("ELMo location", "both", "elmo_position", "A.8"),
        ("λ", 0.001, "elmo.l2", "A.8"),
        ("BiLSTM size", 300, "task.model.hidden", "A.8"),
        ("train on phrases of at least", 4, "task.phrases_min_tokens", "A.8"),
        ("optimizer", "adam", "trainer.optimizer", "A.8"),
        ("learning rate", 0.0001, "trainer.lr", "A.8"),
        (
            "pretrained word vectors frozen (the suite's word2vec vectors stand in)",
            True,
            "task.model.freeze_vectors",
            "A.8: GloVe 840B 300-d, frozen (BCN)",
        ),
        ("word embedding size (pretrained vectors)", 300, "task.model.word_dim", "A.8"),
        ("ELMo mix (softmax weights s_j, γ)", "all", "elmo.mix", "§3.2 eq. 1"),
        (
            "ELMo dropout (paper silent)",
            0.0,
            "elmo.dropout",
            "allennlp-models biattentive_classification_network_elmo.jsonnet",
        ),
        (
            "layer norm (paper silent)",
            False,
            "elmo.layer_norm",
            "allennlp-models biattentive_classification_network_elmo.jsonnet",
        ),
        (
            "biLM fine-tuned on the task's training text, 1 epoch (§3.4)",
            False,
            "encoder.finetune",
            "A.1: SST dev accuracy about the same with or without; allennlp-models "
            "biattentive_classification_network_elmo.jsonnet reads the original weights",
        ),
        (
            "word and char embedding init (words without a pretrained vector)",
            "xavier_uniform",
            "task.model.embedding_init",
            "allennlp Embedding; paper: GloVe 840B",
        ),
    ),
    training_set={"name": "SST-5 train, phrases of >= 4 tokens", "local": True},
)
