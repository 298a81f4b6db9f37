"""Skill pairs: public SKILL.md collections, each skill paired with request-like sentences of its
own SKILL.md (``skill_requests``: example requests, "When to use" items, "Use when ..."
sentences, never its description). The document is what the index embeds for the skill, its name
and description.

A repository is read at ``HEAD`` (a bare git directory) or as a checkout; every folder holding a
``SKILL.md`` (not a symbolic link) is a skill, except: a path naming a benchmark (``bench``
anywhere), a skill whose frontmatter declares a licence other than MIT or Apache-2.0 or whose
folder holds a licence file that is neither, a skill whose name equals an evaluation skill's
name, and a copy (its description near-duplicates one already taken, from this repository or
an earlier one). At most ``MAX_SKILLS`` skills of a repository (by a stable hash of the name)
and ``PER_SKILL`` requests of a skill; a sentence opening shared by ``SHARED`` skills of a
repository (its template) stands for none.
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from router.encoders.tools_model.rows import Row

from . import skill_requests
from .common import SourceError, SourceTree, make_row, make_tool, stable_hash
from .overlap import EvalSets, NearDuplicateIndex, name_key

SOURCE = "skills"
PER_SKILL = 3
MAX_SKILLS = 300
SHARED = 3
_OPEN_LICENCES = re.compile(r"\b(mit|apache)\b", re.IGNORECASE)
_LICENCE_FILE = re.compile(r"^(licen[cs]e|copying)(\.[a-z]+)?$", re.IGNORECASE)


@dataclass
class SkillCounts:
    folders: int = 0
    bench: int = 0
    licence: int = 0
    unreadable: int = 0
    eval_name: int = 0
    eval_description: int = 0
    copies: int = 0
    capped: int = 0
    no_request: int = 0
    taken: int = 0
    rows: int = 0

    def line(self) -> str:
        return (f"{self.folders} skill folders; dropped: {self.bench} benchmark paths, "
                f"{self.licence} by licence, {self.unreadable} without a name and description, "
                f"{self.eval_name} by an evaluation skill's name, "
                f"{self.eval_description} by its description, {self.copies} copies, "
                f"{self.capped} by the cap, {self.no_request} without a request; "
                f"{self.taken} skills, {self.rows} rows")


@dataclass
class Seen:
    """What earlier repositories took (a later copy of a skill is dropped)."""

    descriptions: NearDuplicateIndex = field(default_factory=NearDuplicateIndex)


def _files(tree: SourceTree) -> list[tuple[str, str]]:
    """(mode, path) of every file of the tree; a plain checkout's symbolic links as 120000."""
    if tree.bare:
        done = subprocess.run(["git", f"--git-dir={tree.root}", "ls-tree", "-r", "HEAD"],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SourceError(f"{tree.root}: git ls-tree: {done.stderr.strip()}")
        out = []
        for line in done.stdout.splitlines():
            meta, _, path = line.partition("\t")
            out.append((meta.split()[0], path))
        return out
    return [("120000" if p.is_symlink() else "100644", p.relative_to(tree.root).as_posix())
            for p in sorted(tree.root.rglob("*")) if p.is_file() or p.is_symlink()]


def _licence_ok(tree: SourceTree, declared: object, licence_files: list[str]) -> bool:
    if declared is not None and not _OPEN_LICENCES.search(str(declared)):
        return False
    for path in licence_files:
        head = tree.read(path)[:400]
        if not _OPEN_LICENCES.search(head) and "apache license" not in head.lower():
            return False
    return True


def rows(tree: SourceTree, label: str, sets: EvalSets, seen: Seen,
         counts: SkillCounts) -> Iterator[Row]:
    """The rows of one skill repository (``label``: its owner+name, in the row ids)."""
    if "bench" in label.lower():
        raise SourceError(f"{tree.root}: a benchmark's repository is never a source")
    files = _files(tree)
    by_folder: dict[str, list[str]] = {}
    for _mode, path in files:
        parent = str(PurePosixPath(path).parent)
        by_folder.setdefault(parent, []).append(path)
    skills = sorted(path for mode, path in files
                    if PurePosixPath(path).name == "SKILL.md" and mode != "120000")
    found = []
    for path in skills:
        counts.folders += 1
        folder = str(PurePosixPath(path).parent)
        if "bench" in path.lower():
            counts.bench += 1
            continue
        text = tree.read(path)
        front, _ = skill_requests.split_skill_md(text)
        raw_name = str(front.get("name") or PurePosixPath(folder).name)
        tool = make_tool(raw_name, str(front.get("description") or ""))
        if tool is None:
            counts.unreadable += 1
            continue
        licences = [p for p in by_folder.get(folder, [])
                    if _LICENCE_FILE.match(PurePosixPath(p).name)]
        if not _licence_ok(tree, front.get("license"), licences):
            counts.licence += 1
            continue
        if name_key(tool.name) in sets.names or name_key(raw_name) in sets.names:
            counts.eval_name += 1
            continue
        if sets.descriptions.matches(tool.description):
            counts.eval_description += 1
            continue
        if seen.descriptions.matches(tool.description):
            counts.copies += 1
            continue
        seen.descriptions.add(tool.description)
        found.append((folder, tool, skill_requests.candidates(text, tool.description)))
    ranked = sorted(found, key=lambda f: (stable_hash(f[1].name), f[0]))
    counts.capped += max(0, len(ranked) - MAX_SKILLS)
    kept = sorted(ranked[:MAX_SKILLS], key=lambda f: f[0])
    shared = Counter(o for _, _, kinds in kept
                     for o in {skill_requests.opening(t) for k in kinds for t in k})
    boilerplate = {o for o, n in shared.items() if n >= SHARED}
    for folder, tool, kinds in kept:
        texts = skill_requests.pick(kinds, PER_SKILL, boilerplate)
        if not texts:
            counts.no_request += 1
            continue
        counts.taken += 1
        for i, text in enumerate(texts):
            row = make_row(f"{label}/{folder}#{i}", SOURCE, text, [tool])
            if row is not None:
                counts.rows += 1
                yield row


def label_of(root: Path) -> str:
    """``owner+name`` of a mirror's ``<owner>+<name>/repo`` (else the folder's name)."""
    return root.parent.name if root.name == "repo" else root.name
