"""``skill-router eval --sessions N --turns T``: what a conversation's catalogs cost under the
model APIs' prompt caches (``router.evaluation.cost``), on sessions drawn from a labelled set.

Three kinds of session, ``N`` of each, ``T`` turns: one intent (every turn wants one skill, its
requests in turn), two intents (the first half wants one skill, the rest another) and a new
intent each turn. Every turn is routed through the product with the session's earlier messages
as history. Per kind: how often ``catalog_text`` changed from the turn before, the mean input
cost of a session for each layout under Anthropic's and OpenAI's cache rates, and the share of
turns whose wanted skill was shown on that turn and among everything shown so far; and the
checks the blocks promise (``stable_text`` the same on every turn, no reveal naming a skill
already shown, every retrieved skill revealed on that turn or before).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from router.evaluation.cost import ANTHROPIC, LAYOUTS, OPENAI, Rates, Turn, input_cost
from router.evaluation.metrics import Labelled
from router.routing.model import Reason, RouteQuery

if TYPE_CHECKING:
    from router.engine import Engine

KINDS = ("one intent", "two intents", "new intent each turn")
APIS: dict[str, Rates] = {"anthropic": ANTHROPIC, "openai": OPENAI}


@dataclass(frozen=True)
class Planned:
    kind: str
    turns: tuple[tuple[str, str], ...]  # (message, the skill it wants)


def plan(requests: Sequence[Labelled], sessions: int, turns: int, seed: int) -> list[Planned]:
    """``sessions`` sessions of each kind, ``turns`` turns each, drawn from ``requests`` (those
    with an expected skill) with ``seed``."""
    if sessions < 1 or turns < 1:
        raise ValueError("--sessions and --turns must be at least 1")
    rng = random.Random(seed)
    labelled = [r for r in requests if r.expected]
    if not labelled:
        raise ValueError("no request of the set expects a skill: nothing to draw sessions from")
    asking: dict[str, list[str]] = defaultdict(list)
    for r in labelled:
        asking[r.expected[0]].append(r.query)
    several = sorted(s for s in asking if len(asking[s]) >= 2)  # intents asked more ways
    skills = several if len(several) >= 2 else sorted(asking)

    def intent(skill: str, count: int) -> list[tuple[str, str]]:
        queries = rng.sample(asking[skill], len(asking[skill]))
        return [(queries[i % len(queries)], skill) for i in range(count)]

    out = []
    for _ in range(sessions):
        out.append(Planned(KINDS[0], tuple(intent(rng.choice(skills), turns))))
        first, second = rng.sample(skills, 2) if len(skills) > 1 else (skills[0], skills[0])
        half = (turns + 1) // 2
        out.append(Planned(KINDS[1], tuple(intent(first, half) + intent(second, turns - half))))
        picked = rng.sample(labelled, min(turns, len(labelled)))
        out.append(Planned(KINDS[2], tuple((r.query, r.expected[0]) for r in picked)))
    return out


@dataclass
class Tally:
    """What one kind's sessions came to."""

    sessions: int = 0
    turns: int = 0
    changed: int = 0  # turns after a session's first whose catalog_text differed
    later_turns: int = 0
    cost: dict[str, float] = field(default_factory=dict)  # "api layout" -> summed cost
    wanted_now: int = 0
    wanted_so_far: int = 0
    stable_moved: int = 0  # sessions whose stable_text was not the same on every turn
    repeated: int = 0  # reveals naming a skill the session was already shown
    unrevealed: int = 0  # retrieved skills in no reveal of that turn or before

    def mean(self, api: str, layout: str) -> float:
        return self.cost.get(f"{api} {layout}", 0.0) / max(self.sessions, 1)


def play(engine: Engine, planned: Planned, session_id: str, tally: Tally) -> None:
    """Route ``planned``'s turns as one session and add what they cost to ``tally``."""
    turns: list[Turn] = []
    shown: set[str] = set()
    history: list[str] = []
    for message, wanted in planned.turns:
        result = engine.route(RouteQuery(message=message, history=tuple(history[-8:]),
                                         session_id=session_id))
        fresh = [s.name for s in result.skills if s.first_shown]
        tally.repeated += sum(1 for n in fresh if n in shown)
        shown.update(result.always_on, fresh)
        tally.unrevealed += sum(1 for s in result.skills
                                if s.reason is Reason.RETRIEVED and s.name not in shown)
        tally.wanted_now += wanted in {s.name for s in result.skills}
        tally.wanted_so_far += wanted in shown
        if turns:
            tally.later_turns += 1
            tally.changed += result.catalog_text != turns[-1].catalog_text
        turns.append(Turn(message, result.catalog_text, result.reveal_text, result.stable_text,
                          result.full_catalog_chars))
        history.append(message)
    tally.sessions += 1
    tally.turns += len(turns)
    tally.stable_moved += len({t.stable_text for t in turns}) > 1
    for api, rates in APIS.items():
        for layout in LAYOUTS:
            key = f"{api} {layout}"
            tally.cost[key] = tally.cost.get(key, 0.0) + input_cost(turns, layout, rates)


def run(engine: Engine, requests: Sequence[Labelled], sessions: int, turns: int,
        seed: int = 0) -> dict[str, Tally]:
    """Each kind's tally over ``sessions`` sessions of ``turns`` turns."""
    tallies = {kind: Tally() for kind in KINDS}
    for n, planned in enumerate(plan(requests, sessions, turns, seed)):
        play(engine, planned, f"eval-sessions-{seed}-{n}", tallies[planned.kind])
    return tallies


def row(tally: Tally) -> dict[str, float | int]:
    """One kind's figures, as the JSON report and the table give them."""
    out: dict[str, float | int] = {
        "sessions": tally.sessions,
        "catalog_changed": round(tally.changed / max(tally.later_turns, 1), 3),
        "wanted_this_turn": round(tally.wanted_now / max(tally.turns, 1), 3),
        "wanted_so_far": round(tally.wanted_so_far / max(tally.turns, 1), 3),
        "stable_moved": tally.stable_moved, "repeated_reveals": tally.repeated,
        "unrevealed_retrieved": tally.unrevealed}
    for api in APIS:
        for layout in LAYOUTS:
            out[f"{api}_{layout}"] = round(tally.mean(api, layout))
        reveal = tally.mean(api, "reveal")
        out[f"{api}_reveal_vs_per_turn"] = round(reveal / max(tally.mean(api, "per_turn"), 1), 3)
        out[f"{api}_reveal_vs_whole"] = round(reveal / max(tally.mean(api, "whole"), 1), 3)
    return out


def table(tallies: dict[str, Tally], title: str) -> str:
    """The report as a Markdown table: costs in token-equivalents per session."""
    lines = [title, "",
             "| sessions | catalog_text changed | API | whole catalog cached | per-turn system "
             "block | stable + reveal | vs per-turn | vs whole | wanted shown this turn | "
             "so far |", "|---|---|---|---|---|---|---|---|---|---|"]
    for kind, tally in tallies.items():
        r = row(tally)
        for api in APIS:
            lines.append(
                f"| {kind} ({r['sessions']}) | {r['catalog_changed']:.0%} | {api} | "
                f"{r[f'{api}_whole']:,} | {r[f'{api}_per_turn']:,} | {r[f'{api}_reveal']:,} | "
                f"{r[f'{api}_reveal_vs_per_turn']:.2f}x | {r[f'{api}_reveal_vs_whole']:.2f}x | "
                f"{r['wanted_this_turn']:.0%} | {r['wanted_so_far']:.0%} |")
    checks = {k: sum(int(row(t)[k]) for t in tallies.values())
              for k in ("stable_moved", "repeated_reveals", "unrevealed_retrieved")}
    lines += ["", "checks: " + ", ".join(f"{k} {v}" for k, v in checks.items())
              + " (each 0 when the blocks keep their promises)"]
    return "\n".join(lines)
