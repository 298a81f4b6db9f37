"""Admission's records: a finding's severity, the finding itself, and a skill's verdict."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Severity(StrEnum):
    """How bad a finding is, lowest first (``rank`` orders them)."""

    INFO = "info"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return _RANK[self]

    @classmethod
    def parse(cls, text: str) -> Severity:
        """The severity ``text`` names (any case); ValueError naming the choices."""
        try:
            return cls(text.strip().lower())
        except ValueError:
            raise ValueError(f"unknown severity {text!r}: choose one of "
                             f"{', '.join(s.value for s in cls)}") from None


_RANK = {s: i for i, s in enumerate(Severity)}


@dataclass(frozen=True, order=True)
class Finding:
    """One thing admission found in a skill: the rule that found it, how bad, and what."""

    rule: str
    severity: Severity
    message: str
    source: str = "router"  # "router" for the router's own checks, "scanner" for the scan
    file: str = ""  # the skill's file it is in, relative ("" for the name or description)

    @property
    def in_code(self) -> bool:
        """A scanner's finding in a bundled file other than the skill file: code patterns
        (``subprocess``, ``os.system``, ``while True``) that skills' scripts often hold."""
        return self.source == "scanner" and self.file not in ("", "SKILL.md")

    def to_dict(self) -> dict[str, str]:
        # ``_value_``: the member's value as ``.value`` gives it, without the enum descriptor
        # (a catalog's records hold tens of thousands of findings, written every build)
        return {"rule": self.rule, "severity": self.severity._value_, "message": self.message,
                "source": self.source, "file": self.file}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        return cls(rule=str(data["rule"]), severity=Severity(str(data["severity"])),
                   message=str(data["message"]), source=str(data.get("source", "router")),
                   file=str(data.get("file", "")))


def worst(findings: tuple[Finding, ...] | list[Finding]) -> Severity | None:
    """The highest severity among ``findings``; None when there are none."""
    return max((f.severity for f in findings), key=lambda s: s.rank, default=None)


@dataclass(frozen=True)
class SkillText:
    """What admission reads of one skill: its key, name, description and body (the skill
    file's text after the front matter), its digest, and its origin (the source and root
    it came from, e.g. ``registry:https://example.com`` or ``disk:/srv/skills``)."""

    key: str
    name: str
    description: str
    body: str = ""
    digest: str = ""
    origin: str = ""
    files: tuple[tuple[str, str], ...] = ()  # (path, text) of the bundled text files read
    body_line: int = 1  # the skill file's line the body starts on
