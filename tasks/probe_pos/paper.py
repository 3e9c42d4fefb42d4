"""What Peters et al. (2018) report for probe_pos (``tasks.common.paper_reference``)."""

from ..common.paper_reference import PaperReference

REFERENCE = PaperReference(
    dataset="POS tagging (WSJ), Table 6",
    data_here="PTB WSJ sample",
    probe={"1": 97.3, "2": 96.8, "note": "paper: full WSJ; here: PTB WSJ 10% sample, dev split"},
)
