"""Admission's verdicts taken from the served version when nothing they were computed from has
changed, so a Reindex that finds the same catalog decides "nothing changed" without running
the checks, the content scan or the hub measure again.

A build records ``admission_inputs`` beside the verdicts (``router.builder.admitting``): a
digest of every input admission reads (each skill's key, catalog, kind and content hash, the
digest of every file of every skill, the example requests, the admission settings, the
approvals, the encoder's model, the hub measure's probe requests, the scanner and its file,
and the router's own version). A later build whose digest is the same takes the verdicts
recorded with it: the same skills quarantined, with the same findings and diagnostics. Any
difference runs admission in full.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from router.admission.hubs import probe_requests
from router.admission.model import Finding
from router.admission.policy import Approval
from router.config import AdmissionConfig
from router.skills.digests import SkillDigests
from router.skills.model import Diagnostic, DiscoveryResult, Level


@dataclass(frozen=True)
class Prior:
    """What a build knows before admission runs: ``known``, embeddings already made (a sharded
    build's); ``previous``, the served version's recorded settings (None: nothing to reuse);
    ``files``, the fingerprint of every skill file's digest; ``digested``, those digests by
    skill key."""

    known: Mapping[str, np.ndarray] | None = None
    previous: Mapping[str, Any] | None = None
    files: str = ""
    digested: Mapping[str, SkillDigests] | None = None


INPUTS_KEY = "admission_inputs"  # the manifest's digest of what the verdicts came from
APPROVE_HINT = "approve it with `skill-router admission approve`"


def inputs_digest(found: DiscoveryResult, config: AdmissionConfig, examples: str,
                  approvals: Sequence[Approval], model: str, files: str,
                  scanner: str = "") -> str:
    """The digest of admission's inputs (``examples`` and ``files``: the fingerprints of the
    example requests and of every skill file's digest; ``scanner``: the content scanner the
    build found, "" for none)."""
    skills = sorted((s.key, s.catalog, s.kind.value, s.content_hash, s.base_dir)
                    for s in found.skills)
    data = {"skills": skills, "files": files, "examples": examples,
            # the scanner as found (below), not as its setting spells it: "" and "off" in
            # two configurations of one build find the same; how many processes scan changes
            # no verdict
            "config": {k: v for k, v in dataclasses.asdict(config).items()
                       if k not in ("scanner_path", "scan_workers")}, "model": model,
            "approvals": sorted(json.dumps(dataclasses.asdict(a), sort_keys=True, default=str)
                                for a in approvals),
            "probes": probe_requests(), "scanner": _scanner(scanner),
            "router": _router_version()}
    text = json.dumps(data, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _router_version() -> str:
    """The installed router's version (its checks may change with it)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("skill-router")
    except PackageNotFoundError:
        return ""


def _scanner(path: str) -> list[Any]:
    """The scanner as it is on disk (a new scanner makes new findings)."""
    if not path:
        return []
    try:
        found = os.stat(path)
    except OSError:
        return [path]
    return [path, found.st_size, found.st_mtime_ns]


def reused(found: DiscoveryResult, record: Any) -> tuple[DiscoveryResult, dict[str, Any]] | None:
    """``found`` with the recorded verdicts applied (quarantined skills disabled, a diagnostic
    each, as admission words it) and the record itself; None when the record is unusable."""
    if not isinstance(record, Mapping) or not isinstance(record.get("skills"), Mapping):
        return None
    verdicts: Mapping[str, Any] = record["skills"]
    try:
        quarantined = {key: (str(v["digest"]), [Finding.from_dict(f) for f in v["findings"]])
                       for key, v in verdicts.items() if v.get("quarantined")}
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    skills, diags = [], []
    for skill in found.skills:
        held = quarantined.get(skill.key)
        if held is not None:
            digest, findings = held
            diags.append(Diagnostic(Level.WARNING, skill.location, (
                f"skill {skill.key!r} quarantined at digest {digest}: {reasons(findings)}; "
                f"{APPROVE_HINT}"), skill.catalog))
            skill = dataclasses.replace(skill, enabled=False)
        skills.append(skill)
    return (DiscoveryResult(tuple(skills), found.shadowed, (*found.diagnostics, *diags)),
            dict(record))


def reasons(findings: Sequence[Finding]) -> str:
    """The first findings of a quarantine, for its diagnostic."""
    return "; ".join(f"{f.rule} ({f.severity.value}): {f.message}" for f in findings[:3])
