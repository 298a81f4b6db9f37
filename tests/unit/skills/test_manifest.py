"""manifest.json callable skills, and a manifest beside SKILL.md."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from router.errors import SkillParseError
from router.skills.manifest import NO_PARAMETERS, attach_manifest, parse_manifest
from router.skills.model import Level, Scope, SkillKind
from router.skills.parse import parse_skill_md

BASE = "/skills/search-kb"
LOC = BASE + "/manifest.json"
PARAMS = {"type": "object", "properties": {"query": {"type": "string"},
                                           "top_k": {"type": "integer", "minimum": 1}},
          "required": ["query"]}


def manifest(**fields: Any) -> bytes:
    doc = {"name": "search-kb",
           "description": "Searches the knowledge base by keyword. Use when the user asks "
                          "about internal documents.",
           "parameters": PARAMS}
    doc.update(fields)
    return json.dumps({k: v for k, v in doc.items() if v is not None}).encode()


def parse(data: bytes):
    return parse_manifest(data, location=LOC, base_dir=BASE, scope=Scope.ORG)


def test_valid_manifest() -> None:
    data = manifest(version="1.2.0", metadata={"owner": "kb-team"})
    skill, diags = parse(data)
    assert diags == []
    assert skill.kind is SkillKind.MANIFEST
    assert skill.name == "search-kb" and skill.location == LOC and skill.scope is Scope.ORG
    assert dict(skill.parameters or {}) == PARAMS
    assert dict(skill.metadata) == {"owner": "kb-team", "version": "1.2.0"}
    assert skill.enabled and not skill.deprecated and skill.routable
    assert skill.content_hash == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("params", [
    {"type": "not-a-type"},
    {"type": "object", "properties": {"q": {"type": 5}}},
    {"type": "object", "required": "query"},
    ["not", "an", "object"],
    "string",
])
def test_invalid_schema_is_an_error(params: Any) -> None:
    with pytest.raises(SkillParseError, match="parameters"):
        parse(manifest(parameters=params))


def test_disabled_and_deprecated() -> None:
    skill, diags = parse(manifest(enabled=False))
    assert diags == [] and skill.enabled is False and not skill.routable
    skill, diags = parse(manifest(deprecated=True))
    assert diags == [] and skill.deprecated is True and not skill.routable


def test_missing_parameters_warns_and_takes_no_arguments() -> None:
    skill, diags = parse(manifest(parameters=None))
    assert dict(skill.parameters or {}) == NO_PARAMETERS
    assert "no parameters schema" in diags[0].message


def test_non_object_schema_type_warns() -> None:
    _, diags = parse(manifest(parameters={"type": "string"}))
    assert "type 'object'" in diags[0].message


@pytest.mark.parametrize("data, match", [
    (b'{"name": "x",', "invalid JSON"),
    (b"[1, 2]", "JSON object"),
    (b"\x00\x01", "binary"),
    (b"[" * 100_000, "invalid JSON"),
])
def test_broken_json_is_an_error(data: bytes, match: str) -> None:
    with pytest.raises(SkillParseError, match=match):
        parse(data)


def test_json_error_has_line() -> None:
    with pytest.raises(SkillParseError) as info:
        parse(b'{\n  "name": "x",\n  oops\n}')
    assert info.value.line == 3


def test_same_rules_as_skill_md() -> None:
    with pytest.raises(SkillParseError, match="description"):
        parse(manifest(description=""))
    skill, diags = parse(manifest(name=None, extra=1))
    assert skill.name == "search-kb"
    text = " ".join(d.message for d in diags)
    assert "missing or unusable name" in text and "unknown keys kept as-is: extra" in text


SKILL_MD = (b"---\nname: search-kb\ndescription: Searches the knowledge base. Use when the "
            b"user asks about internal documents.\n---\n# Search\n")


def md_skill():
    skill, _ = parse_skill_md(SKILL_MD, location=BASE + "/SKILL.md", base_dir=BASE,
                              scope=Scope.ORG)
    return skill


def test_attach_manifest_adds_parameters_and_skill_md_wins() -> None:
    base = md_skill()
    skill, diags = attach_manifest(base, manifest(name="other", description="ignored"),
                                   location=LOC)
    assert skill.name == "search-kb" and skill.description == base.description
    assert skill.kind is SkillKind.SKILL_MD and skill.location == BASE + "/SKILL.md"
    assert dict(skill.parameters or {}) == PARAMS
    assert skill.content_hash != base.content_hash
    assert [d.level for d in diags] == [Level.WARNING]
    assert "SKILL.md wins" in diags[0].message


def test_attach_parameters_only_manifest() -> None:
    data = json.dumps({"parameters": PARAMS}).encode()
    skill, diags = attach_manifest(md_skill(), data, location=LOC)
    assert diags == [] and dict(skill.parameters or {}) == PARAMS


def test_attach_manifest_can_switch_the_skill_off() -> None:
    data = json.dumps({"enabled": False, "deprecated": True}).encode()
    skill, _ = attach_manifest(md_skill(), data, location=LOC)
    assert not skill.enabled and skill.deprecated and skill.parameters is None


@pytest.mark.parametrize("data", [b"{broken", json.dumps({"parameters": {"type": 1}}).encode()])
def test_broken_attached_manifest_is_a_warning(data: bytes) -> None:
    base = md_skill()
    skill, diags = attach_manifest(base, data, location=LOC)
    assert skill == base
    assert [d.level for d in diags] == [Level.WARNING]
    assert "manifest.json ignored" in diags[0].message
