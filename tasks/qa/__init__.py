"""Extractive question answering on SQuAD v1.1 (Peters et al. 2018 §4; appendix A.4)."""
