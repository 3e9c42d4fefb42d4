"""Named entity recognition on CoNLL-2003 (Peters et al. 2018 §4, Table 1; appendix A.7)."""
