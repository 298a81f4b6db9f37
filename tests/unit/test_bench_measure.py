"""The benchmark's timing helpers: the interleaved timing (a paired callable gets its partner's
message, and the two take turns at running first), and the long-request bench's inputs."""

from __future__ import annotations

import pytest

from benchmarks.long_requests import LONG_CHARS, joined, kinds
from benchmarks.measure import interleaved


def test_a_paired_call_gets_its_partners_message_and_the_others_their_own() -> None:
    seen: dict[str, list[str]] = {"route": [], "bare": [], "floor": []}
    calls = {name: (lambda text, name=name: seen[name].append(text)) for name in seen}
    inputs = [f"request {i}" for i in range(20)]
    figures = interleaved(calls, inputs, warmup=1, same={"bare": "route"})
    assert seen["bare"] == seen["route"] == inputs[0::2]
    assert seen["floor"] == inputs[1::2]
    assert set(figures) == {"route", "bare", "floor"}


def test_a_paired_call_runs_after_its_partner_one_round_and_before_it_the_next() -> None:
    order: list[str] = []
    calls = {name: (lambda text, name=name: order.append(name))
             for name in ("route", "bare", "grpc", "floor")}
    interleaved(calls, [f"request {i}" for i in range(9)], warmup=0, same={"bare": "route"})
    rounds = [order[i:i + 4] for i in range(0, len(order), 4)]
    assert rounds == [["route", "bare", "grpc", "floor"], ["bare", "route", "grpc", "floor"],
                      ["route", "bare", "grpc", "floor"]]


# benchmarks.long_requests: the set's kinds of request, and 2,000-character tasks made of two
# long ones cut at a word

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
