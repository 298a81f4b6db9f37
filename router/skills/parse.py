"""Parse SKILL.md bytes into a Skill (pure: no disk access).

The frontmatter is the YAML between a first line ``---`` and the next line that is exactly
``---`` (trailing whitespace and CR ignored, so an indented or quoted ``---`` inside a value is
not a delimiter). A UTF-8 BOM and CRLF line ends are accepted. YAML that fails to load is retried
once with values holding ``": "`` single-quoted (a common mistake other clients accept); if it
still fails the file is skipped. A missing ``name`` falls back to the directory name with a
warning. YAML is read by pyyaml's
safe loader (the libyaml one when available). The body is not stored on the Skill;
``split_frontmatter`` gives it back on demand.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import yaml

from router.errors import SkillParseError
from router.skills.fields import build_skill
from router.skills.limits import BODY_LINT_LINES, SKILL_FILE_MAX_BYTES
from router.skills.model import Diagnostic, Level, Scope, Skill, SkillKind

log = logging.getLogger(__name__)

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_KEY_VALUE = re.compile(r"^(?P<head>[ \t]*[A-Za-z0-9_][\w.\-]*[ \t]*:[ \t]+)(?P<value>\S.*?)\s*$")
_CLOSING = re.compile(r"^---[^\S\n]*$", re.MULTILINE)
_BLOCK_SCALAR = re.compile(r"^[|>][-+0-9]*\s*(#.*)?$")


class _YamlFailure(Exception):
    def __init__(self, problem: str, line: int | None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line


def _normalise(text: str) -> str:
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode_text(data: bytes, *, path: str = "", max_bytes: int = SKILL_FILE_MAX_BYTES) -> str:
    """Check size and encoding, then return the text with ``\\n`` line ends and no BOM."""
    if len(data) > max_bytes:
        raise SkillParseError(f"file is larger than {max_bytes} bytes; skipped", path=path)
    if b"\x00" in data:
        raise SkillParseError("binary file (contains NUL bytes); skipped", path=path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SkillParseError(f"not valid UTF-8 (byte {exc.start}); skipped", path=path) from exc
    return _normalise(text)


def split_frontmatter(text: str) -> tuple[str, str]:
    """Return ``(frontmatter_yaml, body)``; the body is trimmed.

    Raises ``SkillParseError`` when the text does not start with a ``---`` line or the
    frontmatter is never closed.
    """
    text = _normalise(text)
    first_end = text.find("\n")
    first_line = text if first_end < 0 else text[:first_end]
    if first_line.rstrip() != "---":
        raise SkillParseError("no YAML frontmatter: the first line must be '---'")
    if first_end >= 0:
        closing = _CLOSING.search(text, first_end + 1)
        if closing is not None:
            front = text[first_end + 1:closing.start()]
            return front[:-1] if front.endswith("\n") else front, text[closing.end():].strip()
    raise SkillParseError("frontmatter is not closed by a '---' line")


def _needs_quotes(value: str) -> bool:
    if value[0] in "\"'[{&*!|>#":
        return False
    return ": " in value or value.endswith(":") or value[0] in "@`%"


def quote_colon_values(yaml_text: str) -> str:
    """Single-quote plain ``key: value`` values that hold ``": "`` (block scalars untouched)."""
    out: list[str] = []
    block_indent: int | None = None
    for line in yaml_text.split("\n"):
        indent = len(line) - len(line.lstrip(" \t"))
        if block_indent is not None and (not line.strip() or indent > block_indent):
            out.append(line)
            continue
        block_indent = None
        match = _KEY_VALUE.match(line)
        if match:
            value = match["value"]
            if _BLOCK_SCALAR.match(value):
                block_indent = indent
            elif _needs_quotes(value):
                line = match["head"] + "'" + value.replace("'", "''") + "'"
        out.append(line)
    return "\n".join(out)


def _safe_load(yaml_text: str) -> Any:
    try:
        return yaml.load(yaml_text, Loader=_LOADER)  # CSafeLoader / SafeLoader only
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = mark.line + 2 if mark is not None else None  # +1 for 1-based, +1 for '---'
        raise _YamlFailure(str(exc.problem or exc.context or "syntax error"), line) from exc
    except Exception as exc:  # pyyaml also raises ValueError, RecursionError, ...
        raise _YamlFailure(f"{type(exc).__name__}: {exc}", None) from exc


def load_frontmatter(yaml_text: str, *, path: str = "") -> tuple[dict[Any, Any], bool]:
    """Load the frontmatter mapping; the flag says the colon-quoting retry was needed."""
    repaired = False
    try:
        loaded = _safe_load(yaml_text)
    except _YamlFailure as first:
        fixed = quote_colon_values(yaml_text)
        error = SkillParseError(f"invalid YAML frontmatter: {first.problem}",
                                path=path, line=first.line)
        if fixed == yaml_text:
            raise error from first
        try:
            loaded = _safe_load(fixed)
        except _YamlFailure:
            raise error from first
        repaired = True
    if loaded is None:
        return {}, repaired
    if not isinstance(loaded, dict):
        raise SkillParseError(f"frontmatter must be a YAML mapping, not {type(loaded).__name__}",
                              path=path)
    return loaded, repaired


def body_diagnostics(body: str, path: str) -> list[Diagnostic]:
    """Warnings about the Markdown body (length)."""
    count = len(body.splitlines())
    if count > BODY_LINT_LINES:
        return [Diagnostic(Level.WARNING, path,
                           f"body is {count} lines; keep SKILL.md under {BODY_LINT_LINES} lines "
                           "and move details into referenced files")]
    return []


def parse_skill_md(data: bytes, *, location: str, base_dir: str, scope: Scope,
                   max_bytes: int = SKILL_FILE_MAX_BYTES) -> tuple[Skill, list[Diagnostic]]:
    """Parse SKILL.md bytes; raise ``SkillParseError`` (only) when the skill must be skipped."""
    text = decode_text(data, path=location, max_bytes=max_bytes)
    try:
        yaml_text, body = split_frontmatter(text)
    except SkillParseError as exc:
        raise SkillParseError(exc.reason, path=location) from exc
    fields, repaired = load_frontmatter(yaml_text, path=location)
    skill, diags = build_skill(fields, raw=data, location=location, base_dir=base_dir,
                               scope=scope, kind=SkillKind.SKILL_MD)
    if repaired:
        diags.insert(0, Diagnostic(Level.WARNING, location,
                                   "frontmatter is not valid YAML (a value holds an unquoted "
                                   "': '); loaded after quoting it"))
    diags.extend(body_diagnostics(body, location))
    return skill, diags


def diagnostic_from_error(exc: SkillParseError, path: str) -> Diagnostic:
    """The error diagnostic recorded for a skipped skill."""
    where = f" (line {exc.line})" if exc.line is not None else ""
    return Diagnostic(Level.ERROR, exc.path or path, exc.reason + where)
