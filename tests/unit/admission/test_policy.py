"""Policy and approvals: what quarantines, what warns, and approval by digest."""

from __future__ import annotations

import pytest

from router.admission.model import Finding, Severity
from router.admission.policy import (
    FOLDER_POLICY,
    REGISTRY_POLICY,
    Action,
    Approval,
    Policy,
    decide,
    default_policy,
)

HIGH = Finding("download-to-shell", Severity.HIGH, "pipes curl into sh")
MEDIUM = Finding("hidden-characters", Severity.MEDIUM, "a soft hyphen")


def test_registries_quarantine_high_and_folders_warn() -> None:
    assert default_policy("registry:https://r.example") is REGISTRY_POLICY
    assert default_policy("disk:default") is FOLDER_POLICY
    assert decide("k", "d1", [HIGH, MEDIUM], REGISTRY_POLICY).quarantined
    assert not decide("k", "d1", [MEDIUM], REGISTRY_POLICY).quarantined
    verdict = decide("k", "d1", [MEDIUM, HIGH], FOLDER_POLICY)
    assert not verdict.quarantined and verdict.findings == (HIGH, MEDIUM)


def test_an_approval_holds_for_its_digest_only() -> None:
    approval = Approval("k", "d1", "alice", 1.0)
    admitted = decide("k", "d1", [HIGH], REGISTRY_POLICY, [approval])
    assert not admitted.quarantined and admitted.approved
    assert decide("k", "d2", [HIGH], REGISTRY_POLICY, [approval]).quarantined
    assert decide("other", "d1", [HIGH], REGISTRY_POLICY, [approval]).quarantined
    assert not decide("k", "d1", [MEDIUM], REGISTRY_POLICY, [approval]).approved


def test_rules_override_severity() -> None:
    policy = Policy.parse({"quarantine_at": "medium",
                           "rules": {"hidden-characters": "ignore", "hub": "warn"}}, "p")
    assert policy.action(MEDIUM) is Action.IGNORE
    assert policy.action(Finding("hub", Severity.HIGH, "x")) is Action.WARN
    verdict = decide("k", "d", [MEDIUM, HIGH], policy)
    assert verdict.quarantined and verdict.findings == (HIGH,)


@pytest.mark.parametrize(("data", "message"), [
    ({"quarantine_at": "severe"}, "p: unknown severity 'severe'"),
    ({"rules": {"hub": "block"}}, "actions: quarantine, warn, ignore"),
    ({"quarantine": "high"}, "p: unknown key"),
])
def test_bad_policies_are_clear(data: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Policy.parse(data, "p")


def test_round_trips() -> None:
    approval = Approval("k", "d", "alice", 2.5, "reviewed")
    assert Approval.from_dict(approval.to_dict()) == approval
    assert Finding.from_dict(HIGH.to_dict()) == HIGH
    assert Severity.parse(" High ") is Severity.HIGH


def test_the_scans_findings_in_bundled_code_only_warn() -> None:
    code = Finding("scan:COMMAND_INJECTION_OS_SYSTEM", Severity.CRITICAL, "os.system",
                   "scanner", "scripts/convert.py")
    skill_file = Finding("scan:PIPELINE_TAINT_FLOW", Severity.HIGH, "curl | sh", "scanner",
                         "SKILL.md")
    assert code.in_code and not skill_file.in_code and not HIGH.in_code
    assert not decide("k", "d", [code], REGISTRY_POLICY).quarantined
    assert decide("k", "d", [skill_file], REGISTRY_POLICY).quarantined
    strict = Policy(Severity.HIGH, code_quarantines=True)
    assert decide("k", "d", [code], strict).quarantined
    assert Finding.from_dict(code.to_dict()) == code
