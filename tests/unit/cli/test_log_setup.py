"""The command's log set-up filters repeats on the handler it makes, never on handlers a host
(or a test runner) installed before it: theirs keep every record."""

from __future__ import annotations

import logging

import pytest

from router.cli import main
from router.cli.logs import RepeatFilter


def test_a_hosts_handler_is_left_unfiltered(capsys: pytest.CaptureFixture[str]) -> None:
    root = logging.getLogger()
    host = logging.Handler()
    root.addHandler(host)
    try:
        assert main(["config", "--print"]) == 0
        assert not any(isinstance(f, RepeatFilter) for f in host.filters)
        assert not any(isinstance(f, RepeatFilter) for h in root.handlers for f in h.filters)
    finally:
        root.removeHandler(host)
    capsys.readouterr()
