"""Bundled files: listing (bounded, never read) and safe serving (no escape from the skill dir)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from router.errors import InvalidRequest, NotFound, TooLarge
from router.skills.resources import (
    list_resources,
    media_type,
    read_resource,
    resolve_resource,
    scan_resources,
)
from tests.support.skills import write_skill


@pytest.fixture()
def skill(tmp_path: Path) -> Path:
    root = tmp_path / "skills" / "pdf-processing"
    (root / "scripts").mkdir(parents=True)
    (root / "references").mkdir()
    write_skill(root, description="d", body="Body\n")
    (root / "manifest.json").write_text("{}")
    (root / "scripts" / "extract.py").write_text("print('x')\n")
    (root / "scripts" / "merge.py").write_text("print('y')\n")
    (root / "references" / "pdf-spec-summary.md").write_text("# Spec\n")
    (root / "a..b.txt").write_text("dots in a name are fine\n")
    for hidden in (".git", "node_modules", ".cache"):
        (root / hidden).mkdir()
        (root / hidden / "config").write_text("secret\n")
    (root / ".env").write_text("TOKEN=secret\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("outside secret\n")
    os.symlink(outside / "secret.txt", root / "leak.txt")
    os.symlink(outside, root / "leakdir")
    os.symlink(root / "scripts" / "extract.py", root / "inner-link.py")
    os.symlink(root, root / "references" / "loop")
    os.symlink(root / "missing", root / "dangling")
    return root


TRAVERSALS_INVALID = [
    "../x",
    "a/../../x",
    "..",
    "scripts/../../outside/secret.txt",
    "/etc/passwd",
    "C:/Windows/win.ini",
    "..\\x",
    "a\\b",
    "scripts\\extract.py",
    "%2e%2e/x",
    "%2E%2E/outside/secret.txt",
    "%252e%252e/x",
    "%25252e%25252e/x",
    "a/%2e%2e/%2e%2e/x",
    "..%2fx",
    "..%252fx",
    "%2fetc%2fpasswd",
    "%5c..%5cx",
    "..%5cx",
    "x%00",
    "x%2500",
    "\x00",
    "scripts/extract.py\x00.md",
    "",
    "   ",
    ".",
    "./",
]
TRAVERSALS_NOT_FOUND = [
    "leak.txt",
    "leakdir/secret.txt",
    "leakdir",
    ".env",
    ".git/config",
    "node_modules/config",
    "scripts",
    "missing.txt",
    "dangling",
    "references/loop/leak.txt",
    "references/loop/leakdir/secret.txt",
]


def test_list_is_sorted_relative_and_skips_skill_files_hidden_and_escaping_links(
        skill: Path) -> None:
    files, truncated = list_resources(str(skill))
    assert files == [
        "a..b.txt",
        "inner-link.py",
        "references/pdf-spec-summary.md",
        "scripts/extract.py",
        "scripts/merge.py",
    ]
    assert truncated is False


def test_list_never_opens_files(skill: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("listing must not open files")

    monkeypatch.setattr("builtins.open", refuse)
    monkeypatch.setattr(os, "open", refuse)
    files, _ = list_resources(str(skill))
    assert "scripts/extract.py" in files


def test_list_cap_reports_truncation_and_count(tmp_path: Path) -> None:
    root = tmp_path / "many"
    root.mkdir()
    (root / "SKILL.md").write_text("x")
    for i in range(7):
        (root / f"f{i}.txt").write_text(str(i))
    files, truncated = list_resources(str(root), cap=3)
    assert files == ["f0.txt", "f1.txt", "f2.txt"]
    assert truncated is True
    listing = scan_resources(str(root), cap=3)
    assert (listing.omitted, listing.complete, listing.truncated) == (4, True, True)
    assert list_resources(str(root), cap=7) == ([f"f{i}.txt" for i in range(7)], False)


def test_list_of_missing_or_empty_dir(tmp_path: Path) -> None:
    assert list_resources(str(tmp_path / "nope")) == ([], False)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "SKILL.md").write_text("x")
    assert list_resources(str(tmp_path / "empty")) == ([], False)


def test_list_walk_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import router.skills.resources as resources

    monkeypatch.setattr(resources, "RESOURCE_WALK_DIRS", 3)
    root = tmp_path / "deep"
    path = root
    for i in range(10):
        path = path / f"d{i}"
        path.mkdir(parents=True)
        (path / "f.txt").write_text("x")
    listing = scan_resources(str(root))
    assert listing.complete is False and listing.truncated is True
    assert 0 < len(listing.files) < 10


def assert_refused(skill: Path, rel: str, error: type[Exception]) -> None:
    """Both resolving and reading ``rel`` raise ``error``."""
    for call in (resolve_resource, read_resource):
        with pytest.raises(error):
            call(str(skill), rel)


@pytest.mark.parametrize("rel", TRAVERSALS_INVALID)
def test_traversal_shapes_are_invalid(skill: Path, rel: str) -> None:
    assert_refused(skill, rel, InvalidRequest)


@pytest.mark.parametrize("rel", TRAVERSALS_NOT_FOUND)
def test_escaping_links_hidden_and_missing_are_not_found(skill: Path, rel: str) -> None:
    assert_refused(skill, rel, NotFound)


def test_symlinked_parent_dir_pointing_outside(skill: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path / "outside", skill / "scripts" / "up")
    with pytest.raises(NotFound):
        read_resource(str(skill), "scripts/up/secret.txt")


def test_inside_links_and_plain_files_resolve(skill: Path) -> None:
    assert resolve_resource(str(skill), "scripts/extract.py") == (
        skill / "scripts" / "extract.py").resolve()
    assert resolve_resource(str(skill), "inner-link.py") == (
        skill / "scripts" / "extract.py").resolve()
    assert resolve_resource(str(skill), "./scripts//merge.py").name == "merge.py"
    assert resolve_resource(str(skill), "references/loop/scripts/merge.py").name == "merge.py"
    assert read_resource(str(skill), "a..b.txt") == (b"dots in a name are fine\n", "text/plain")


def test_percent_is_not_decoded_for_lookup(skill: Path) -> None:
    (skill / "100%25.txt").write_text("literal\n")
    assert read_resource(str(skill), "100%25.txt")[0] == b"literal\n"
    with pytest.raises(NotFound):
        read_resource(str(skill), "scripts%2fextract.py")


def test_fifo_is_not_found_and_does_not_block(skill: Path) -> None:
    os.mkfifo(skill / "pipe")
    with pytest.raises(NotFound):
        read_resource(str(skill), "pipe")


def test_size_cap_checked_before_reading(skill: Path) -> None:
    big = skill / "big.bin"
    with open(big, "wb") as fh:
        fh.truncate(10 * 1024 * 1024 + 1)  # sparse: nothing to read if the cap works
    with pytest.raises(TooLarge):
        read_resource(str(skill), "big.bin")
    (skill / "small.txt").write_text("0123456789")
    assert read_resource(str(skill), "small.txt", max_bytes=10)[0] == b"0123456789"
    with pytest.raises(TooLarge):
        read_resource(str(skill), "small.txt", max_bytes=9)


def test_missing_skill_dir_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        read_resource(str(tmp_path / "gone"), "x.txt")


@pytest.mark.parametrize(("name", "expected"), [
    ("README.md", "text/markdown"),
    ("scripts/extract.py", "text/x-python"),
    ("run.SH", "text/x-shellscript"),
    ("notes.txt", "text/plain"),
    ("data.json", "application/json"),
    ("config.yaml", "application/yaml"),
    ("config.yml", "application/yaml"),
    ("logo.png", "image/png"),
    ("blob.unknownext", "application/octet-stream"),
    ("Makefile", "application/octet-stream"),
])
def test_media_types(name: str, expected: str) -> None:
    assert media_type(name) == expected


def test_read_returns_bytes_and_media_type(skill: Path) -> None:
    data, kind = read_resource(str(skill), "references/pdf-spec-summary.md")
    assert (data, kind) == (b"# Spec\n", "text/markdown")
