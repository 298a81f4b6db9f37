"""Callable skills described by ``manifest.json`` (pure: no disk access).

A manifest holds ``name``, ``description``, ``parameters`` (a JSON Schema, checked against its
metaschema), and optionally ``enabled``, ``deprecated``, ``version``, ``metadata`` and the keys
SKILL.md frontmatter allows. The SKILL.md rules apply: a missing/empty description or broken
JSON skips the skill; cosmetic problems are warnings. An invalid ``parameters`` schema skips it.

When a folder holds both SKILL.md and manifest.json, SKILL.md wins for every field it defines
(name, description, body, flags); the manifest contributes ``parameters`` only, and may also
switch the skill off (``enabled: false``) or mark it ``deprecated: true``. Problems in such a
manifest are warnings, because the SKILL.md skill still loads.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from typing import Any

from router.errors import SkillParseError
from router.skills.fields import build_skill, coerce_bool, to_jsonable
from router.skills.limits import SKILL_FILE_MAX_BYTES
from router.skills.model import Diagnostic, Level, Scope, Skill, SkillKind
from router.skills.parse import decode_text

log = logging.getLogger(__name__)

MANIFEST_KEYS = frozenset({"parameters", "version", "execute"})
NO_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


def load_manifest_json(data: bytes, *, path: str = "",
                       max_bytes: int = SKILL_FILE_MAX_BYTES) -> dict[str, Any]:
    """Decode manifest bytes into a JSON object or raise ``SkillParseError``."""
    text = decode_text(data, path=path, max_bytes=max_bytes)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SkillParseError(f"invalid JSON: {exc.msg}", path=path, line=exc.lineno) from exc
    except (ValueError, RecursionError) as exc:
        raise SkillParseError(f"invalid JSON: {exc}", path=path) from exc
    if not isinstance(doc, dict):
        raise SkillParseError(f"manifest must be a JSON object, not {type(doc).__name__}",
                              path=path)
    return doc


def check_parameters(value: Any, *, path: str = "") -> dict[str, Any]:
    """Return ``value`` if it is a valid JSON Schema object, else raise ``SkillParseError``."""
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    if not isinstance(value, dict):
        raise SkillParseError("parameters must be a JSON Schema object", path=path)
    try:
        validator_for(value).check_schema(value)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        raise SkillParseError(f"parameters is not a valid JSON Schema at {where}: {exc.message}",
                              path=path) from exc
    except Exception as exc:  # third-party checker on untrusted input
        raise SkillParseError(f"parameters could not be checked: {exc}", path=path) from exc
    checked: dict[str, Any] = to_jsonable(value, path=path)
    return checked


def _with_version(doc: dict[str, Any]) -> dict[str, Any]:
    """Copy ``version`` into ``metadata`` (the Skill record has no version field)."""
    if "version" not in doc or doc["version"] is None:
        return doc
    meta = doc.get("metadata")
    if meta is None:
        meta = {}
    if isinstance(meta, dict) and "version" not in meta:
        return {**doc, "metadata": {**meta, "version": str(doc["version"])}}
    return doc


def parse_manifest(data: bytes, *, location: str, base_dir: str, scope: Scope,
                   max_bytes: int = SKILL_FILE_MAX_BYTES) -> tuple[Skill, list[Diagnostic]]:
    """Parse manifest.json bytes; raise ``SkillParseError`` (only) when it must be skipped."""
    doc = load_manifest_json(data, path=location, max_bytes=max_bytes)
    skill, diags = build_skill(_with_version(doc), raw=data, location=location,
                               base_dir=base_dir, scope=scope, kind=SkillKind.MANIFEST,
                               extra_keys=MANIFEST_KEYS)
    if doc.get("parameters") is None:
        diags.append(Diagnostic(Level.WARNING, location,
                                "no parameters schema; the skill takes no arguments"))
        params = dict(NO_PARAMETERS)
    else:
        params = check_parameters(doc["parameters"], path=location)
        if params.get("type", "object") != "object":
            diags.append(Diagnostic(Level.WARNING, location,
                                    "parameters schema should have type 'object'"))
    return dataclasses.replace(skill, parameters=params), diags


def attach_manifest(skill: Skill, data: bytes, *, location: str,
                    max_bytes: int = SKILL_FILE_MAX_BYTES) -> tuple[Skill, list[Diagnostic]]:
    """Attach a sibling manifest's parameters (and off/deprecated switches) to a SKILL.md skill.

    Never raises: a broken manifest becomes a warning and ``skill`` is returned unchanged.
    ``content_hash`` then covers both files.
    """
    diags: list[Diagnostic] = []

    def warn(message: str) -> None:
        diags.append(Diagnostic(Level.WARNING, location, message))

    try:
        doc = load_manifest_json(data, path=location, max_bytes=max_bytes)
        raw_params = doc.get("parameters")
        params = None if raw_params is None else check_parameters(raw_params, path=location)
    except SkillParseError as exc:
        line = f" (line {exc.line})" if exc.line is not None else ""
        return skill, [Diagnostic(Level.WARNING, location,
                                  f"manifest.json ignored: {exc.reason}{line}")]
    other = doc.get("name")
    if other is not None and other != skill.name:
        warn(f"manifest name {other!r} differs from SKILL.md name {skill.name!r}; "
             "SKILL.md wins")
    enabled = coerce_bool(doc.get("enabled"), "enabled", True, warn, strings_ok=False)
    deprecated = coerce_bool(doc.get("deprecated"), "deprecated", False, warn, strings_ok=False)
    digest = hashlib.sha256(data).hexdigest()
    combined = hashlib.sha256((skill.content_hash + digest).encode("ascii")).hexdigest()
    return dataclasses.replace(
        skill, parameters=params if params is not None else skill.parameters,
        enabled=skill.enabled and enabled, deprecated=skill.deprecated or deprecated,
        content_hash=combined), diags
