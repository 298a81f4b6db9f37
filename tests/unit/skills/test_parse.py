"""SKILL.md parsing: frontmatter splitting, YAML fallback, lenient validation."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from router.errors import SkillParseError
from router.skills.limits import SKILL_FILE_MAX_BYTES
from router.skills.model import Level, Scope, SkillKind
from router.skills.parse import (
    diagnostic_from_error,
    load_frontmatter,
    parse_skill_md,
    quote_colon_values,
    split_frontmatter,
)

BASE = "/skills/pdf-processing"
LOC = BASE + "/SKILL.md"
DESC = "Extracts text from PDF files. Use when the user mentions PDFs."


def parse(text: str | bytes, base: str = BASE, **kw: object):
    data = text.encode("utf-8") if isinstance(text, str) else text
    return parse_skill_md(data, location=base + "/SKILL.md", base_dir=base,
                          scope=Scope.USER, **kw)  # type: ignore[arg-type]


def skill_text(front: str, body: str = "# Title\n\nDo it.\n") -> str:
    return f"---\n{front.strip()}\n---\n{body}"


def messages(diags: list) -> str:
    return "\n".join(d.message for d in diags)


# --- the happy path -----------------------------------------------------------------------


def test_minimal_skill_loads_without_diagnostics() -> None:
    raw = skill_text(f"name: pdf-processing\ndescription: {DESC}")
    skill, diags = parse(raw)
    assert diags == []
    assert skill.name == "pdf-processing"
    assert skill.description == DESC
    assert skill.location == LOC and skill.base_dir == BASE
    assert skill.scope is Scope.USER and skill.kind is SkillKind.SKILL_MD
    assert skill.content_hash == hashlib.sha256(raw.encode()).hexdigest()
    assert skill.model_invocable and skill.user_invocable and skill.enabled
    assert not skill.deprecated and not skill.always_on and skill.parameters is None


def test_optional_spec_fields() -> None:
    skill, diags = parse(skill_text(f"""
name: pdf-processing
description: {DESC}
license: Apache-2.0
compatibility: Requires poppler-utils
metadata:
  author: example-org
  version: "1.0"
allowed-tools: Bash(git commit:*) Read Write
disable-model-invocation: true
user-invocable: false
"""))
    assert diags == []
    assert skill.license == "Apache-2.0"
    assert skill.compatibility == "Requires poppler-utils"
    assert dict(skill.metadata) == {"author": "example-org", "version": "1.0"}
    assert skill.allowed_tools == ("Bash(git commit:*)", "Read", "Write")
    assert skill.model_invocable is False
    assert skill.user_invocable is False
    assert skill.routable is False


def test_allowed_tools_as_yaml_list_and_comma_string() -> None:
    skill, _ = parse(skill_text(f"name: pdf-processing\ndescription: {DESC}\n"
                                "allowed-tools:\n  - Read\n  - Grep"))
    assert skill.allowed_tools == ("Read", "Grep")
    skill, _ = parse(skill_text(f"name: pdf-processing\ndescription: {DESC}\n"
                                "allowed-tools: Read, Grep, Glob"))
    assert skill.allowed_tools == ("Read", "Grep", "Glob")


def test_crlf_and_bom_are_tolerated() -> None:
    text = skill_text(f"name: pdf-processing\ndescription: {DESC}", "\n# Body\n\nline\n")
    data = b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()
    skill, diags = parse(data)
    assert diags == []
    assert skill.name == "pdf-processing" and skill.description == DESC
    assert skill.content_hash == hashlib.sha256(data).hexdigest()
    assert split_frontmatter(data.decode("utf-8"))[1] == "# Body\n\nline"


def test_unquoted_colon_in_value_is_retried_and_loads_with_warning() -> None:
    text = skill_text("name: pdf-processing\n"
                      "description: Use this skill when: the user asks about PDFs")
    skill, diags = parse(text)
    assert skill.description == "Use this skill when: the user asks about PDFs"
    assert [d.level for d in diags] == [Level.WARNING]
    assert "unquoted ': '" in diags[0].message


def test_colon_retry_keeps_quotes_and_block_scalars_intact() -> None:
    yaml_text = ("name: x\ndescription: It's odd: really\nnotes: >\n  keep: this\n"
                 "quoted: \"a: b\"\n")
    fixed = quote_colon_values(yaml_text)
    assert "description: 'It''s odd: really'" in fixed
    assert "  keep: this" in fixed and 'quoted: "a: b"' in fixed
    loaded, repaired = load_frontmatter(yaml_text)
    assert repaired and loaded["description"] == "It's odd: really"
    assert loaded["notes"] == "keep: this\n"


def test_triple_dash_inside_values_is_not_a_delimiter() -> None:
    text = ('---\nname: pdf-processing\ndescription: "Splits on --- markers. Use when '
            'needed."\nlong: >\n  first\n  ---\n  last\n---\nbody --- here\n---\nmore\n')
    skill, diags = parse(text)
    assert skill.description == "Splits on --- markers. Use when needed."
    assert skill.frontmatter["long"].strip() == "first --- last"
    assert split_frontmatter(text)[1] == "body --- here\n---\nmore"
    assert "unknown keys kept as-is: long" in messages(diags)


def test_closing_delimiter_may_have_trailing_whitespace() -> None:
    assert split_frontmatter("---  \na: 1\n--- \t\n\n body \n\n") == ("a: 1", "body")


@pytest.mark.parametrize("text, reason", [
    ("# no frontmatter\n", "no YAML frontmatter"),
    ("\n---\nname: a\n---\n", "no YAML frontmatter"),
    ("---\nname: a\ndescription: b\n", "not closed"),
    ("", "no YAML frontmatter"),
])
def test_missing_or_unclosed_frontmatter_is_an_error(text: str, reason: str) -> None:
    with pytest.raises(SkillParseError, match=reason) as info:
        parse(text)
    assert info.value.path == LOC


# --- skip-worthy errors ------------------------------------------------------------------


@pytest.mark.parametrize("front", [
    "name: pdf-processing",
    "name: pdf-processing\ndescription:",
    "name: pdf-processing\ndescription: '   '",
    "name: pdf-processing\ndescription: [a, b]",
    "",
])
def test_missing_or_empty_description_is_an_error(front: str) -> None:
    with pytest.raises(SkillParseError, match="description"):
        parse(skill_text(front) if front else "---\n---\nbody")


def test_unparseable_yaml_names_file_and_line() -> None:
    text = skill_text("name: pdf-processing\ndescription: ok\nbad: [unclosed\nother: 1")
    with pytest.raises(SkillParseError, match="invalid YAML") as info:
        parse(text)
    assert info.value.path == LOC
    assert info.value.line is not None and info.value.line >= 4
    assert f"{LOC}:{info.value.line}" in str(info.value)
    diag = diagnostic_from_error(info.value, "fallback")
    assert diag.level is Level.ERROR and diag.path == LOC
    assert f"(line {info.value.line})" in diag.message


@pytest.mark.parametrize("front", ["- a\n- b", "just a string", "42"])
def test_frontmatter_must_be_a_mapping(front: str) -> None:
    with pytest.raises(SkillParseError, match="mapping"):
        parse(skill_text(front))


def test_binary_file_is_an_error() -> None:
    with pytest.raises(SkillParseError, match="binary"):
        parse(b"---\nname: a\x00\ndescription: b\n---\n")


def test_non_utf8_file_is_an_error() -> None:
    with pytest.raises(SkillParseError, match="UTF-8"):
        parse(b"---\nname: a\ndescription: caf\xe9\n---\n")


def test_size_cap() -> None:
    text = skill_text(f"name: pdf-processing\ndescription: {DESC}", "x" * 2000)
    with pytest.raises(SkillParseError, match="larger than 1000 bytes"):
        parse(text, max_bytes=1000)
    big = skill_text(f"name: pdf-processing\ndescription: {DESC}", "y\n" * SKILL_FILE_MAX_BYTES)
    with pytest.raises(SkillParseError, match="larger than"):
        parse(big)


def test_yaml_constructor_value_errors_become_parse_errors() -> None:
    with pytest.raises(SkillParseError):
        parse(skill_text("name: a\ndescription: b\ndate: 2020-13-45"))


def test_alias_bomb_is_rejected_not_expanded() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 8)]
    with pytest.raises(SkillParseError, match="too large"):
        parse(skill_text("name: a\ndescription: b\n" + "\n".join(lines)))


# --- lenient warnings ------------------------------------------------------------------


def test_missing_name_uses_directory_name() -> None:
    skill, diags = parse(skill_text(f"description: {DESC}"))
    assert skill.name == "pdf-processing"
    assert "missing or unusable name" in messages(diags)


@pytest.mark.parametrize("name, expected", [
    ("other-name", "does not match its directory"),
    ("PDF-Processing", "lowercase"),
    ("-pdf", "lowercase"),
    ("pdf--processing", "lowercase"),
    ("a" * 65, "65 characters"),
])
def test_name_problems_warn_and_still_load(name: str, expected: str) -> None:
    skill, diags = parse(skill_text(f"name: {name}\ndescription: {DESC}"))
    assert skill.name == name
    assert all(d.level is Level.WARNING for d in diags)
    assert expected in messages(diags)


def test_numeric_name_is_converted() -> None:
    skill, diags = parse(skill_text(f"name: 123\ndescription: {DESC}"), base="/s/123")
    assert skill.name == "123"
    assert "name should be a string" in messages(diags)


def test_long_description_body_and_compatibility_warn() -> None:
    long_desc = "Extracts text. " * 80
    text = skill_text(f"name: pdf-processing\ndescription: {long_desc}\n"
                      f"compatibility: {'c' * 501}", "line\n" * 501)
    skill, diags = parse(text)
    found = messages(diags)
    assert "characters; the limit is 1024: truncated to 1024" in found
    assert "the limit is 500" in found
    assert "body is 501 lines" in found
    assert len(skill.description) == 1024 and skill.description.endswith("\u2026")
    assert long_desc.startswith(skill.description[:-1])


def test_non_string_compatibility_is_converted_with_warning() -> None:
    skill, diags = parse(skill_text(f"name: pdf-processing\ndescription: {DESC}\n"
                                    "compatibility: 3.11"))
    assert skill.compatibility == "3.11"
    assert "compatibility should be a string" in messages(diags)


def test_unknown_keys_are_kept_and_warned() -> None:
    skill, diags = parse(skill_text(f"name: pdf-processing\ndescription: {DESC}\n"
                                    "argument-hint: '[file]'\nmodel: fast"))
    assert skill.frontmatter["argument-hint"] == "[file]"
    assert skill.frontmatter["model"] == "fast"
    assert "unknown keys kept as-is: argument-hint, model" in messages(diags)


def test_router_metadata_flags() -> None:
    skill, diags = parse(skill_text(f"""
name: pdf-processing
description: {DESC}
metadata:
  router.always_on: "true"
  enabled: "false"
  deprecated: "true"
"""))
    assert diags == []
    assert skill.always_on and not skill.enabled and skill.deprecated


def test_top_level_enabled_and_deprecated_are_honoured_with_warning() -> None:
    skill, diags = parse(skill_text(f"name: pdf-processing\ndescription: {DESC}\n"
                                    "enabled: false\ndeprecated: true"))
    assert not skill.enabled and skill.deprecated and not skill.routable
    assert "non-standard top-level key 'enabled'" in messages(diags)
    assert "non-standard top-level key 'deprecated'" in messages(diags)


def test_lenient_booleans() -> None:
    skill, diags = parse(skill_text(f"name: pdf-processing\ndescription: {DESC}\n"
                                    "disable-model-invocation: 'yes'\nuser-invocable: maybe"))
    assert skill.model_invocable is False
    assert skill.user_invocable is True
    assert "should be a boolean" in messages(diags) and "cannot read" in messages(diags)


def test_bad_metadata_is_ignored_with_warning() -> None:
    skill, diags = parse(skill_text(f"name: pdf-processing\ndescription: {DESC}\n"
                                    "metadata: [a, b]"))
    assert dict(skill.metadata) == {}
    assert "metadata should be a mapping" in messages(diags)
    skill, diags = parse(skill_text(f"name: pdf-processing\ndescription: {DESC}\n"
                                    "metadata:\n  version: 2"))
    assert skill.metadata["version"] == 2
    assert "metadata values should be strings: version" in messages(diags)


def test_frontmatter_is_json_serialisable() -> None:
    skill, _ = parse(skill_text(f"name: pdf-processing\ndescription: {DESC}\n"
                                "created: 2024-01-02\nratio: .nan\nblob: !!binary aGk=\n"
                                "tags: !!set {a, b}\n7: seven"))
    encoded = json.loads(json.dumps(skill.to_dict(), allow_nan=False))
    assert encoded["frontmatter"]["created"] == "2024-01-02"
    assert encoded["frontmatter"]["tags"] == ["a", "b"]
    assert encoded["frontmatter"]["7"] == "seven"


def test_split_frontmatter_is_pure_text() -> None:
    front, body = split_frontmatter("---\nname: a\n---\n\n  # Hi  \n\n")
    assert front == "name: a" and body == "# Hi"


# --- property-based: the parser raises SkillParseError or nothing --------------------------


def _parse_never_crashes(data: bytes) -> None:
    try:
        skill, diags = parse(data)
    except SkillParseError:
        return
    assert skill.description.strip()
    json.dumps(skill.to_dict())
    assert all(d.level is Level.WARNING for d in diags)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=600))
def test_arbitrary_bytes_only_raise_skill_parse_error(data: bytes) -> None:
    _parse_never_crashes(data)
    _parse_never_crashes(b"---\n" + data + b"\n---\nbody")


_KEYS = st.sampled_from(["name", "description", "metadata", "allowed-tools", "license",
                         "compatibility", "disable-model-invocation", "user-invocable",
                         "enabled", "deprecated", "router.always_on", "x", "- a", "? b"])
_PIECES = st.sampled_from([": ", ":", "---", "- ", "'", '"', "|", ">", "&a ", "*a", "!!str ",
                           "!!binary ", "[", "]", "{", "}", "#", "\t", "  ", "\n", "\r\n",
                           "true", "null", "2020-13-45", "1e999", "%YAML 1.1", "\\", "\ufeff",
                           "\x07", "\u2028", "@", "`"])
_WORD = st.text(st.characters(codec="utf-8", categories=("L", "N", "P", "S", "Zs")),
                min_size=1, max_size=15)
_VALUES = st.one_of(_WORD, st.lists(st.one_of(_PIECES, _WORD), max_size=6).map("".join))
_LINE = st.tuples(st.sampled_from(["", "", "  ", "\t"]), _KEYS, _VALUES).map(
    lambda t: f"{t[0]}{t[1]}: {t[2]}")


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=8), st.one_of(st.none(), _VALUES), st.text(max_size=80),
       st.booleans())
def test_frontmatter_shaped_text_only_raises_skill_parse_error(
        lines: list[str], description: str | None, body: str, crlf: bool) -> None:
    head = [] if description is None else [f"description: {description}"]
    text = "---\n" + "\n".join(head + lines) + "\n---\n" + body
    if crlf:
        text = text.replace("\n", "\r\n")
    _parse_never_crashes(text.encode("utf-8", "surrogatepass"))
