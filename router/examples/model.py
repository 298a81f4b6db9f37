"""Example requests: how users actually ask for a skill, from every source the router
learns from."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ExampleSource(StrEnum):
    """Where an example request came from."""

    EVALS = "evals"  # a prompt of the skill folder's evals/evals.json
    TRIGGER = "trigger"  # a query of the skill folder's trigger-eval file
    FILE = "file"  # a catalog-level examples file (`skill-router index --examples FILE`)
    TRAFFIC = "traffic"  # learned from served traffic (shown, then activated; feedback)


@dataclass(frozen=True)
class Example:
    """One labelled request.

    ``skills`` should take the request (``()``: no skill should: an off-topic request);
    ``negatives`` should not (a should-not-trigger query, a WRONG_SKILL report).
    ``passed_over``: skills a turn showed for the request beside the one activated, passed
    over for it (learned from traffic): weak evidence, never a should-not-trigger label; only
    encoder fine-tuning may use them, as weak negatives (``router.builder.fine_tune``).
    ``origin`` says where it was read or learned (a file path, ``traffic``), for Explain and
    ``skill-router examples list``.
    """

    query: str
    skills: tuple[str, ...] = ()
    negatives: tuple[str, ...] = ()
    source: ExampleSource = ExampleSource.FILE
    origin: str = ""
    passed_over: tuple[str, ...] = ()


def query_key(query: str) -> str:
    """A request's text as it counts for repeats: lower case, whitespace collapsed."""
    return " ".join(query.lower().split())
