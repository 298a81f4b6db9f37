"""The benchmark's interleaved timing: a paired callable gets its partner's message, and the
two take turns at running first."""

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


def test_a_paired_call_runs_after_its_partner_one_round_and_before_it_the_next() -> None:
    order: list[str] = []
    calls = {name: (lambda text, name=name: order.append(name))
             for name in ("route", "bare", "grpc", "floor")}
    interleaved(calls, [f"request {i}" for i in range(9)], warmup=0, same={"bare": "route"})
    rounds = [order[i:i + 4] for i in range(0, len(order), 4)]
    assert rounds == [["route", "bare", "grpc", "floor"], ["bare", "route", "grpc", "floor"],
                      ["route", "bare", "grpc", "floor"]]
