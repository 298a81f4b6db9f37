"""The benchmark's interleaved timing: a paired callable gets the message its partner just had."""

from __future__ import annotations

from benchmarks.measure import interleaved


def test_a_paired_call_gets_its_partners_message_and_the_others_their_own() -> None:
    seen: dict[str, list[str]] = {"route": [], "bare": [], "floor": []}
    calls = {name: (lambda text, name=name: seen[name].append(text)) for name in seen}
    inputs = [f"request {i}" for i in range(20)]
    figures = interleaved(calls, inputs, warmup=1, same={"bare": "route"})
    assert seen["bare"] == seen["route"] == inputs[0::2]
    assert seen["floor"] == inputs[1::2]
    assert set(figures) == {"route", "bare", "floor"}
