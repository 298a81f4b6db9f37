"""The SKILL.md parser under 10,000+ fuzzed inputs: only SkillParseError may escape."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from router.errors import SkillParseError
from router.skills.model import Scope
from router.skills.parse import parse_skill_md

pytestmark = pytest.mark.slow

FUZZ = settings(max_examples=10_000, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

KEYS = st.sampled_from(["name", "description", "metadata", "allowed-tools", "license",
                        "compatibility", "disable-model-invocation", "user-invocable",
                        "enabled", "deprecated", "router.always_on", "parameters", "x",
                        "- a", "? b", "", "name ", "<<"])
PIECES = st.sampled_from([": ", ":", "---", "- ", "'", '"', "|", "|-", ">", "&a ", "*a",
                          "!!str ", "!!binary ", "!!python/object ", "[", "]", "{", "}", "#",
                          "\t", "  ", "\n", "\r\n", "\r", "true", "null", "~", "2020-13-45",
                          "1e999", "-0", "0x1F", "%YAML 1.1\n", "%TAG ! x\n", "\\", "\ufeff",
                          "\x00", "\x07", "\u2028", "\ud7ff", "@", "`", "...", "pdf-tools",
                          "a" * 300, "é", "日本"])
VALUES = st.one_of(st.text(max_size=60), st.lists(PIECES, max_size=8).map("".join))
LINES = st.builds(lambda indent, key, sep, value: " " * indent + key + sep + value,
                  st.integers(0, 6), KEYS, st.sampled_from([": ", ":", " : ", ":\n  "]), VALUES)
DOCUMENTS = st.builds(
    lambda opening, lines, closing, body: opening + "\n".join(lines) + closing + body,
    st.sampled_from(["---\n", "---\r\n", "\ufeff---\n", "--- \n", "---", "", "----\n"]),
    st.lists(LINES, max_size=10),
    st.sampled_from(["\n---\n", "\n---", "\n--- \n", "\n...\n", "", "\n----\n"]),
    st.text(max_size=120),
)
ENCODINGS = st.sampled_from(["utf-8", "utf-16", "latin-1", "utf-8-sig"])


def parse_or_refuse(data: bytes) -> None:
    with contextlib.suppress(SkillParseError):
        parse_skill_md(data, location="/fuzz/skill/SKILL.md", base_dir="/fuzz/skill",
                       scope=Scope.BUNDLED, max_bytes=4096)


@FUZZ
@given(DOCUMENTS, ENCODINGS)
def test_frontmatter_shaped_documents(document: str, encoding: str) -> None:
    errors = "surrogatepass" if encoding.startswith("utf") else "replace"
    parse_or_refuse(document.encode(encoding, errors=errors))


@FUZZ
@given(st.binary(max_size=5000))
def test_arbitrary_bytes(data: bytes) -> None:
    parse_or_refuse(data)
    parse_or_refuse(b"---\nname: a\ndescription: " + data + b"\n---\n")
