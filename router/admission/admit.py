"""Admission of a set of skills: the router's own checks, the hub measure, the content scan's
findings, and each skill's verdict under the policy of its catalog or source.

``read_skill`` is the one place that reads a skill's text (its skill file and bundled text
files, through the disk); the rest is pure."""

from __future__ import annotations

import hashlib
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from router.admission import checks, hubs, imitation, scanner
from router.admission.fused import Encode, fused_scores
from router.admission.model import Finding, SkillText
from router.admission.policy import Approval, Verdict, decide
from router.admission.settings import Policies
from router.errors import SkillParseError
from router.skills.model import Diagnostic, Level, Skill
from router.skills.parse import decode_text, split_frontmatter
from router.skills.registry.tree import skill_files

TEXT_SUFFIXES = frozenset({".md", ".txt", ".sh", ".bash", ".zsh", ".py", ".js", ".mjs", ".cjs",
                           ".ts", ".jsx", ".tsx", ".ps1", ".rb", ".pl", ".yaml", ".yml", ".json",
                           ".toml", ".cfg", ".ini"})
MAX_FILES = 200  # bundled files read per skill
MAX_FILE_BYTES = 256 * 1024


@dataclass(frozen=True)
class Request:
    """A request the hub measure reads: its text and the key of the skill it is for ("" for
    a probe, meant for none)."""

    text: str
    target: str = ""


@dataclass(frozen=True)
class Admission:
    """Everything admission decided for one build: verdicts by skill key, and warnings (a scan
    that did not run, a folder it could not read)."""

    verdicts: dict[str, Verdict] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    scanner_version: str = ""

    def quarantined(self) -> set[str]:
        return {k for k, v in self.verdicts.items() if v.quarantined}


def read_skill(skill: Skill, origin: str, raw: bytes | None = None) -> SkillText:
    """What admission reads of ``skill``: its skill file's body (``raw``, the bytes its source
    served, else read from its location) and, for a folder on disk, its bundled text files
    (capped), with the digest of the folder."""
    raw = Path(skill.location).read_bytes() if raw is None else raw
    body_line = 1
    try:
        text = decode_text(raw, path=skill.location)
        body = split_frontmatter(text)[1]
        body_line = _line_of(text.replace("\r\n", "\n"), body)
    except SkillParseError:
        body = raw.decode("utf-8", "replace")
    files = []
    base = Path(skill.base_dir)
    if skill.location.endswith("SKILL.md") and base.is_dir():
        for path in sorted(base.rglob("*"))[:MAX_FILES]:
            if (path.is_file() and not path.is_symlink() and path.suffix.lower() in TEXT_SUFFIXES
                    and path.name != "SKILL.md" and path.stat().st_size <= MAX_FILE_BYTES):
                files.append((path.relative_to(base).as_posix(),
                              path.read_bytes().decode("utf-8", "replace")))
    digest = folder_digest(base) if skill.location.endswith("SKILL.md") and base.is_dir() \
        else "sha256:" + hashlib.sha256(raw).hexdigest()
    return SkillText(skill.key, skill.name, skill.description, body, digest, origin,
                     tuple(files), body_line)


def _line_of(text: str, body: str) -> int:
    """The line of ``text`` where ``body`` (its trimmed tail) starts."""
    at = text.rfind(body[:200]) if body else -1
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


def folder_digest(base: Path) -> str:
    """``sha256:`` over every file of a skill folder (paths and contents, sorted): the digest
    an approval names, so a change to any bundled file needs a new approval."""
    outer = hashlib.sha256()
    for rel, data in sorted(skill_files(base).items()):
        outer.update(os.fsencode(rel) + b"\0" + hashlib.sha256(data).digest())
    return "sha256:" + outer.hexdigest()


def hub_findings(texts: Sequence[SkillText], requests: Sequence[Request], encode: Encode,
                 catalogs: Mapping[str, str], vectors: np.ndarray | None = None
                 ) -> dict[str, list[Finding]]:
    """Hub findings of each catalog (``catalogs``: skill key -> catalog), ranked by the fused
    dense (``encode``; ``vectors``: the skills' embeddings when the build made them) and BM25
    scores of the requests against the skills' names and descriptions."""
    if not texts or not requests:
        return {}
    documents = [f"{t.name.replace('-', ' ')} {t.description}" for t in texts]
    scores = fused_scores(documents, [r.text for r in requests], encode, vectors)
    by_catalog: dict[str, list[int]] = defaultdict(list)
    for i, t in enumerate(texts):
        by_catalog[catalogs.get(t.key, "")].append(i)
    out: dict[str, list[Finding]] = {}
    for columns in by_catalog.values():
        keys = [texts[i].key for i in columns]
        column_of = {k: j for j, k in enumerate(keys)}  # a request names a key or a name
        column_of.update({texts[i].name: j for j, i in enumerate(columns)
                          if texts[i].name not in column_of})
        rows = [i for i, r in enumerate(requests) if not r.target or r.target in column_of]
        targets = [column_of.get(requests[i].target, -1) for i in rows]
        shares = hubs.hit_shares(scores[np.ix_(rows, columns)], keys, targets)
        out.update(hubs.hubs(shares))
    return out


def admit(texts: Sequence[SkillText], policies: Policies, approvals: Sequence[Approval] = (),
          *, extra: Mapping[str, list[Finding]] | None = None,
          catalogs: Mapping[str, str] | None = None,
          checked: Mapping[str, Sequence[Finding]] | None = None) -> dict[str, Verdict]:
    """Every skill's verdict: the text checks and imitation findings, plus ``extra`` (hubs,
    the scan) by key, under the policy of its catalog (``catalogs``: key -> catalog) and
    origin. ``checked``: the text checks' findings already made for some skills, by key."""
    found: dict[str, list[Finding]] = defaultdict(list)
    made = checked or {}
    for t in texts:
        done = made.get(t.key)
        found[t.key].extend(checks.check(t) if done is None else done)
    for key, more in imitation.check(texts).items():
        found[key].extend(more)
    for key, more in (extra or {}).items():
        found[key].extend(more)
    cat = dict(catalogs or {})
    return {t.key: decide(t.key, t.digest, found[t.key],
                          policies.for_skill(cat.get(t.key, ""), t.origin), approvals)
            for t in texts}


def finding_diagnostics(skills: Sequence[Skill]) -> list[Diagnostic]:
    """A warning for each finding of the router's own checks in ``skills`` read from disk (as
    `skill-router validate` and `lint` show them; no hub measure, no scan)."""
    texts = []
    for skill in skills:
        try:
            texts.append(read_skill(skill, f"disk:{skill.base_dir}"))
        except OSError:
            continue
    located = {s.key: s.location for s in skills}
    return [Diagnostic(Level.WARNING, located[key], f"admission: {f.rule} ({f.severity.value}): "
                                                     f"{f.message}")
            for key, verdict in admit(texts, Policies()).items() for f in verdict.findings]


def scan_diagnostics(skills: Sequence[Skill], setting: str = "") -> tuple[list[Diagnostic], str]:
    """The content scan's findings in ``skills`` read from disk, as warnings (as `skill-router
    validate` shows them), and the line that says which scanner ran, or ``content scan: off``
    and why (``setting``: ``admission.scanner_path``)."""
    located = scanner.locate(setting)
    if not located.path:
        return [], f"content scan: off ({located.why})"
    folders = {s.base_dir: s for s in skills
               if s.location.endswith("SKILL.md") and Path(s.base_dir).is_dir()}
    outcome = scanner.scan(sorted(folders), located.path)
    diags = [Diagnostic(Level.WARNING, folders[folder].location,
                        f"admission: {f.rule} ({f.severity.value}): {f.message}")
             for folder, found in outcome.findings.items() for f in found]
    diags += [Diagnostic(Level.WARNING, "admission", w) for w in outcome.warnings]
    if not outcome.ran:
        return diags, "content scan: off (it did not run)"
    return diags, f"content scan: {scanner.SCANNER} {outcome.version} ({located.path})"
