"""Turn a loaded frontmatter / manifest mapping into a Skill, leniently (pure: no disk).

Shared by ``parse.py`` (SKILL.md) and ``manifest.py`` (manifest.json). Cosmetic problems become
warnings and the skill still loads; only a missing or empty ``description`` (or a mapping too
large to be a real frontmatter) raises ``SkillParseError``.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
from collections.abc import Callable, Mapping
from typing import Any

from router.common.textsafe import is_unicode
from router.errors import SkillParseError
from router.skills.limits import (
    COMPATIBILITY_LINT_CHARS,
    DESCRIPTION_CHARS,
    NAME_LINT_CHARS,
    truncate_description,
)
from router.skills.model import Diagnostic, Level, Scope, Skill, SkillKind

log = logging.getLogger(__name__)

NAME_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
ALWAYS_ON_KEY = "router.always_on"
SPEC_KEYS = frozenset({"name", "description", "license", "compatibility", "metadata",
                       "allowed-tools", "disable-model-invocation", "user-invocable"})
STATE_KEYS = ("enabled", "deprecated")
_MAX_NODES = 10_000
_MAX_DEPTH = 32
_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})
_TOOL_TOKEN = re.compile(r"[^\s,()]+(?:\([^)]*\))?")

Warn = Callable[[str], None]


def to_jsonable(value: Any, *, path: str) -> Any:
    """Copy ``value`` into plain JSON types (str keys; dates and bytes become strings).

    Raises ``SkillParseError`` for structures too deep or too large (e.g. YAML alias bombs),
    and for text that is not valid Unicode (a lone surrogate such as JSON's ``"\\ud800"``),
    which no index file or reply could carry.
    """
    budget = [_MAX_NODES]

    def text(item: str) -> str:
        if not is_unicode(item):
            raise SkillParseError("text holds a lone surrogate (e.g. \\ud800), which is not "
                                  "valid Unicode; skill not loaded", path=path)
        return item

    def conv(item: Any, depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0 or depth > _MAX_DEPTH:
            raise SkillParseError("frontmatter is too large or too deeply nested", path=path)
        if isinstance(item, str):
            return text(item)
        if item is None or isinstance(item, bool | int):
            return item
        if isinstance(item, float):
            return item if math.isfinite(item) else str(item)
        if isinstance(item, Mapping):
            return {text(str(k)): conv(v, depth + 1) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return [conv(v, depth + 1) for v in item]
        if isinstance(item, set | frozenset):
            return [conv(v, depth + 1) for v in sorted(item, key=repr)]
        if isinstance(item, bytes):
            return item.decode("utf-8", "replace")
        return str(item)

    return conv(value, 0)


def coerce_bool(value: Any, key: str, default: bool, warn: Warn, *, strings_ok: bool) -> bool:
    """Read a boolean leniently: true/false, yes/no, on/off, 1/0 (warning unless expected)."""
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if isinstance(value, str | int) else None
    if text in _TRUE or text in _FALSE:
        if not (strings_ok and isinstance(value, str)):
            warn(f"{key} should be a boolean, got {value!r}")
        return text in _TRUE
    warn(f"{key}: cannot read {value!r} as a boolean; using {str(default).lower()}")
    return default


def _text(value: Any, key: str, warn: Warn) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    warn(f"{key} should be a string, got {type(value).__name__}; converted")
    return str(value).strip()


def _name(fields: Mapping[str, Any], base_dir: str, path: str, warn: Warn) -> str:
    dir_name = os.path.basename(os.path.normpath(base_dir)) if base_dir else ""
    raw = fields.get("name")
    if isinstance(raw, Mapping | list) or raw is None or not str(raw).strip():
        if not dir_name or dir_name in {".", "/"}:
            raise SkillParseError("missing name and no directory name to use instead", path=path)
        warn(f"missing or unusable name; using the directory name {dir_name!r}")
        return dir_name
    name = _text(raw, "name", warn)
    if len(name) > NAME_LINT_CHARS:
        warn(f"name is {len(name)} characters; the limit is {NAME_LINT_CHARS}")
    if not NAME_PATTERN.match(name):
        warn(f"name {name!r} should be lowercase letters, digits and single hyphens "
             "(not starting or ending with a hyphen)")
    if dir_name and name != dir_name:
        warn(f"name {name!r} does not match its directory name {dir_name!r}")
    return name


def _description(fields: Mapping[str, Any], path: str, warn: Warn) -> str:
    raw = fields.get("description")
    if raw is None:
        raise SkillParseError("missing description (required); skill not loaded", path=path)
    if isinstance(raw, Mapping | list):
        raise SkillParseError("description must be a string; skill not loaded", path=path)
    text = _text(raw, "description", warn)
    if not text:
        raise SkillParseError("empty description; skill not loaded", path=path)
    if len(text) > DESCRIPTION_CHARS:
        warn(f"description is {len(text)} characters; the limit is {DESCRIPTION_CHARS}: "
             f"truncated to {DESCRIPTION_CHARS} in the index and catalog")
        return truncate_description(text)
    return text


def _metadata(value: Any, warn: Warn) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        warn(f"metadata should be a mapping, got {type(value).__name__}; ignored")
        return {}
    odd = sorted(k for k, v in value.items() if not isinstance(v, str))
    if odd:
        warn(f"metadata values should be strings: {', '.join(odd)}")
    return dict(value)


def _allowed_tools(value: Any, warn: Warn) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(_TOOL_TOKEN.findall(value))
    if isinstance(value, list):
        return tuple(str(v).strip() for v in value if v is not None and str(v).strip())
    warn("allowed-tools should be a space-separated string; ignored")
    return ()


def _state(fields: Mapping[str, Any], meta: Mapping[str, Any], warn: Warn,
           *, top_level_standard: bool) -> tuple[bool, bool, bool]:
    """``enabled``, ``deprecated`` (top level or metadata) and ``router.always_on``."""
    enabled, deprecated = True, False
    for key in (k for k in STATE_KEYS if k in fields):
        if not top_level_standard:
            warn(f"non-standard top-level key {key!r} honoured; prefer metadata.{key}")
        flag = coerce_bool(fields[key], key, key == "enabled", warn, strings_ok=False)
        enabled, deprecated = (flag, deprecated) if key == "enabled" else (enabled, flag)
    if "enabled" in meta:
        enabled = enabled and coerce_bool(meta["enabled"], "metadata.enabled", True, warn,
                                          strings_ok=True)
    if "deprecated" in meta:
        deprecated = deprecated or coerce_bool(meta["deprecated"], "metadata.deprecated", False,
                                               warn, strings_ok=True)
    always_on = ALWAYS_ON_KEY in meta and coerce_bool(
        meta[ALWAYS_ON_KEY], f"metadata.{ALWAYS_ON_KEY}", False, warn, strings_ok=True)
    return enabled, deprecated, always_on


def build_skill(fields: Mapping[str, Any], *, raw: bytes, location: str, base_dir: str,
                scope: Scope, kind: SkillKind,
                extra_keys: frozenset[str] = frozenset()) -> tuple[Skill, list[Diagnostic]]:
    """Build a Skill from a frontmatter-shaped mapping; return it with its warnings."""
    diags: list[Diagnostic] = []

    def warn(message: str) -> None:
        diags.append(Diagnostic(Level.WARNING, location, message))

    data: dict[str, Any] = to_jsonable(fields, path=location)
    name = _name(data, base_dir, location, warn)
    description = _description(data, location, warn)
    compatibility = _text(data.get("compatibility"), "compatibility", warn)
    if len(compatibility) > COMPATIBILITY_LINT_CHARS:
        warn(f"compatibility is {len(compatibility)} characters; "
             f"the limit is {COMPATIBILITY_LINT_CHARS}")
    meta = _metadata(data.get("metadata"), warn)
    manifest = kind is SkillKind.MANIFEST
    enabled, deprecated, always_on = _state(data, meta, warn, top_level_standard=manifest)
    unknown = sorted(set(data) - SPEC_KEYS - extra_keys - set(STATE_KEYS))
    if unknown:
        warn(f"unknown keys kept as-is: {', '.join(unknown)}")
    skill = Skill(
        name=name, description=description, location=location, base_dir=base_dir,
        scope=scope, kind=kind,
        model_invocable=not coerce_bool(data.get("disable-model-invocation", False),
                                        "disable-model-invocation", False, warn,
                                        strings_ok=False),
        user_invocable=coerce_bool(data.get("user-invocable", True), "user-invocable", True,
                                   warn, strings_ok=False),
        enabled=enabled, deprecated=deprecated, always_on=always_on,
        license=_text(data.get("license"), "license", warn), compatibility=compatibility,
        allowed_tools=_allowed_tools(data.get("allowed-tools"), warn),
        metadata=meta, frontmatter=data, content_hash=hashlib.sha256(raw).hexdigest(),
    )
    return skill, diags
