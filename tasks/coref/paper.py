"""What Peters et al. (2018) report for coref (``tasks.common.paper_reference``)."""

from ..common.paper_reference import PaperReference

REFERENCE = PaperReference(
    sweeps=("table3",),  # an extra row of Table 3 (the paper names input only best, without numbers)
    dataset="Coref (CoNLL-2012; LitBank here)",
    data_here="Coref (LitBank)",
    row=6,
    table1=(67.2, 70.4),
    data_note="LitBank (80 training documents of fiction) stands in for CoNLL-2012 (2,802 documents)",
    settings=(
        ("ELMo location", "input", "elmo_position", "A.6"),
        ("λ", 0.0, "elmo.l2", "A.6"),
        ("layer norm", False, "elmo.layer_norm", "A.6"),
        (
            "biLM fine-tuned on the task's training text, 1 epoch (§3.4)",
            False,
            "encoder.finetune",
            "Table 7: CoNLL 2012 not fine-tuned",
        ),
        ("ELMo dropout", 0.5, "elmo.dropout", "A.6"),
        ("BiLSTM size", 200, "task.model.hidden", "A.6; e2e-coref best"),
        ("feed-forward size", 150, "task.model.ffnn_size", "e2e-coref best"),
        ("feed-forward depth", 2, "task.model.ffnn_depth", "e2e-coref best"),
        ("feature size", 20, "task.model.feature_size", "e2e-coref best"),
        ("maximum span width", 10, "task.model.max_span_width", "e2e-coref best"),
        ("spans kept per word", 0.4, "task.model.span_ratio", "e2e-coref best"),
        ("antecedents per span", 250, "task.model.max_antecedents", "e2e-coref best"),
        ("lexical dropout", 0.5, "task.model.lexical_dropout", "e2e-coref best"),
        ("dropout", 0.2, "task.model.dropout", "e2e-coref best"),
        (
            "start: Glorot feed-forward, width and distance embeddings; orthogonal LSTM (Xavier-normal here)",
            "xavier",
            "task.model.weight_init",
            "e2e-coref util.py, coref_model.py (TF's default Glorot; block-orthonormal LSTM)",
        ),
        ("char embedding size", 8, "task.model.char_dim", "e2e-coref best"),
        (
            "char CNN filters (widths 3, 4, 5 x 50 in the original; one width here)",
            50,
            "task.model.char_filters",
            "e2e-coref best",
        ),
        ("training sentences per document", 50, "task.max_training_sentences", "e2e-coref best"),
        ("optimizer", "adam", "trainer.optimizer", "e2e-coref best"),
        (
            "learning rate (the original decays it x0.999 every 100 steps; not implemented here)",
            0.001,
            "trainer.lr",
            "e2e-coref best",
        ),
        ("gradient norm clipping", 5.0, "trainer.grad_clip", "e2e-coref best"),
        (
            "pretrained word vectors frozen (the suite's word2vec vectors stand in)",
            True,
            "task.model.freeze_vectors",
            "A.6: GloVe 840B 300-d and Turian 50-d, fixed (e2e-coref)",
        ),
        ("ELMo mix (softmax weights s_j, γ)", "all", "elmo.mix", "§3.2 eq. 1; e2e-coref lm_scores"),
        (
            "word and char embedding init (words without a pretrained vector)",
            "xavier_uniform",
            "task.model.embedding_init",
            "e2e-coref chars: TensorFlow default glorot_uniform; words: GloVe + Turian",
        ),
    ),
    training_set={
        "name": "CoNLL-2012 (OntoNotes 5.0) train, coreference",
        "examples": 2802,
        "texts": {"sentence": 75187},
        "sentence_lengths_from": "srl",
        "source": "2,802 training documents (e.g. MEIRa's ontonotes.yaml); 75,187 sentences as for SRL (not "
        "verified here), at the SRL stand-in's tokens per sentence; speed per update measured on LitBank "
        "documents (about 2,000 tokens each, longer than OntoNotes' average)",
    },
)
