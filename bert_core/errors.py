"""Errors of the Transformer side: a model directory or hub name that cannot be loaded, or a
model that cannot do what the suite asks (no fast tokenizer, no hidden states). Derives from the
suite's ``WeightsError`` so entry points report it as one line like every other model-file error."""
from elmo_core.errors import WeightsError


class EncoderError(WeightsError):
    pass
