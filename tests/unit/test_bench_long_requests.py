"""The long-request bench's inputs: the set's kinds of request, and 2,000-character tasks made
of two long ones cut at a word."""

from __future__ import annotations

import pytest

from benchmarks.long_requests import LONG_CHARS, joined, kinds


def test_two_tasks_joined_and_cut_back_to_a_word() -> None:
    texts = ["alpha " * 300, "beta " * 300, "gamma words", "delta", "left over"]
    out = joined(texts)
    assert len(out) == 2 and all(len(t) <= LONG_CHARS for t in out)
    assert out[0].startswith("alpha") and out[0].endswith("beta")
    assert out[1] == "gamma words delta"  # short enough: not cut; no text in two pairs


def test_the_kinds_come_from_the_tags() -> None:
    rows = [{"query": "a b", "tags": ["short"]}, {"query": "long one", "tags": ["long"]},
            {"query": "long two", "tags": ["long", "multi"]}, {"query": "hi", "tags": []}]
    found = kinds(rows)
    assert found["one-line"] == ["a b"] and found["long task"] == ["long one", "long two"]
    assert found[f"{LONG_CHARS:,}-character task"] == ["long one long two"]
    with pytest.raises(SystemExit, match="tagged short and long"):
        kinds(rows[:2])
