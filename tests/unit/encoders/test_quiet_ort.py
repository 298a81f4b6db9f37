"""onnxruntime's advice for image models is dropped while a quantization runs, and nothing
else: its other warnings, and the same advice outside, still reach the log."""

from __future__ import annotations

import logging

import pytest

from router.encoders.quiet_ort import no_preprocessing_advice

ADVICE = ("Please consider pre-processing before quantization. See "
          "https://github.com/microsoft/onnxruntime-inference-examples/")


def test_only_the_advice_is_dropped_and_only_inside(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    with no_preprocessing_advice():
        logging.warning(ADVICE)  # as onnxruntime.quantization.quantize logs it
        logging.warning("Please consider to run pre-processing before quantization. Refer")
        logging.warning("some other quantizer warning")
    logging.warning(ADVICE)
    assert [r.getMessage() for r in caplog.records] == ["some other quantizer warning", ADVICE]
