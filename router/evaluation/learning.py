"""Evaluation with example requests: few-shot runs and a replay of labelled traffic.

A replay routes every labelled request as a gateway would and, when an expected skill was
shown, records (request, skill) as a traffic example, as the server records a model's
Activate of a shown skill, with the other skills shown as passed over. The index is then
rebuilt with what was learned.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from router.engine import Engine
from router.evaluation.metrics import Labelled, Outcome
from router.examples.model import Example, ExampleSource
from router.routing.model import Reason, RouteQuery


def replay(engine: Engine, requests: Iterable[Labelled], top_k: int = 0) -> list[Example]:
    """Route each request; every expected skill that was shown becomes a traffic example (the
    other shown skills, passed over, with it)."""
    out = []
    for req in requests:
        result = engine.route(RouteQuery(message=req.query, history=req.history, top_k=top_k))
        shown = {s.name for s in result.skills if s.reason is Reason.RETRIEVED}
        passed = tuple(sorted(shown - set(req.expected)))
        for skill in req.expected:
            if skill in shown:
                out.append(Example(req.query, (skill,), (), ExampleSource.TRAFFIC, "replay",
                                   passed))
    return out


def covered(outcomes: Sequence[Outcome], examples: Sequence[Example]) -> list[Outcome]:
    """On-topic requests every expected skill of which has at least one example."""
    taught = {s for e in examples for s in e.skills}
    return [o for o in outcomes if o.request.expected and set(o.request.expected) <= taught]
