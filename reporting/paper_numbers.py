"""Published numbers of Peters et al. (2018), arXiv v2 (NAACL), as listed in
../shared/reference/elmo_paper_facts.md. Table 1 is on the test sets; Tables 2 and 3 on dev."""

# metric name in our results.json for each task, and the paper's dataset for it
TASKS = {
    "qa": {"metric": "f1", "paper_dataset": "SQuAD"},
    "nli": {"metric": "accuracy", "paper_dataset": "SNLI"},
    "srl": {"metric": "f1", "paper_dataset": "SRL (CoNLL-2012)"},
    "ner": {"metric": "f1", "paper_dataset": "NER (CoNLL-2003)"},
    "sst": {"metric": "accuracy", "paper_dataset": "SST-5"},
    "coref": {"metric": "conll_f1", "paper_dataset": "Coref (CoNLL-2012; LitBank here)"},
}

OUR_DATA = {  # the data each task is run on here, as figures and tables name it
    "qa": "SQuAD v1.1",
    "nli": "SICK",
    "srl": "SRL (Universal PropBank)",
    "ner": "CoNLL-2003 NER",
    "sst": "SST-5",
    "coref": "Coref (LitBank)",
}

DATA_NOTES = {  # where a task's data here is not the paper's (../shared/README.md), as Table 1's rows say
    "qa": "SQuAD: training questions from 32 articles of the official dev set (its train file is not here), "
    "dev 1,347 questions of 6 other articles; paper: the 87,599 training questions and the test set",
    "nli": "SICK (4,439 training pairs) stands in for SNLI (550,152)",
    "srl": "Universal PropBank (English Web Treebank) stands in for CoNLL-2012",
    "coref": "LitBank (80 training documents of fiction) stands in for CoNLL-2012 (2,802 documents)",
}

TABLE1 = {  # test: (baseline, ELMo + baseline)
    "qa": (81.1, 85.8),
    "nli": (88.0, 88.7),
    "srl": (81.4, 84.6),
    "ner": (90.15, 92.22),
    "sst": (51.4, 54.7),
    "coref": (67.2, 70.4),
}

TABLE2 = {  # dev: baseline, last only, all λ=1, all λ=0.001
    "qa": {"baseline": 80.8, "last_only": 84.7, "all_lambda1": 85.0, "all_lambda0.001": 85.2},
    "nli": {"baseline": 88.1, "last_only": 89.1, "all_lambda1": 89.3, "all_lambda0.001": 89.5},
    "srl": {"baseline": 81.6, "last_only": 84.1, "all_lambda1": 84.6, "all_lambda0.001": 84.8},
}

TABLE3 = {  # dev: input only, input and output, output only
    "qa": {"input": 85.1, "both": 85.6, "output": 84.8},
    "nli": {"input": 88.9, "both": 89.5, "output": 88.7},
    "srl": {"input": 84.7, "both": 84.3, "output": 80.9},
}

PROBES = {  # Table 6 (POS, WSJ test accuracy) and Table 5 (WSD, all-words F1): biLM layer 1, layer 2
    "probe_pos": {"1": 97.3, "2": 96.8, "note": "paper: full WSJ; here: PTB WSJ 10% sample, dev split"},
    "probe_wsd": {
        "1": 67.4,
        "2": 69.0,
        "most_frequent_sense": 65.9,
        "note": "paper: SemCor + all-words F1; here: SENSEVAL-2 lexical "
        "sample (4 words), 80/20 split, accuracy; most frequent sense: paper WordNet 1st sense, "
        "here the most frequent training sense",
    },
}

TABLE7 = {  # dev perplexity of the biLM (average of the directions) before -> after 1 epoch on the task's text
    "nli": "72.1 → 16.8 (SNLI)",
    "srl": "92.3 → — (not fine-tuned)",
    "ner": "103.2 → 46.3",
    "qa": "99.1 → 43.5 (contexts), 158.2 → 52.0 (questions)",
    "sst": "131.5 → 78.6",
}
