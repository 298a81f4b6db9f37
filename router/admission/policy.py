"""Admission policy (pure): which findings quarantine a skill and which only warn, per catalog
or source kind, and the verdict for one skill given its findings and the approvals of its
digest. A quarantined skill stays in the index for operators but is never routed, activated or
listed to the model; an approval of its exact digest admits it (a new digest needs a new one).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from router.admission.model import Finding, Severity


class Action(StrEnum):
    QUARANTINE = "quarantine"
    WARN = "warn"
    IGNORE = "ignore"


@dataclass(frozen=True)
class Policy:
    """Findings at or over ``quarantine_at`` quarantine (None: nothing does), except the
    content scan's findings in bundled code (``Finding.in_code``), which only warn unless
    ``code_quarantines``; ``rules`` sets one rule's action whatever its severity."""

    quarantine_at: Severity | None = None
    rules: Mapping[str, Action] = field(default_factory=dict)
    code_quarantines: bool = False

    def action(self, finding: Finding) -> Action:
        """What ``finding`` does to its skill under this policy."""
        rule = self.rules.get(finding.rule)
        if rule is not None:
            return rule
        if finding.in_code and not self.code_quarantines:
            return Action.WARN
        if self.quarantine_at is not None and finding.severity.rank >= self.quarantine_at.rank:
            return Action.QUARANTINE
        return Action.WARN

    @classmethod
    def parse(cls, data: Mapping[str, Any], where: str) -> Policy:
        """The policy of a configuration mapping ``{quarantine_at: high|...|none, rules:
        {rule: quarantine|warn|ignore}}``; ValueError naming ``where`` and the bad key."""
        unknown = sorted(set(data) - {"quarantine_at", "rules"})
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)} "
                             "(known: quarantine_at, rules)")
        level = str(data.get("quarantine_at", "none"))
        try:
            at = None if level.lower() == "none" else Severity.parse(level)
            rules = {str(k): Action(str(v).lower())
                     for k, v in dict(data.get("rules") or {}).items()}
        except ValueError as exc:
            raise ValueError(f"{where}: {exc} (actions: quarantine, warn, ignore)") from None
        return cls(at, rules)


REGISTRY_POLICY = Policy(quarantine_at=Severity.HIGH)  # skills fetched from a registry
FOLDER_POLICY = Policy(quarantine_at=None)  # skills from folders on disk: warn only


def default_policy(origin: str) -> Policy:
    """The policy of a source kind when the configuration names none: a registry's quarantines
    on high and critical findings, every other source's only warns."""
    return REGISTRY_POLICY if origin.startswith("registry:") else FOLDER_POLICY


@dataclass(frozen=True)
class Approval:
    """An admin's approval of one skill at one digest."""

    key: str
    digest: str
    by: str
    at: float
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "digest": self.digest, "by": self.by, "at": self.at,
                "note": self.note}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Approval:
        return cls(str(data["key"]), str(data["digest"]), str(data.get("by", "")),
                   float(data.get("at", 0.0)), str(data.get("note", "")))


@dataclass(frozen=True)
class Verdict:
    """Admission's answer for one skill at one digest."""

    key: str
    digest: str
    findings: tuple[Finding, ...] = ()
    quarantined: bool = False
    approved: bool = False  # quarantining findings, admitted by an approval of this digest

    @property
    def reasons(self) -> tuple[Finding, ...]:
        return self.findings


def decide(key: str, digest: str, findings: Iterable[Finding], policy: Policy,
           approvals: Iterable[Approval] = ()) -> Verdict:
    """The verdict for ``key`` at ``digest``: quarantined when a finding's action is to
    quarantine and no approval names this key at this digest; ignored findings dropped."""
    kept = tuple(sorted((f for f in findings if policy.action(f) is not Action.IGNORE),
                        key=lambda f: (-f.severity.rank, f.rule, f.message)))
    blocking = any(policy.action(f) is Action.QUARANTINE for f in kept)
    approved = blocking and any(a.key == key and a.digest == digest and digest
                                for a in approvals)
    return Verdict(key, digest, kept, quarantined=blocking and not approved, approved=approved)
