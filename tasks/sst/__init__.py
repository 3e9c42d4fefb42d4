"""Stanford Sentiment Treebank, 5-class (SST-5) and binary (Peters et al. 2018 §4; appendix A.8)."""
