"""Admission's findings on ListSkills answers: what the build recorded in the served version's
manifest (``router.builder.admitting``), read once per version, set on each listed skill for
the admins and operators of its catalog (``SkillInfo.quarantined``, ``approved``,
``admission_digest``, ``findings``):
a caller holding the role ``ops`` or ``admin`` whose view holds the skill's catalog
(``router.access.view``)."""

from __future__ import annotations

from collections.abc import Callable

from router.builder.admission_record import recorded_admission
from router.engine.approving import APPROVED_NEXT, REVOKED_NEXT, Approved, Revoked
from router.skills.model import skill_key
from router.v1 import router_pb2 as pb


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
        info.approved = bool(row.get("approved"))
        info.admission_digest = str(row.get("digest", ""))
        info.findings.extend(
            pb.AdmissionFinding(severity=str(f.get("severity", "")), rule=str(f.get("rule", "")),
                                message=str(f.get("message", "")))
            for f in row.get("findings", []) if isinstance(f, dict))
    return response


def approved_to_proto(done: Approved) -> pb.ApproveSkillResponse:
    a = done.approval
    return pb.ApproveSkillResponse(
        skill=a.key, digest=a.digest, approved_by=a.by, approved_at=a.at,
        index_version=done.index_version,
        message=f"approved {a.key} at {a.digest}; it stays quarantined in {done.index_version}: "
                + APPROVED_NEXT)


def revoked_to_proto(done: Revoked) -> pb.RevokeApprovalResponse:
    return pb.RevokeApprovalResponse(
        skill=done.key, revoked=done.revoked,
        message=(f"revoked the approval of {done.key}; " + REVOKED_NEXT) if done.revoked
        else f"{done.key} has no approval: nothing was revoked")


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
