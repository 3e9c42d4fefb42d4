"""What Peters et al. (2018) report for srl (``tasks.common.paper_reference``)."""

from ..common.paper_reference import PaperReference

REFERENCE = PaperReference(
    sweeps=("table2", "table3", "sample_efficiency", "encoders"),
    dataset="SRL (CoNLL-2012)",
    data_here="SRL (Universal PropBank)",
    row=3,
    table1=(81.4, 84.6),
    data_note="Universal PropBank (English Web Treebank) stands in for CoNLL-2012",
    table2={"baseline": 81.6, "last_only": 84.1, "all_lambda1": 84.6, "all_lambda0.001": 84.8},
    table3={"input": 84.7, "both": 84.3, "output": 80.9},
    table7="92.3 → — (not fine-tuned)",
    settings=(
        ("ELMo location", "input", "elmo_position", "Table 3"),
        ("λ (paper silent; Table 2's best)", 0.001, "elmo.l2", "Table 2"),
        ("BiLSTM layers (interleaved)", 8, "task.model.layers", "A.5"),
        ("BiLSTM size", 300, "task.model.hidden", "A.5"),
        ("word embedding size", 100, "task.model.word_dim", "A.5"),
        ("predicate indicator embedding size", 100, "task.model.predicate_dim", "A.5"),
        ("recurrent dropout", 0.1, "task.model.dropout", "A.5"),
        ("LSTM and dense layer init", "orthogonal", "task.model.lstm_init", "A.5 (He et al. 2017)"),
        ("optimizer", "adadelta", "trainer.optimizer", "A.5"),
        ("Adadelta ρ", 0.95, "trainer.adadelta_rho", "A.5"),
        ("learning rate", 1.0, "trainer.lr", "A.5"),
        ("gradient clipping", 1.0, "trainer.grad_clip", "A.5"),
        ("epochs / patience", [500, 200], ("trainer.max_epochs", "trainer.patience"), "A.5"),
        (
            "pretrained word vectors frozen (the suite's word2vec vectors stand in)",
            False,
            "task.model.freeze_vectors",
            "A.5: GloVe 100-d, fine-tuned",
        ),
        ("ELMo mix (softmax weights s_j, γ)", "all", "elmo.mix", "§3.2 eq. 1"),
        ("ELMo dropout (paper silent)", 0.1, "elmo.dropout", "allennlp-models srl_elmo.jsonnet"),
        ("layer norm (paper silent)", False, "elmo.layer_norm", "allennlp-models srl_elmo.jsonnet"),
        (
            "biLM fine-tuned on the task's training text, 1 epoch (§3.4)",
            False,
            "encoder.finetune",
            "Table 7: CoNLL 2012 not fine-tuned",
        ),
        (
            "word and char embedding init (words without a pretrained vector)",
            "xavier_uniform",
            "task.model.embedding_init",
            "allennlp Embedding; paper: GloVe 100d",
        ),
    ),
    training_set={
        "name": "CoNLL-2012 (OntoNotes 5.0) train, SRL",
        "texts": {"sentence": 75187},
        "sentence_lengths_from": "srl",
        "source": "75,187 training sentences (CoNLL-2012 English train, as commonly cited; not verified here); "
        "tokens and predicates per sentence measured on the local stand-in (Universal PropBank EWT)",
    },
)
