"""Semantic role labeling (Peters et al. 2018 §4 "Semantic role labeling"; appendix A.5; He et al. 2017)."""
