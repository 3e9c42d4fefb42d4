"""Textual entailment: SNLI / MultiNLI / SICK (Peters et al. 2018 §4; appendix A.3, ESIM)."""
