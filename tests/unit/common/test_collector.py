"""The cyclic collector paused for a block, resumed as it was."""

from __future__ import annotations

import gc

import pytest

from router.common.collector import paused


def test_the_collector_is_paused_in_the_block_and_resumed_after_it() -> None:
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block leaves it to the outer one
    assert gc.isenabled()
    with pytest.raises(RuntimeError), paused():
        raise RuntimeError("stops the build")
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    try:
        with paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
