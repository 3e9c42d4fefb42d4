"""What Peters et al. (2018) report for qa (``tasks.common.paper_reference``)."""

from ..common.paper_reference import PaperReference

REFERENCE = PaperReference(
    sweeps=("table2", "table3", "encoders"),
    dataset="SQuAD",
    data_here="SQuAD v1.1",
    row=1,
    table1=(81.1, 85.8),
    data_note=(
        "SQuAD: training questions from 32 articles of the official dev set (its train file is not here), dev 1,347 "
        "questions of 6 other articles; paper: the 87,599 training questions and the test set"
    ),
    table2={"baseline": 80.8, "last_only": 84.7, "all_lambda1": 85.0, "all_lambda0.001": 85.2},
    table3={"input": 85.1, "both": 85.6, "output": 84.8},
    table7="99.1 → 43.5 (contexts), 158.2 → 52.0 (questions)",
    settings=(
        ("ELMo location", "both", "elmo_position", "A.4, Table 3"),
        ("λ", 0.0, "elmo.l2", "A.4"),
        ("layer norm", False, "elmo.layer_norm", "A.4"),
        ("ELMo dropout (paper silent; original code)", 0.5, "elmo.dropout", "document-qa"),
        ("GRU size", 90, "task.model.hidden", "A.4"),
        ("linear layer size", 180, "task.model.linear", "A.4"),
        ("variational dropout", 0.2, "task.model.dropout", "A.4"),
        ("optimizer", "adadelta", "trainer.optimizer", "A.4"),
        ("learning rate (paper silent; original code)", 1.0, "trainer.lr", "document-qa"),
        ("batch size", 45, "trainer.batch_size", "A.4"),
        (
            "batches (paper silent; original code)",
            "clustered",
            "task.batching",
            "document-qa: ClusteredBatcher(45, ContextLenBucketedKey(3))",
        ),
        ("weight EMA at test time", 0.999, "trainer.ema", "A.4; decay from document-qa"),
        ("maximum answer length", 17, "task.max_answer_length", "A.4"),
        (
            "biLM fine-tuned on the task's training text, 1 epoch (§3.4)",
            True,
            "encoder.finetune",
            "document-qa (the paper's SQuAD code) reads a biLM fine-tuned on SQuAD; Table 7",
        ),
        ("biLM fine-tuning epochs", 1, "encoder.finetune_epochs", "A.1"),
        (
            "pretrained word vectors frozen (the suite's word2vec vectors stand in)",
            True,
            "task.model.freeze_vectors",
            "A.4: GloVe 840B 300-d, frozen",
        ),
        ("word embedding size (pretrained vectors)", 300, "task.model.word_dim", "A.4"),
        ("ELMo mix (softmax weights s_j, γ)", "all", "elmo.mix", "§3.2 eq. 1"),
        (
            "word and char embedding init (words without a pretrained vector)",
            "xavier_uniform",
            "task.model.embedding_init",
            "allennlp Embedding (bidaf_elmo); document-qa: GloVe words, chars U(±0.05)",
        ),
    ),
    training_set={
        "name": "SQuAD v1.1 train",
        "examples": 87599,
        "texts": {"context": 18896, "question": 87599},
        "measured": {"context": ["context_tokens", "context_row"], "question": ["question_tokens", None]},
        "source": "87,599 questions (train-v1.1.json, as the Hugging Face card rajpurkar/squad lists); 18,896 "
        "paragraphs in that file; token lengths of contexts and questions measured locally",
    },
)
