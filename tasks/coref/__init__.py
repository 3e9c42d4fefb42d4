"""Coreference resolution (Peters et al. 2018 §4, Table 1; appendix A.6): the Lee et al. (2017)
end-to-end model on CoNLL-2012 / LitBank."""
