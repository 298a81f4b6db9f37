"""Admission's configuration read into policies (pure): ``admission.quarantine``
("CATALOG=SEVERITY|none" each) and ``admission.rules`` ("RULE=quarantine|warn|ignore" each)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from router.admission.model import Severity
from router.admission.policy import Action, Policy, default_policy
from router.errors import InvalidRequest


@dataclass(frozen=True)
class Policies:
    """Each catalog's quarantine level (when configured) and the rules' actions."""

    levels: dict[str, Severity | None] = field(default_factory=dict)
    rules: dict[str, Action] = field(default_factory=dict)

    def for_skill(self, catalog: str, origin: str) -> Policy:
        """The policy of a skill of ``catalog`` from ``origin``."""
        if catalog in self.levels:
            return Policy(self.levels[catalog], self.rules)
        return Policy(default_policy(origin).quarantine_at, self.rules)


def parse_policies(quarantine: Iterable[str], rules: Iterable[str]) -> Policies:
    """The policies of the configuration's two lists; InvalidRequest naming a bad entry."""
    levels: dict[str, Severity | None] = {}
    for spec in quarantine:
        catalog, level = _pair(spec, "admission.quarantine", "CATALOG=SEVERITY")
        try:
            levels[catalog] = None if level.lower() == "none" else Severity.parse(level)
        except ValueError as exc:
            raise InvalidRequest(f"admission.quarantine {spec!r}: {exc}, or none") from None
    actions: dict[str, Action] = {}
    for spec in rules:
        rule, action = _pair(spec, "admission.rules", "RULE=ACTION")
        try:
            actions[rule] = Action(action.lower())
        except ValueError:
            raise InvalidRequest(f"admission.rules {spec!r}: the action is one of "
                                 "quarantine, warn, ignore") from None
    return Policies(levels, actions)


def _pair(spec: str, key: str, form: str) -> tuple[str, str]:
    left, sep, right = spec.partition("=")
    if not sep or not left.strip() or not right.strip():
        raise InvalidRequest(f"{key} {spec!r}: expected {form}")
    return left.strip(), right.strip()
