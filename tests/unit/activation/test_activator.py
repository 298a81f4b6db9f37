"""Activation: the exact wrapping, permissions, dedup, resources and callable skills."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from router.activation.activator import Activation, Activator
from router.activation.content import (
    CONTENT_CLOSE,
    CONTENT_OPEN_PREFIX,
    is_skill_content,
    manifest_body,
    render_content,
)
from router.activation.sessions import SessionStore
from router.config import DEFAULT_SOURCE, DiscoveryConfig
from router.errors import InvalidRequest, NotFound, PermissionDenied, StaleFile, TooLarge
from router.skills.model import Skill, SkillKind
from router.skills.sources.composite import CompositeSource
from tests.support.race import race
from tests.support.skill_source_contract import BUNDLED, CATALOG, MemorySource
from tests.support.skills import skill_record, write_skill

PDF_BODY = "# PDF processing\n\n## When to use\nUse this skill for PDF files."
WEATHER_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "date": {"type": "string", "format": "date"},
                   "units": {"type": "string", "enum": ["metric", "imperial"],
                             "default": "metric"}},
    "required": ["city", "date"],
    "additionalProperties": False,
}


def make_skill(root: Path, name: str, body: str = "Do it.", files: tuple[str, ...] = (),
               **fields: Any) -> Skill:
    description = f"Does {name} things."
    folder = write_skill(root / name, name, description, body=f"\n{body}\n").parent
    for rel in files:
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(f"contents of {rel}\n")
    return skill_record(name, description, root=str(root), **fields)


def make_manifest_skill(root: Path) -> Skill:
    folder = root / "weather"
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text('{"name": "weather"}')
    return Skill(name="weather", description="Gets the forecast for a city and date.",
                 location=str(folder / "manifest.json"), base_dir=str(folder),
                 kind=SkillKind.MANIFEST, parameters=WEATHER_PARAMS)


@pytest.fixture()
def skills(tmp_path: Path) -> dict[str, Skill]:
    root = tmp_path / "skills"
    found = [
        make_skill(root, "pdf-processing", PDF_BODY,
                   ("scripts/extract.py", "scripts/merge.py", "references/pdf-spec-summary.md")),
        make_skill(root, "no-files"),
        make_skill(root, "many-files", files=tuple(f"data/f{i:03}.txt" for i in range(205))),
        make_skill(root, "deploy", model_invocable=False),
        make_skill(root, "internal-lint", user_invocable=False),
        make_skill(root, "retired", enabled=False),
        make_skill(root, "old-style", deprecated=True),
        make_manifest_skill(root),
    ]
    (tmp_path / "skills" / "other").mkdir()
    (tmp_path / "skills" / "other" / "secret.txt").write_text("not yours\n")
    return {s.name: s for s in found}


@pytest.fixture()
def activator(skills: dict[str, Skill]) -> Activator:
    return Activator(skills.get, lambda: sorted(skills), SessionStore())


def expected_pdf(skill: Skill) -> str:
    return (
        '<skill_content name="pdf-processing">\n'
        f"{PDF_BODY}\n"
        "\n"
        f"Skill directory: {skill.base_dir}\n"
        "Relative paths in this skill are relative to the skill directory.\n"
        "\n"
        "<skill_resources>\n"
        "  <file>references/pdf-spec-summary.md</file>\n"
        "  <file>scripts/extract.py</file>\n"
        "  <file>scripts/merge.py</file>\n"
        "</skill_resources>\n"
        "</skill_content>"
    )


# --- pure rendering ----------------------------------------------------------------------------

def test_render_exact_format_and_markers() -> None:
    text = render_content("pdf-processing", PDF_BODY, "/skills/pdf", ["scripts/extract.py"], False)
    assert text == (
        '<skill_content name="pdf-processing">\n' + PDF_BODY + "\n\n"
        "Skill directory: /skills/pdf\n"
        "Relative paths in this skill are relative to the skill directory.\n\n"
        "<skill_resources>\n  <file>scripts/extract.py</file>\n</skill_resources>\n"
        "</skill_content>")
    assert text.startswith(CONTENT_OPEN_PREFIX) and text.endswith(CONTENT_CLOSE)
    assert is_skill_content(text) and is_skill_content("\n" + text + "\n")
    assert not is_skill_content("hello " + text)


def test_render_without_resources_has_no_block() -> None:
    assert render_content("a", "Body", "/d", [], False) == (
        '<skill_content name="a">\nBody\n\nSkill directory: /d\n'
        "Relative paths in this skill are relative to the skill directory.\n</skill_content>")


def test_render_escapes_names_and_paths_and_guards_the_close_marker() -> None:
    text = render_content('a"<b>&', "x </skill_content> y", "/d&e", ["a<b>.md"], False)
    assert text.startswith('<skill_content name="a&quot;&lt;b&gt;&amp;">\n')
    assert "x &lt;/skill_content> y" in text
    assert "Skill directory: /d&amp;e" in text and "<file>a&lt;b&gt;.md</file>" in text
    assert text.count(CONTENT_CLOSE) == 1


def test_render_cap_note() -> None:
    text = render_content("a", "B", "/d", ["x"], True, omitted=4)
    assert "  <file>x</file>\n  (4 more files not listed)\n</skill_resources>" in text
    assert "(1 more file not listed)" in render_content("a", "B", "/d", ["x"], True, omitted=1)
    assert "(4 or more files not listed)" in render_content("a", "B", "/d", ["x"], True,
                                                            omitted=4, complete=False)
    assert "the list is incomplete" in render_content("a", "B", "/d", ["x"], True)


def test_manifest_body_describes_the_tool() -> None:
    body = manifest_body("weather", "Gets the forecast.", WEATHER_PARAMS)
    assert body.startswith("# weather\n\nGets the forecast.\n")
    assert "tool named `weather`" in body
    assert '```json\n{\n  "type": "object",' in body and body.endswith("}\n```")
    assert "takes no arguments" in manifest_body("x", "d", None)
    assert "````json" in manifest_body("x", "d", {"description": "use ``` fences"})


# --- activation ---------------------------------------------------------------------------------

def test_activate_returns_exact_wrapped_body(activator: Activator,
                                             skills: dict[str, Skill]) -> None:
    result = activator.activate("pdf-processing", session_id="s1")
    skill = skills["pdf-processing"]
    assert result == Activation(
        name="pdf-processing", content=expected_pdf(skill),
        resources=("references/pdf-spec-summary.md", "scripts/extract.py", "scripts/merge.py"),
        resources_truncated=False, skill_dir=skill.base_dir, already_active=False)


def test_include_frontmatter_returns_whole_file(activator: Activator) -> None:
    text = activator.activate("no-files", include_frontmatter=True).content
    assert text.startswith('<skill_content name="no-files">\n---\nname: no-files\n')
    assert "description: Does no-files things.\n---\n\nDo it.\n\nSkill directory:" in text
    assert "<skill_resources>" not in text
    assert "---" not in activator.activate("no-files").content


def test_body_is_read_at_activation_time(activator: Activator,
                                         skills: dict[str, Skill]) -> None:
    assert "Do it." in activator.activate("no-files").content
    write_skill(Path(skills["no-files"].base_dir), "no-files", "Does no-files things.",
                body="Edited.\n")
    assert "Edited." in activator.activate("no-files").content


def test_dedup_across_two_activations_in_one_session(activator: Activator) -> None:
    first = activator.activate("pdf-processing", session_id="s1")
    second = activator.activate("pdf-processing", session_id="s1")
    assert first.already_active is False and first.content
    assert second.already_active is True and second.content == ""
    assert second.resources == first.resources
    assert activator.activate("pdf-processing", session_id="s2").content == first.content
    assert activator.activate("pdf-processing").content == first.content  # no session, no memory
    assert activator.sessions.active("s1") == frozenset({"pdf-processing"})


def test_dedup_via_active_skills(activator: Activator) -> None:
    result = activator.activate("pdf-processing", active_skills=("pdf-processing", "x"))
    assert result.already_active is True and result.content == ""
    assert len(result.resources) == 3


def test_explicit_then_model_activation_is_deduplicated(activator: Activator) -> None:
    assert activator.activate("deploy", session_id="s", explicit=True).content
    assert activator.activate("pdf-processing", session_id="s").content
    assert activator.activate("deploy", session_id="s", explicit=True).already_active


def test_concurrent_activations_yield_one_full_content(activator: Activator) -> None:
    results = race(20, lambda: activator.activate("pdf-processing", session_id="race"))
    assert len(results) == 20
    full = [r for r in results if r.content]
    assert len(full) == 1 and not full[0].already_active
    assert sum(r.already_active for r in results) == 19


def test_resource_list_cap_and_note(skills: dict[str, Skill]) -> None:
    activator = Activator(skills.get, lambda: list(skills))
    result = activator.activate("many-files")
    assert len(result.resources) == 200 and result.resources_truncated
    assert result.resources[0] == "data/f000.txt" and result.resources[-1] == "data/f199.txt"
    assert "  <file>data/f199.txt</file>\n  (5 more files not listed)\n</skill_resources>" in (
        result.content)
    small = Activator(skills.get, lambda: list(skills), resource_list_cap=2)
    assert small.activate("pdf-processing").resources == ("references/pdf-spec-summary.md",
                                                           "scripts/extract.py")


def test_manifest_skill_content_is_generated(activator: Activator) -> None:
    result = activator.activate("weather")
    assert result.content.startswith('<skill_content name="weather">\n# weather\n\nGets the')
    assert '"required": [\n    "city",\n    "date"\n  ]' in result.content
    assert result.resources == ()


# --- refusals ------------------------------------------------------------------------------------

def test_unknown_name_suggests_close_names(activator: Activator) -> None:
    with pytest.raises(NotFound, match="did you mean: pdf-processing"):
        activator.activate("pdf-procesing")
    with pytest.raises(NotFound, match="route a message"):
        activator.activate("zzzzzz")


@pytest.mark.parametrize("name", ["../other", "../pdf-processing", "pdf-processing/../other",
                                  "/etc/passwd", "..\\other", "%2e%2e/other", "other\x00",
                                  "", "  ", "x" * 300])
def test_traversal_shaped_names_never_resolve(activator: Activator, name: str) -> None:
    for call in (lambda: activator.activate(name),
                 lambda: activator.read_resource(name, "secret.txt"),
                 lambda: activator.validate_arguments(name, "{}")):
        with pytest.raises((NotFound, InvalidRequest)):
            call()


def test_invocation_permissions(activator: Activator) -> None:
    with pytest.raises(PermissionDenied, match="can only be activated by the model"):
        activator.activate("internal-lint", explicit=True)
    assert activator.activate("internal-lint").content
    with pytest.raises(PermissionDenied, match="only be activated by the user"):
        activator.activate("deploy")
    assert activator.activate("deploy", explicit=True).content
    assert activator.activate("old-style").content  # deprecated: not routed, still activatable


def test_disabled_skill_is_refused_everywhere(activator: Activator) -> None:
    for call in (lambda: activator.activate("retired"),
                 lambda: activator.activate("retired", explicit=True),
                 lambda: activator.read_resource("retired", "SKILL.md"),
                 lambda: activator.validate_arguments("retired", "{}")):
        with pytest.raises(PermissionDenied, match="disabled"):
            call()


def test_skill_file_gone_is_not_found(activator: Activator, skills: dict[str, Skill]) -> None:
    os.remove(skills["no-files"].location)
    with pytest.raises(NotFound, match="reindex"):
        activator.activate("no-files")


def test_request_bounds(activator: Activator) -> None:
    with pytest.raises(InvalidRequest, match="session_id"):
        activator.activate("no-files", session_id="s" * 300)
    with pytest.raises(InvalidRequest, match="active_skills"):
        activator.activate("no-files", active_skills=tuple(str(i) for i in range(2000)))


# --- resources and arguments through the Activator ----------------------------------------------

def test_read_resource(activator: Activator) -> None:
    resource = activator.read_resource("pdf-processing", "scripts/extract.py")
    assert resource.content == b"contents of scripts/extract.py\n"
    assert (resource.name, resource.path, resource.size, resource.media_type) == (
        "pdf-processing", "scripts/extract.py", 31, "text/x-python")
    with pytest.raises(NotFound, match="did you mean"):
        activator.read_resource("pdf-process", "scripts/extract.py")


@pytest.mark.parametrize("path", ["../other/secret.txt", "a/../../other/secret.txt",
                                  "/etc/passwd", "..\\other\\secret.txt", "a\\b",
                                  "%2e%2e/other/secret.txt", "%252e%252e/other/secret.txt",
                                  "x%00", "\x00", "", "leak.txt", "leakdir/secret.txt"])
def test_read_resource_refuses_escapes(activator: Activator, skills: dict[str, Skill],
                                       path: str) -> None:
    folder = Path(skills["pdf-processing"].base_dir)
    if not (folder / "leak.txt").exists():
        os.symlink(folder.parent / "other" / "secret.txt", folder / "leak.txt")
        os.symlink(folder.parent / "other", folder / "leakdir")
    with pytest.raises((InvalidRequest, NotFound)):
        activator.read_resource("pdf-processing", path)


def test_read_resource_size_cap(skills: dict[str, Skill]) -> None:
    activator = Activator(skills.get, lambda: list(skills), resource_max_bytes=10)
    with pytest.raises(TooLarge):
        activator.read_resource("pdf-processing", "scripts/extract.py")


def test_validate_arguments(activator: Activator) -> None:
    ok = activator.validate_arguments("weather", '{"city": "Oslo", "date": "2024-05-01"}')
    assert ok.ok and ok.arguments == {"city": "Oslo", "date": "2024-05-01", "units": "metric"}
    bad = activator.validate_arguments("weather", '{"city": 3, "date": "May 1st", "x": 1}')
    assert [(e.field, e.problem) for e in bad.errors] == [
        ("city", "city must be a string, not integer"),
        ("date", "date must be a date in YYYY-MM-DD form"),
        ("x", "x is not a parameter of this skill; remove it (allowed: city, date, units)"),
    ]
    with pytest.raises(InvalidRequest, match="not valid JSON"):
        activator.validate_arguments("weather", "{city: Oslo}")


def test_skill_without_parameters_takes_no_arguments(activator: Activator,
                                                     skills: dict[str, Skill]) -> None:
    with pytest.raises(InvalidRequest, match="takes no arguments"):
        activator.validate_arguments("pdf-processing", "{}")
    hybrid = replace(skills["pdf-processing"], parameters={"type": "object"})
    assert Activator(lambda _: hybrid, lambda: []).validate_arguments("x", "").ok


def test_every_file_is_read_through_the_source_handed_in() -> None:
    source = MemorySource()  # no disk: a skill whose folder exists nowhere
    source.folders["memory://catalog/pdf-tools"] = dict(CATALOG["pdf-tools"])
    skill = source.discover(DiscoveryConfig()).skills[0]
    recorded = {skill.key: source.digest(skill)}
    activator = Activator(lambda n: skill if n == skill.name else None, lambda: [skill.name],
                          digests=lambda: recorded, source=source)
    done = activator.activate("pdf-tools")
    assert "Run scripts/extract.py." in done.content and done.resources == BUNDLED
    assert activator.list_resources("pdf-tools").files == BUNDLED
    served = activator.read_resource("pdf-tools", "notes.txt")
    assert (served.content, served.media_type) == (CATALOG["pdf-tools"]["notes.txt"],
                                                   "text/plain")
    source.folders[skill.base_dir]["notes.txt"] = b"edited after the build\n"
    with pytest.raises(StaleFile):
        activator.read_resource("pdf-tools", "notes.txt")
    source.folders[skill.base_dir]["SKILL.md"] += b"more\n"
    with pytest.raises(StaleFile):
        activator.activate("pdf-tools", session_id="another")


def test_the_default_source_serves_when_none_is_given(activator: Activator) -> None:
    assert isinstance(activator.source, CompositeSource)
    assert activator.source.key == DEFAULT_SOURCE
