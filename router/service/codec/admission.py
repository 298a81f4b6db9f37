"""Admission's findings on ListSkills answers: what the build recorded in the served version's
manifest (``router.builder.admitting``), read once per version, set on each listed skill for
the admins and operators of its catalog (``SkillInfo.quarantined``, ``SkillInfo.findings``):
a caller holding the role ``ops`` or ``admin`` whose view holds the skill's catalog
(``router.access.view``)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from router.builder.admitting import ADMISSION_KEY
from router.builder.pipeline import recorded_settings
from router.errors import IndexUnavailable
from router.skills.model import skill_key
from router.v1 import router_pb2 as pb


@functools.lru_cache(maxsize=4)
def recorded_admission(version_dir: str) -> dict[str, Any]:
    """The verdicts a version recorded, by skill key ({} for a version without any)."""
    try:
        data = recorded_settings(version_dir).get(ADMISSION_KEY)
    except IndexUnavailable:
        return {}
    skills = data.get("skills") if isinstance(data, dict) else None
    return dict(skills) if isinstance(skills, dict) else {}


def add_findings(response: pb.ListSkillsResponse, version_dir: str,
                 operates: Callable[[str, str], bool]) -> pb.ListSkillsResponse:
    """``response`` with the recorded verdict and findings of each skill whose catalog and
    name the caller ``operates`` (the others' stay unset)."""
    record = recorded_admission(version_dir)
    if not record:
        return response
    for info in response.skills:
        if not operates(info.catalog or "default", info.name):
            continue
        row = record.get(skill_key(info.catalog or "default", info.name))
        if not isinstance(row, dict):
            continue
        info.quarantined = bool(row.get("quarantined"))
        info.findings.extend(
            pb.AdmissionFinding(severity=str(f.get("severity", "")), rule=str(f.get("rule", "")),
                                message=str(f.get("message", "")))
            for f in row.get("findings", []) if isinstance(f, dict))
    return response


SEVERITIES = ("info", "low", "medium", "high", "critical")


def admission_counts(version_dir: str) -> tuple[dict[str, int], int]:
    """The served version's findings by severity and its quarantined skills (the metrics)."""
    by_severity = dict.fromkeys(SEVERITIES, 0)
    quarantined = 0
    for row in recorded_admission(version_dir).values():
        if not isinstance(row, dict):
            continue
        quarantined += bool(row.get("quarantined"))
        for finding in row.get("findings", []):
            severity = str(finding.get("severity", "")) if isinstance(finding, dict) else ""
            if severity in by_severity:
                by_severity[severity] += 1
    return by_severity, quarantined
