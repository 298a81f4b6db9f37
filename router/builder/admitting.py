"""Admission as a build step: every discovered skill checked (``router.admission``) before it
is indexed. A quarantined skill stays in the index, disabled (never routed, activated or
listed to the model), and the version records every skill's findings and verdict, with the
scanner's version (a new scanner makes new findings, and so a new version). Approvals are
read from the feedback store, with the learned state (``router.learning.approvals``)."""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from router.admission import checks
from router.admission.admit import Request, hub_findings, read_skill
from router.admission.admit import admit as decide_all
from router.admission.hubs import probe_requests
from router.admission.model import Finding, SkillText
from router.admission.policy import Approval
from router.admission.scan_cache import cached_scan
from router.admission.scanner import SCANNER, Located, locate
from router.admission.settings import parse_policies
from router.builder.admission_kept import Records
from router.builder.admission_memo import MEMO, Read, memo_key
from router.builder.admission_reuse import (
    APPROVE_HINT,
    INPUTS_KEY,
    Prior,
    inputs_digest,
    reasons,
    reused,
)
from router.builder.recorded import ADMISSION_KEY
from router.common.stages import stage
from router.config import AdmissionConfig, FeedbackConfig
from router.encoders.base import Embedder
from router.encoders.kept import encode_kept
from router.errors import Unavailable
from router.examples.loading import fingerprint
from router.examples.model import Example
from router.index.vectors import embed_skills, embedding_text, previous_vectors, text_key
from router.learning.approvals import stored_approvals
from router.learning.backends import open_store
from router.skills.digests import SkillDigests
from router.skills.model import Diagnostic, DiscoveryResult, Level, Skill, SkillKind
from router.skills.sources.base import SkillSource
from router.skills.sources.registries import origins

log = logging.getLogger(__name__)



@dataclass(frozen=True)
class Admitted:
    """What admission gives the build: the skills (quarantined ones disabled), the record the
    version keeps (``{"admission": {"scanner": version, "skills": {key: verdict}}}``, skills
    with findings only), and the skills' embeddings the hub measure made (by cache key: the
    build reuses them instead of encoding the skills again), and each skill's body as admission
    read it (by key: the build indexes its start, ``router.index.body``; none when the
    verdicts were reused, and the build reads them, ``router.builder.bodies``)."""

    found: DiscoveryResult
    record: dict[str, Any]
    vectors: dict[str, np.ndarray]
    bodies: dict[str, str] = dataclasses.field(default_factory=dict)


def admit_found(found: DiscoveryResult, config: AdmissionConfig, embedder: Embedder,
                examples: Sequence[Example], index_dir: str | Path,
                source: SkillSource | None = None, feedback: FeedbackConfig | None = None, *,
                prior: Prior | None = None) -> Admitted:
    """Admission of ``found`` (see the module notes), a diagnostic for each quarantined
    skill; skill files are read through ``source`` (the disk when None); ``feedback``: where
    the approvals are kept (the store in ``index_dir`` when None). ``prior``
    (``router.builder.admission_reuse.Prior``): embeddings already made (a sharded build's),
    used before encoding any skill; the served version's recorded settings, whose verdicts
    are taken as they are when admission's inputs (every skill file's digest among them) are
    the same; and each skill's file digests, under which what admission read of a skill and
    its own checks' findings are kept for the next build (``router.builder.admission_memo``)."""
    prior = prior or Prior()
    policies = parse_policies(config.quarantine, config.rules)
    # first, before the hub measure embeds the skills: a store that cannot be read stops the
    # build before that time is spent
    approvals = _approvals(index_dir, feedback)
    located = locate(config.scanner_path)
    digest = inputs_digest(found, config, fingerprint(examples), approvals, embedder.model_id,
                           prior.files, located.path)
    previous = prior.previous
    if previous is not None and digest and previous.get(INPUTS_KEY) == digest:
        again = reused(found, previous.get(ADMISSION_KEY))
        if again is not None:
            log.info("admission: its inputs are as recorded; the verdicts reused")
            return Admitted(again[0], {ADMISSION_KEY: again[1], INPUTS_KEY: digest}, {})
    return _admit(found, config, embedder, examples, (index_dir, source, located), prior,
                  (policies, approvals), digest)


def _admit(found: DiscoveryResult, config: AdmissionConfig, embedder: Embedder,
           examples: Sequence[Example],
           where: tuple[str | Path, SkillSource | None, Located],
           prior: Prior, rules: tuple[Any, list[Approval]], digest: str) -> Admitted:
    """Admission run in full (``admit_found``); ``where``: the index folder, the source and the
    content scanner found (the one its input digest names), ``rules``: the policies and the
    approvals."""
    (index_dir, source, located), (policies, approvals) = where, rules
    known, digested = prior.known, prior.digested or {}
    read = [_read(s, source, digested.get(s.key), origin)
            for s, origin in zip(found.skills, origins(found.skills), strict=True)]
    texts = [text for text, _ in read]
    checked = {text.key: findings for text, findings in read}
    catalogs = {s.key: s.catalog for s in found.skills}
    extra: dict[str, list[Finding]] = {}
    warnings: list[str] = []
    made: dict[str, np.ndarray] = {}
    if config.hubs and found.skills:
        requests = [Request(p) for p in probe_requests()]
        requests += [Request(e.query, e.skills[0] if len(e.skills) == 1 else "")
                     for e in examples if e.query]
        cache = {**previous_vectors(Path(index_dir), embedder.model_id), **(known or {})}
        vectors, _ = embed_skills(found.skills, embedder, cache, False)
        made = {text_key(embedder.model_id, embedding_text(s)): v
                for s, v in zip(found.skills, vectors, strict=True)}
        # the probes' rows as this encoder made them for an earlier build of the process
        for key, more in hub_findings(texts, requests, partial(encode_kept, embedder), catalogs,
                                      vectors).items():
            extra.setdefault(key, []).extend(more)
    version = ""
    not_run = ""
    if located.path:
        on_disk = {s.base_dir: t for s, t in zip(found.skills, texts, strict=True)
                   if s.kind is not SkillKind.MCP_TOOL and os.path.isdir(s.base_dir)}
        outcome = cached_scan({f: t.digest for f, t in on_disk.items()}, located.path,
                              index_dir, workers=config.scan_workers)
        version, warnings = outcome.version, list(outcome.warnings)
        for folder, more in outcome.findings.items():
            extra.setdefault(on_disk[folder].key, []).extend(more)
        if outcome.ran:
            stage("content scan: %s %s (%s)", SCANNER, version, located.path)
    elif not located.off:
        not_run = f"the content scan did not run: {located.why}"
    verdicts = decide_all(texts, policies, approvals, extra=extra, catalogs=catalogs,
                          checked=checked)
    skills: list[Skill] = []
    diags = [Diagnostic(Level.WARNING, "admission", w)
             for w in (*warnings, *([not_run] if not_run else []))]
    record = Records()  # each one kept with its JSON text (router.builder.admission_kept)
    for skill in found.skills:
        verdict = verdicts[skill.key]
        if verdict.findings:
            record.add(skill.key, verdict)
        if verdict.quarantined:
            diags.append(Diagnostic(Level.WARNING, skill.location, (
                f"skill {skill.key!r} quarantined at digest {verdict.digest}: "
                f"{reasons(verdict.findings)}; {APPROVE_HINT}"), skill.catalog))
            skill = dataclasses.replace(skill, enabled=False)
        skills.append(skill)
    admitted = DiscoveryResult(tuple(skills), found.shadowed, (*found.diagnostics, *diags))
    bodies = {t.key: t.body for t, s in zip(texts, found.skills, strict=True)
              if s.kind is not SkillKind.MCP_TOOL}
    # a scan's warnings are not recorded: a build that had some runs admission again (a scan
    # that did not run is in the digest: its scanner's path)
    return Admitted(admitted, {ADMISSION_KEY: {"scanner": version, "skills": record},
                               INPUTS_KEY: "" if warnings else digest}, made, bodies)


def _approvals(index_dir: str | Path, feedback: FeedbackConfig | None) -> list[Approval]:
    """The approvals in the feedback store; OSError (the build stops, the served version
    stays) when it cannot be read: a skill approved there is never quarantined by an outage."""
    store = open_store(index_dir, feedback or FeedbackConfig())
    try:
        return stored_approvals(store, index_dir)
    except OSError as exc:
        raise Unavailable(f"the build reads the approvals of quarantined skills from the "
                          f"feedback store {store.location}, which cannot be read ({exc}); "
                          "nothing was built: bring the store back and build again") from None
    finally:
        store.close()


def _read(skill: Skill, source: SkillSource | None, digests: SkillDigests | None,
          origin: str) -> Read:
    """What admission reads of ``skill`` and its own checks' findings: as kept by an earlier
    build of this process when every file of the skill is as it was, else read now."""
    key = memo_key(skill, origin, digests)
    kept = MEMO.get(key)
    if kept is not None:
        return kept
    text = _text(skill, source, origin)
    read = (text, tuple(checks.check(text)))
    MEMO.put(key, read)
    return read


def _text(skill: Skill, source: SkillSource | None, origin: str) -> SkillText:
    if skill.kind is SkillKind.MCP_TOOL:
        return SkillText(skill.key, skill.name, skill.description, "", skill.content_hash,
                         origin)
    try:
        raw = source.fetch_skill_file(skill) if source is not None else None
        return read_skill(skill, origin, raw)
    except Exception as exc:  # one unreadable skill is checked on its name and description
        log.warning("admission could not read %s: %r", skill.location, exc)
        return SkillText(skill.key, skill.name, skill.description, "", skill.content_hash,
                         origin)
