"""Admission end to end on skills read from disk: every hostile skill of ``hostile/`` (one
per rule) is quarantined under the registry policy, and the demo catalog is not (none under
the folder policy, at most 1 in 20 under the registry policy)."""

from __future__ import annotations

from pathlib import Path

from router.admission.admit import Request, admit, hub_findings, read_skill
from router.admission.hubs import probe_requests
from router.admission.model import Severity
from router.admission.settings import Policies
from router.encoders.hashing import HashEmbedder
from router.skills.discovery import scan_root
from router.skills.model import Scope
from tests.support import REPO

HOSTILE = Path(__file__).with_name("hostile")
DEMO = REPO / "examples" / "skills"
REGISTRY = "registry:https://skills.example"
EXPECTED = {
    "anything-helper": "router-instructions",
    "priority-notes": "router-instructions",
    "quiet-formatter": "hidden-characters",
    "smuggled-notes": "hidden-characters",
    "quick-installer": "download-to-shell",
    "env-bootstrap": "download-to-shell",
    "win-setup": "download-to-shell",
    "blob-runner": "download-to-shell",
    "lint-runner": "download-to-shell",
    "pdf-\u0435xtract": "confusable-name",
    "git\u200bhelper": "hidden-characters",
}


def texts(root: Path, origin: str) -> list:  # type: ignore[type-arg]
    skills, _ = scan_root(str(root), Scope.BUNDLED)
    return [read_skill(s, origin) for s in skills]


def test_every_hostile_skill_is_quarantined_by_the_registry_policy() -> None:
    hostile = texts(HOSTILE, REGISTRY)
    assert sorted(t.name for t in hostile) == sorted(EXPECTED)
    verdicts = admit([*texts(DEMO, "disk:default"), *hostile], Policies())
    for t in hostile:
        verdict = verdicts[t.key]
        assert verdict.quarantined, t.name
        assert EXPECTED[t.name] in {f.rule for f in verdict.findings}, verdict.findings


def test_the_demo_catalog_is_admitted() -> None:
    demo = texts(DEMO, "disk:default")
    assert len(demo) >= 40
    folder = admit(demo, Policies())
    assert [k for k, v in folder.items() if v.quarantined] == []
    registry = admit(demo, Policies({"": Severity.HIGH}), catalogs={t.key: "" for t in demo})
    assert len([k for k, v in registry.items() if v.quarantined]) <= len(demo) / 20


def test_a_description_stuffed_for_every_request_is_a_hub() -> None:
    demo = texts(DEMO, "disk:default")
    stuffed = texts(HOSTILE.parent / "hub", REGISTRY)
    assert [t.name for t in stuffed] == ["general-assistant"]
    requests = [Request(p) for p in probe_requests()]
    encode = HashEmbedder().encode
    found = hub_findings([*demo, *stuffed], requests, encode, {})
    assert list(found) == ["general-assistant"]
    assert hub_findings(demo, requests, encode, {}) == {}
