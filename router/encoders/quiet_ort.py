"""onnxruntime's quantizer ends with advice for image models ("Please consider pre-processing
before quantization", on the root logger) that has nothing to say to a text encoder's user:
``no_preprocessing_advice`` drops that one record while a quantization runs, and nothing else."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

ADVICE = ("Please consider pre-processing before quantization",
          "Please consider to run pre-processing before quantization")


def _not_advice(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith(ADVICE)


@contextmanager
def no_preprocessing_advice() -> Iterator[None]:
    """While inside, the root logger drops onnxruntime's pre-processing advice."""
    root = logging.getLogger()
    root.addFilter(_not_advice)
    try:
        yield
    finally:
        root.removeFilter(_not_advice)
