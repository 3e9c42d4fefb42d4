"""What the encoder layers hold (Peters et al. 2018 §5.3): the probes with nothing to train. The WSD probe
(Table 5) is 1-nearest-neighbour on sense centroids per layer, the paper's method; the POS probe
(Table 6), a linear classifier per layer, is a task trained by the trainer (``tasks/probe_pos``)."""
