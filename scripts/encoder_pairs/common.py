"""What every source shares: a tool's identity, name and text clean-up, reading a source
repository (a plain checkout or a bare git directory), dedupe, the per-tool cap and the split."""

from __future__ import annotations

import hashlib
import re
import subprocess
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from router.encoders.tools_model.rows import Row, Tool

MAX_NAME = 64
MAX_DESCRIPTION = 1024
# A description with fewer words than this is "poor": its parameter names are appended once,
# as " Parameters: a, b, c." (see clean_description).
POOR_DESCRIPTION_WORDS = 5
MAX_PARAMETERS_LISTED = 8
# About this share of tools (by a stable hash of name + description) is held back for validation.
VALIDATION_PERCENT = 10


def tool_key(tool: Tool) -> str:
    """The identity of a tool: its name and normalised description."""
    return f"{tool.name}\n{normalise_text(tool.description)}"


class SourceError(RuntimeError):
    """A source repository lacks a file it should have, or holds one that cannot be read."""


class SourceTree:
    """Files of one source repository at one commit.

    ``root`` is either a plain checkout (a folder holding the repository's files) or a bare git
    directory (``HEAD`` and ``objects/`` inside); in the latter case files are read from ``HEAD``.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bare = (root / "HEAD").is_file() and (root / "objects").is_dir()
        if not root.is_dir():
            raise SourceError(f"{root}: not a folder (give a checkout or a bare git directory)")

    def _git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", f"--git-dir={self.root}", *args],
            capture_output=True, text=True, check=False,
        )
        if done.returncode != 0:
            raise SourceError(f"{self.root}: git {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def commit(self) -> str:
        """The commit read, or "" for a plain folder that is not a git checkout."""
        if self.bare:
            return self._git("rev-parse", "HEAD").strip()
        if (self.root / ".git").exists():
            done = subprocess.run(
                ["git", "-C", str(self.root), "rev-parse", "HEAD"],
                capture_output=True, text=True, check=False,
            )
            return done.stdout.strip() if done.returncode == 0 else ""
        return ""

    def list(self, folder: str) -> list[str]:
        """Paths (relative to the repository root) of the files under ``folder``, sorted."""
        folder = folder.rstrip("/")
        if self.bare:
            out = self._git("ls-tree", "-r", "--name-only", "HEAD", "--", folder + "/")
            return sorted(line for line in out.splitlines() if line)
        base = self.root / folder
        if not base.is_dir():
            raise SourceError(f"{self.root}: no folder {folder}")
        return sorted(p.relative_to(self.root).as_posix() for p in base.rglob("*") if p.is_file())

    def exists(self, path: str) -> bool:
        if self.bare:
            done = subprocess.run(
                ["git", f"--git-dir={self.root}", "cat-file", "-e", f"HEAD:{path}"],
                capture_output=True, check=False,
            )
            return done.returncode == 0
        return (self.root / path).is_file()

    def read(self, path: str) -> str:
        if self.bare:
            return self._git("show", f"HEAD:{path}")
        try:
            return (self.root / path).read_text(encoding="utf-8")
        except OSError as exc:
            raise SourceError(f"{self.root}: cannot read {path}: {exc}") from exc


_CAMEL_1 = re.compile(r"([a-z0-9])([A-Z])")
_CAMEL_2 = re.compile(r"([A-Z]+)([A-Z][a-z])")
_NOT_NAME = re.compile(r"[^a-z0-9]+")


def to_skill_name(raw: str) -> str:
    """``raw`` in the Agent Skills name form: lowercase a-z, 0-9 and single hyphens, at most 64.

    ``math.factorial`` -> ``math-factorial``, ``getWeather`` -> ``get-weather``,
    ``HTTPServer_v2`` -> ``http-server-v2``. Returns "" when nothing usable is left.
    """
    text = unicodedata.normalize("NFKD", raw).encode("ascii", "ignore").decode("ascii")
    text = _CAMEL_2.sub(r"\1-\2", _CAMEL_1.sub(r"\1-\2", text))
    name = _NOT_NAME.sub("-", text.lower()).strip("-")
    if len(name) > MAX_NAME:
        name = name[:MAX_NAME].rstrip("-")
    return name


def one_line(text: str) -> str:
    return " ".join(text.split())


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit + 1].rsplit(" ", 1)[0]
    return (cut if cut else text[:limit]).rstrip()[:limit]


def clean_description(text: str, parameters: Sequence[str] = ()) -> str:
    """One line, whitespace collapsed, at most 1024 characters.

    A poor description (fewer than ``POOR_DESCRIPTION_WORDS`` words) gets its first parameter
    names appended as `` Parameters: a, b.``; an empty one stays empty (its row is dropped).
    """
    line = one_line(text)
    if line and len(line.split()) < POOR_DESCRIPTION_WORDS:
        names = [one_line(p) for p in parameters if one_line(p)][:MAX_PARAMETERS_LISTED]
        if names:
            line = f"{line.rstrip('.')}. Parameters: {', '.join(names)}."
    return _cap(line, MAX_DESCRIPTION)


def make_tool(raw_name: str, description: str, parameters: Sequence[str] = ()) -> Tool | None:
    name = to_skill_name(raw_name)
    desc = clean_description(description, parameters)
    if not name or not desc:
        return None
    return Tool(name, desc)


_NOT_WORD = re.compile(r"[^0-9a-z]+")


def normalise_text(text: str) -> str:
    """Lowercase, alphanumerics and single spaces only."""
    return " ".join(_NOT_WORD.sub(" ", text.lower()).split())


def make_row(row_id: str, source: str, request: str, tools: Iterable[Tool | None],
             distractors: Iterable[Tool | None] = ()) -> Row | None:
    """A row, or None when the request is empty or a needed tool has no usable description."""
    request = one_line(request)
    needed = list(tools)
    if not normalise_text(request) or not needed or any(t is None for t in needed):
        return None
    by_key = {tool_key(t): t for t in needed if t is not None}
    others = {tool_key(t): t for t in distractors
              if t is not None and tool_key(t) not in by_key}
    return Row(row_id, source, request,
               tuple(sorted(by_key.values())), tuple(sorted(others.values())))


def _row_sort_key(row: Row) -> tuple[str, str]:
    return (row.source, row.id)


def dedupe(rows: Iterable[Row]) -> list[Row]:
    """One row per (normalised request, tool set); the first by (source, id) is kept."""
    seen: set[tuple[str, frozenset[str]]] = set()
    kept: list[Row] = []
    for row in sorted(rows, key=_row_sort_key):
        key = (normalise_text(row.request), frozenset(tool_key(t) for t in row.tools))
        if key in seen:
            continue
        seen.add(key)
        kept.append(row)
    return kept


def stable_hash(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def cap_per_tool(rows: Iterable[Row], limit: int) -> list[Row]:
    """At most ``limit`` rows per set of needed tool names (one API may carry several
    descriptions), chosen by a stable hash of the request."""
    ordered = sorted(rows, key=lambda r: (stable_hash(normalise_text(r.request)), r.id))
    counts: dict[frozenset[str], int] = {}
    kept: list[Row] = []
    for row in ordered:
        key = frozenset(t.name for t in row.tools)
        if counts.get(key, 0) >= limit:
            continue
        counts[key] = counts.get(key, 0) + 1
        kept.append(row)
    return sorted(kept, key=_row_sort_key)


def is_validation_tool(tool: Tool) -> bool:
    return stable_hash(tool_key(tool)) % 100 < VALIDATION_PERCENT


def assign_splits(rows: Iterable[Row]) -> list[Row]:
    """"validation" for a row needing a held-back tool, else "train".

    A train row's distractors lose any held-back tool too, so no validation tool is seen in
    training at all.
    """
    out: list[Row] = []
    for row in rows:
        if any(is_validation_tool(t) for t in row.tools):
            out.append(replace(row, split="validation"))
        else:
            kept = tuple(t for t in row.distractors if not is_validation_tool(t))
            out.append(replace(row, split="train", distractors=kept))
    return out
