"""The suite's own exception types. Library code (``elmo_core``, ``bert_core``, ``tasks``) raises these with a
message that names the file and line, or the configuration key, at fault; only the entry points
(``run.py`` and the ``python -m`` commands) turn them into one-line messages and exit codes.

* ``ConfigError``: an impossible or inconsistent setting (names the key).
* ``DataError``: malformed or unusable input data (names the file and line, or the example).
* ``WeightsError``: a biLM, checkpoint or model file that does not match what it claims to be.
* ``EncoderError``: a Transformer directory or hub name that cannot be loaded, or a model that cannot
  do what the suite asks (no fast tokenizer, no hidden states).

All derive from ``ValueError`` as well, so callers that caught ``ValueError`` still do.
"""
from __future__ import annotations


class SuiteError(ValueError):
    """Base of every error the suite reports to its user as one line."""


class ConfigError(SuiteError):
    pass


class DataError(SuiteError):
    pass


class WeightsError(SuiteError):
    pass


class EncoderError(WeightsError):
    pass
