"""What Peters et al. (2018) report for ner (``tasks.common.paper_reference``)."""

from ..common.paper_reference import PaperReference

REFERENCE = PaperReference(
    sweeps=("encoders",),
    dataset="NER (CoNLL-2003)",
    data_here="CoNLL-2003 NER",
    row=4,
    table1=(90.15, 92.22),
    table7="103.2 → 46.3",
    settings=(
        ("ELMo location", "input", "elmo_position", "§3.3, A.7"),
        ("λ (ScalarMix regularizer)", 0.1, "elmo.l2", "A.7"),
        ("BiLSTM sizes (bottom, top)", [200, 100], "task.model.hidden", "A.7"),
        ("char CNN filters", 128, "task.model.char_filters", "A.7"),
        ("char CNN width", 3, "task.model.char_width", "A.7"),
        ("char embedding size", 16, "task.model.char_dim", "A.7"),
        ("word embedding size (Senna, not available offline)", 50, "task.model.word_dim", "A.7"),
        ("optimizer", "adam", "trainer.optimizer", "A.7"),
        ("learning rate (constant)", 0.001, "trainer.lr", "A.7"),
        ("gradient norm clipping", 5.0, "trainer.grad_clip", "A.7"),
        (
            "pretrained word vectors frozen (the suite's word2vec vectors stand in)",
            False,
            "task.model.freeze_vectors",
            "A.7: Senna 50-d, fine-tuned",
        ),
        (
            "dropout drawn per element, not per sequence (paper silent)",
            "standard",
            "task.model.dropout_style",
            "allennlp crf_tagger (torch Dropout); conformance.md, NER: closer to it than variational",
        ),
        (
            "CRF's BIOUL constraints in Viterbi only, not in the likelihood (paper silent)",
            "decoding",
            "task.model.crf_constraints",
            "allennlp crf_tagger (constrain_crf_decoding); conformance.md, NER: the reference's curve",
        ),
        ("ELMo mix (softmax weights s_j, γ)", "all", "elmo.mix", "§3.2 eq. 1"),
        (
            "biLM fine-tuned on the task's training text, 1 epoch (§3.4)",
            False,
            "encoder.finetune",
            "A.1 and Table 7 give NER's fine-tuned perplexity but not its use in Table 1; allennlp-models "
            "ner_elmo.jsonnet reads the original weights",
        ),
        (
            "biLM's LSTM states carried from batch to batch (paper silent)",
            "stateful",
            "encoder.state",
            "AllenNLP Elmo (_ElmoBiLm), bilm-tf; conformance.md, NER: the reference's curve",
        ),
        ("ELMo dropout (paper silent)", 0.0, "elmo.dropout", "allennlp-models ner_elmo.jsonnet"),
        ("layer norm (paper silent)", False, "elmo.layer_norm", "allennlp-models ner_elmo.jsonnet"),
        (
            "word and char embedding init (words without a pretrained vector)",
            "xavier_uniform",
            "task.model.embedding_init",
            "allennlp Embedding (ner_elmo: words and chars); paper: Senna",
        ),
    ),
    training_set={"name": "CoNLL-2003 train", "local": True},
)
