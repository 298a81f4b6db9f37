"""Hostile neighbours in a skills folder: names that are not UTF-8, lone surrogates, FIFOs in a
skill file's place, bundled files with unlistable names. Each costs one diagnostic (or one
clear error), never the scan, the index records or the activation of another skill."""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from pathlib import Path

import pytest

from router.activation.activator import Activator
from router.activation.sessions import SessionStore
from router.builder.version import build_index
from router.encoders.hashing import HashEmbedder
from router.errors import NotFound, SkillParseError
from router.index.store import load_index
from router.skills.discovery import scan_root
from router.skills.files import read_file
from router.skills.model import Diagnostic, Level, Scope, Skill, SkillKind
from router.skills.resources import scan_resources

GOOD = "---\nname: {name}\ndescription: Handles {name} work for the tests.\n---\n# {name}\n"


def write_skill(folder: bytes | Path, name: str) -> None:
    path = os.fsencode(folder)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, b"SKILL.md"), "w", encoding="utf-8") as fh:
        fh.write(GOOD.format(name=name))


def errors(diags: list[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diags if d.level is Level.ERROR]


def encodable(skills: list[Skill], diags: list[Diagnostic]) -> bytes:
    """What the index writes: it must encode as UTF-8 (the old failure was here)."""
    return json.dumps({"skills": [s.to_dict() for s in skills],
                       "diagnostics": [d.to_dict() for d in diags]},
                      ensure_ascii=False).encode("utf-8")


def test_a_folder_name_that_is_not_utf8_is_an_error_and_the_rest_loads(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root / "good", "good")
    write_skill(os.fsencode(root) + b"/dir-bad\xfeutf8", "bad-name")
    os.makedirs(os.fsencode(root) + b"/plain-\xff/nested-good")  # not a skill itself
    write_skill(os.fsencode(root) + b"/plain-\xff/nested-good", "nested-good")
    skills, diags = scan_root(str(root), Scope.ORG)
    assert [s.name for s in skills] == ["good"]
    bad = errors(diags)
    assert len(bad) == 1 and "not valid UTF-8" in bad[0].message
    assert bad[0].path.endswith("dir-bad\\xfeutf8")  # shown escaped, never as raw bytes
    assert any("plain-\\xff" in d.path and d.level is Level.WARNING for d in diags)
    encodable(skills, diags)


def test_a_gitignored_folder_that_is_not_utf8_is_quietly_ignored(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root / "good", "good")
    write_skill(os.fsencode(root) + b"/build-\xfe", "built")
    (root / ".gitignore").write_text("build-*/\n", encoding="utf-8")
    skills, diags = scan_root(str(root), Scope.ORG)
    assert [s.name for s in skills] == ["good"] and diags == []


def test_an_index_builds_beside_a_folder_that_is_not_utf8(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root / "good", "good")
    write_skill(os.fsencode(root) + b"/dir-bad\xfeutf8", "bad-name")
    skills, diags = scan_root(str(root), Scope.ORG)
    build_index(skills, diags, HashEmbedder(), tmp_path / "index")
    snapshot = load_index(tmp_path / "index")
    assert [s.name for s in snapshot.skills] == ["good"]
    assert any("not valid UTF-8" in d.message for d in snapshot.diagnostics)


def test_a_manifest_with_a_lone_surrogate_is_an_error(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root / "good", "good")
    (root / "books").mkdir()
    (root / "books" / "manifest.json").write_text(
        '{"name": "books", "description": "Books rooms \\ud800 fast."}', encoding="utf-8")
    skills, diags = scan_root(str(root), Scope.ORG)
    assert [s.name for s in skills] == ["good"]
    bad = errors(diags)
    assert len(bad) == 1 and "lone surrogate" in bad[0].message
    assert bad[0].path.endswith("manifest.json")
    encodable(skills, diags)


def test_a_surrogate_in_a_sibling_manifest_only_drops_the_manifest(tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "good"
    write_skill(folder, "good")
    (folder / "manifest.json").write_text(
        '{"parameters": {"type": "object", "properties": {"\\udc80": {}}}}', encoding="utf-8")
    skills, diags = scan_root(str(tmp_path / "skills"), Scope.ORG)
    assert [s.name for s in skills] == ["good"] and skills[0].parameters is None
    assert any("manifest.json ignored" in d.message for d in diags)
    encodable(skills, diags)


def test_a_fifo_in_place_of_skill_md_is_skipped_with_an_error(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root / "good", "good")
    (root / "piped").mkdir()
    os.mkfifo(root / "piped" / "SKILL.md")
    skills, diags = scan_root(str(root), Scope.ORG)
    assert [s.name for s in skills] == ["good"]
    bad = errors(diags)
    assert [d.path for d in bad] == [str(root / "piped" / "SKILL.md")]
    assert "not a regular file" in bad[0].message


def in_thread(call: object) -> tuple[threading.Thread, list[BaseException]]:
    """Run ``call`` on a daemon thread (a blocked open must not hang the test run)."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            call()  # type: ignore[operator]
        except BaseException as exc:  # recorded for the assertion
            raised.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, raised


def test_reading_a_fifo_fails_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "SKILL.md"
    os.mkfifo(fifo)
    thread, raised = in_thread(lambda: read_file(str(fifo)))
    thread.join(timeout=60)  # a guard against a hang: the read fails without waiting
    assert not thread.is_alive(), "read_file blocked on a FIFO"
    assert len(raised) == 1 and isinstance(raised[0], SkillParseError)
    assert "not a regular file" in raised[0].reason


def activator_for(skill: Skill, sessions: SessionStore) -> Activator:
    return Activator(lambda n: skill if n == skill.name else None, lambda: [skill.name], sessions)


def test_activating_a_skill_whose_skill_md_became_a_fifo_fails_at_once(tmp_path: Path) -> None:
    folder = tmp_path / "piped"
    write_skill(folder, "piped")
    skill = Skill(name="piped", description="Pipes.", location=str(folder / "SKILL.md"),
                  base_dir=str(folder))
    (folder / "SKILL.md").unlink()
    os.mkfifo(folder / "SKILL.md")
    sessions = SessionStore()
    thread, raised = in_thread(lambda: activator_for(skill, sessions).activate("piped", "s1"))
    thread.join(timeout=60)
    assert not thread.is_alive(), "activation blocked on a FIFO"
    assert len(raised) == 1 and isinstance(raised[0], NotFound)
    assert "not a regular file" in str(raised[0])
    assert not sessions.is_active("s1", "piped")


def _skill_with_a_non_utf8_file(tmp_path: Path) -> Path:
    """A skill folder bundling ``ok.txt`` and a file whose name is not UTF-8."""
    folder = tmp_path / "skill"
    write_skill(folder, "skill")
    (folder / "ok.txt").write_text("fine", encoding="utf-8")
    with open(os.fsencode(folder) + b"/bad\xffname.txt", "w", encoding="utf-8") as fh:
        fh.write("x")
    return folder


def test_bundled_files_with_unlistable_names_are_skipped_and_reported(tmp_path: Path) -> None:
    folder = _skill_with_a_non_utf8_file(tmp_path)
    (folder / "two\nlines.txt").write_text("x", encoding="utf-8")
    listing = scan_resources(str(folder))
    assert listing.files == ("ok.txt",)
    assert sorted(listing.skipped) == ["bad\\xffname.txt", "two\\nlines.txt"]


def test_activation_lists_only_good_files_and_the_content_encodes(tmp_path: Path) -> None:
    folder = _skill_with_a_non_utf8_file(tmp_path)
    skill = Skill(name="skill", description="A skill.", location=str(folder / "SKILL.md"),
                  base_dir=str(folder))
    done = activator_for(skill, SessionStore()).activate("skill", "s1", explicit=True)
    assert done.resources == ("ok.txt",) and not done.already_active
    done.content.encode("utf-8")  # a reply can carry it


def test_undeliverable_content_never_marks_the_session(tmp_path: Path) -> None:
    """Content a reply could not carry (a record holding a lone surrogate) is refused before the
    session remembers the skill, so a retry once it is fixed returns the content."""
    folder = tmp_path / "books"
    folder.mkdir()
    (folder / "manifest.json").write_text('{"name": "books"}', encoding="utf-8")
    stale = Skill(name="books", description="Books rooms \ud800 fast.",
                  location=str(folder / "manifest.json"), base_dir=str(folder),
                  kind=SkillKind.MANIFEST, parameters={"type": "object", "properties": {}})
    sessions = SessionStore()
    with pytest.raises(NotFound, match="valid Unicode"):
        activator_for(stale, sessions).activate("books", "s1", explicit=True)
    assert not sessions.is_active("s1", "books")
    fixed = dataclasses.replace(stale, description="Books rooms fast.")
    retry = activator_for(fixed, sessions).activate("books", "s1", explicit=True)
    assert not retry.already_active and "Books rooms fast." in retry.content
    assert sessions.is_active("s1", "books")
