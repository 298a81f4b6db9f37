"""What every skill source promises (``router.skills.sources.base.SkillSource``), as one test base.

A source's tests subclass :class:`SkillSourceContract` (named ``Test...``), give the ``source``
fixture and the three hooks that put skills where that source finds them: ``publish`` (a
catalog of skill folders, returning the discovery configuration that finds it), ``change`` (a
file written or replaced after the build) and ``remove``. The base's tests then run against it:
discovery finds the valid skills and reports a broken SKILL.md as a diagnostic; listings and
reads return exactly what was published; a path leaving the skill, a missing or hidden file and
one over the byte cap are refused as the disk refuses them; a file changed or added after the
digests were recorded is ``StaleFile``, and so is a record that is not the skill's.
``MemorySource`` is a second source, with no disk, that runs the same contract.

Not every source holds what a folder holds: one whose skills bundle no files (MCP tools) sets
``BUNDLES_FILES`` False (its listings are then empty and every bundled path ``NotFound``), one
that serves a copy made at build time (a version's own files) sets ``FILES_CHANGE`` False (the
tests that change or remove a file after discovery are then left out), and ``skill_file``,
``SKILL_FILE`` and ``BROKEN_AT`` say what its skill file is and where a broken skill is
reported.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

import pytest

from router.config import DiscoveryConfig
from router.errors import InvalidRequest, NotFound, SkillParseError, StaleFile, TooLarge
from router.skills.digests import FileDigest, SkillDigests, sha256_digest
from router.skills.limits import (
    RESOURCE_LIST_CAP,
    RESOURCE_MAX_BYTES,
    SKILL_DEFINITION_FILES,
    SKILL_FILE_MAX_BYTES,
)
from router.skills.model import Diagnostic, DiscoveryResult, Level, Scope, Skill
from router.skills.parse import diagnostic_from_error, parse_skill_md
from router.skills.resources import ResourceListing, media_type
from router.skills.sources.base import SkillFile, SkillSource

if TYPE_CHECKING:
    from router.common.workers import Workers

Catalog = Mapping[str, Mapping[str, bytes]]  # skill folder -> path in it -> bytes


def skill_md(name: str, description: str, body: str = "# Steps\n\nDo it.\n") -> bytes:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}".encode()


PDF_DESCRIPTION = "Extracts text and tables from PDF files."
CATALOG: Catalog = {
    "pdf-tools": {
        "SKILL.md": skill_md("pdf-tools", PDF_DESCRIPTION, "# PDF\n\nRun scripts/extract.py.\n"),
        "scripts/extract.py": b"print('extract')\n",
        "notes.txt": b"line one\r\nline two\n",  # bytes as they are: no newline rewriting
        "data/blob.bin": bytes(range(256)),
        ".hidden": b"never served\n",
    },
    "git-helper": {"SKILL.md": skill_md("git-helper", "Writes git commit messages.")},
    "broken": {"SKILL.md": b"---\nname: broken\n---\nno description in the frontmatter\n"},
}
BUNDLED = ("data/blob.bin", "notes.txt", "scripts/extract.py")
LEAVING = ("../git-helper/SKILL.md", "scripts/../../git-helper/SKILL.md", "/etc/passwd",
           "%2e%2e/git-helper/SKILL.md", "%252e%252e/git-helper/SKILL.md",
           "scripts\\extract.py", "notes.txt\x00.md", "C:/Windows/win.ini", "")


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


class SkillSourceContract:
    """The tests every skill source passes; a subclass per source gives ``source`` and the
    hooks."""

    BUNDLES_FILES = True  # a skill's bundled files are listed and served
    FILES_CHANGE = True  # a file changed or removed after discovery is seen by the source
    SKILL_FILE = "SKILL.md"  # the skill file's name, as its digest is recorded
    BROKEN_AT = "broken/SKILL.md"  # how the broken skill's diagnostic path ends

    def skill_file(self, skill: Skill) -> bytes:
        """The bytes the source serves as ``skill``'s skill file."""
        return CATALOG[skill.name]["SKILL.md"]

    def bundled(self) -> tuple[str, ...]:
        """The bundled files of pdf-tools the source lists."""
        return BUNDLED if self.BUNDLES_FILES else ()

    def skip_unless(self, *needs: bool) -> None:
        if not all(needs):
            pytest.skip("this source does not hold files as a folder does")

    @pytest.fixture
    def source(self) -> SkillSource:
        raise NotImplementedError("a source's contract test gives its source")

    def publish(self, where: Path, catalog: Catalog) -> DiscoveryConfig:
        """Put ``catalog`` where the source finds it; the configuration that finds it."""
        raise NotImplementedError

    def change(self, skill: Skill, path: str, data: bytes) -> None:
        """Write ``data`` as file ``path`` of a published skill (new or replaced)."""
        raise NotImplementedError

    def remove(self, skill: Skill, path: str) -> None:
        """Take file ``path`` of a published skill away."""
        raise NotImplementedError

    @pytest.fixture
    def found(self, source: SkillSource, tmp_path: Path) -> DiscoveryResult:
        return source.discover(self.publish(tmp_path, CATALOG))

    @pytest.fixture
    def pdf(self, found: DiscoveryResult) -> Skill:
        return next(s for s in found.skills if s.name == "pdf-tools")

    # --- discovery ----------------------------------------------------------------------------

    def test_discovery_finds_every_valid_skill(self, found: DiscoveryResult) -> None:
        assert [s.name for s in found.skills] == ["git-helper", "pdf-tools"]
        assert found.skills[1].description == PDF_DESCRIPTION
        assert found.shadowed == ()

    def test_a_broken_skill_file_is_a_diagnostic_not_a_failed_scan(
            self, found: DiscoveryResult) -> None:
        errors = [d for d in found.diagnostics if d.level is Level.ERROR]
        assert len(errors) == 1, found.diagnostics
        assert errors[0].path.replace("\\", "/").endswith(self.BROKEN_AT)
        assert "description" in errors[0].message

    # --- listing and reading ------------------------------------------------------------------

    def test_lists_the_bundled_files_sorted_without_the_skill_file(
            self, source: SkillSource, pdf: Skill) -> None:
        listing = source.list_files(pdf)
        assert (listing.files, listing.truncated) == (self.bundled(), False)
        self.skip_unless(self.BUNDLES_FILES)
        cut = source.list_files(pdf, cap=1)
        assert (cut.files, cut.omitted, cut.truncated) == (BUNDLED[:1], 2, True)

    def test_reads_return_the_exact_bytes(self, source: SkillSource, pdf: Skill) -> None:
        assert source.read_skill_file(pdf) == self.skill_file(pdf)
        assert source.skill_file_name(pdf) == self.SKILL_FILE
        self.skip_unless(self.BUNDLES_FILES)
        for path in BUNDLED:
            assert source.read(pdf, path) == CATALOG["pdf-tools"][path], path
        served = source.read_resource(pdf, "scripts/extract.py")
        assert (served.path, served.media_type) == ("scripts/extract.py", "text/x-python")
        assert source.read_resource(pdf, "notes.txt").media_type == "text/plain"

    def test_a_path_leaving_the_skill_is_refused_before_the_source_is_asked(
            self, source: SkillSource, pdf: Skill, monkeypatch: pytest.MonkeyPatch) -> None:
        asked: list[str] = []
        fetch = source.fetch

        def counted(skill: Skill, path: str, max_bytes: int) -> SkillFile:
            asked.append(path)
            return fetch(skill, path, max_bytes)

        monkeypatch.setattr(source, "fetch", counted)
        for path in LEAVING:
            with pytest.raises(InvalidRequest):
                source.read(pdf, path)
        assert asked == []
        self.skip_unless(self.BUNDLES_FILES)
        assert source.read(pdf, "notes.txt") and asked == ["notes.txt"]

    def test_a_missing_hidden_or_folder_path_is_not_found(self, source: SkillSource,
                                                          pdf: Skill) -> None:
        for path in ("missing.txt", ".hidden", "scripts", "scripts/missing.py"):
            with pytest.raises(NotFound):
                source.read(pdf, path)

    def test_a_file_over_the_cap_is_too_large(self, source: SkillSource, pdf: Skill) -> None:
        self.skip_unless(self.BUNDLES_FILES)
        assert len(source.read(pdf, "data/blob.bin", max_bytes=256)) == 256
        with pytest.raises(TooLarge):
            source.read(pdf, "data/blob.bin", max_bytes=255)
        self.skip_unless(self.FILES_CHANGE)
        self.change(pdf, "SKILL.md", b"x" * (SKILL_FILE_MAX_BYTES + 1))
        with pytest.raises(TooLarge):
            source.read_skill_file(pdf)

    def test_a_skill_file_gone_since_discovery_is_not_found(self, source: SkillSource,
                                                             pdf: Skill) -> None:
        self.skip_unless(self.FILES_CHANGE)
        self.remove(pdf, "SKILL.md")
        with pytest.raises(NotFound):
            source.read_skill_file(pdf)

    # --- digests ------------------------------------------------------------------------------

    def test_the_digest_records_every_file_skill_file_first(self, source: SkillSource,
                                                            pdf: Skill) -> None:
        recorded = source.digest(pdf)
        files = {**CATALOG["pdf-tools"], self.SKILL_FILE: self.skill_file(pdf)}
        assert recorded.complete
        assert [(f.path, f.size, f.digest) for f in recorded.files] == [
            (p, len(files[p]), _sha(files[p])) for p in (self.SKILL_FILE, *self.bundled())]
        assert source.digest_all([pdf]) == {pdf.key: recorded}

    def test_recorded_files_are_served(self, source: SkillSource, pdf: Skill) -> None:
        recorded = source.digest(pdf)
        for path in self.bundled():
            assert source.read(pdf, path, recorded=recorded) == CATALOG["pdf-tools"][path]
        assert source.read_skill_file(pdf, recorded=recorded) == self.skill_file(pdf)

    def test_a_record_that_is_not_the_skill_s_is_refused(self, source: SkillSource,
                                                         found: DiscoveryResult) -> None:
        pdf, git = (next(s for s in found.skills if s.name == n) for n in ("pdf-tools",
                                                                            "git-helper"))
        with pytest.raises(StaleFile):
            source.read_skill_file(pdf, recorded=source.digest(git))

    def test_a_changed_file_fails_the_digest_check(self, source: SkillSource,
                                                   pdf: Skill) -> None:
        self.skip_unless(self.BUNDLES_FILES, self.FILES_CHANGE)
        recorded = source.digest(pdf)
        self.change(pdf, "notes.txt", b"line one\r\nline 2!\n")  # same size, other bytes
        with pytest.raises(StaleFile, match="changed on disk"):
            source.read(pdf, "notes.txt", recorded=recorded)
        assert source.read(pdf, "notes.txt") == b"line one\r\nline 2!\n"  # unchecked: no record
        self.change(pdf, "SKILL.md", skill_md("pdf-tools", PDF_DESCRIPTION, "Edited.\n"))
        with pytest.raises(StaleFile, match=r"SKILL\.md"):
            source.read_skill_file(pdf, recorded=recorded)

    def test_a_file_added_after_the_build_is_not_served(self, source: SkillSource,
                                                        pdf: Skill) -> None:
        self.skip_unless(self.BUNDLES_FILES, self.FILES_CHANGE)
        recorded = source.digest(pdf)
        self.change(pdf, "late.txt", b"new\n")
        with pytest.raises(StaleFile, match="was not in the index"):
            source.read(pdf, "late.txt", recorded=recorded)


class FolderSourceContract(SkillSourceContract):
    """The contract for a source that reads skill folders under an org root: ``publish``
    writes them there (``write_folders``), ``change`` and ``remove`` edit them in place."""

    def publish(self, where: Path, catalog: Catalog) -> DiscoveryConfig:
        return DiscoveryConfig(org_roots=(str(write_folders(where, catalog)),))

    def change(self, skill: Skill, path: str, data: bytes) -> None:
        (Path(skill.base_dir) / path).write_bytes(data)

    def remove(self, skill: Skill, path: str) -> None:
        (Path(skill.base_dir) / path).unlink()


def write_folders(where: Path, catalog: Catalog) -> Path:
    """``catalog`` as skill folders under ``where/skills``; that root."""
    root = where / "skills"
    for folder, files in catalog.items():
        for rel, data in files.items():
            path = root / folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    return root


class MemorySource(SkillSource):
    """Skills held in memory (``base_dir`` -> path -> bytes), no disk: the contract's second
    implementation, and a source for the activation tests that must not touch a file."""

    key = "memory"

    def __init__(self) -> None:
        self.folders: dict[str, dict[str, bytes]] = {}

    def discover(self, config: DiscoveryConfig, *, max_bytes: int = SKILL_FILE_MAX_BYTES,
                 workers: Workers | None = None) -> DiscoveryResult:
        skills: list[Skill] = []
        diags: list[Diagnostic] = []
        for base in sorted(self.folders):
            location = f"{base}/SKILL.md"
            try:
                skill, more = parse_skill_md(self.folders[base]["SKILL.md"], location=location,
                                             base_dir=base, scope=Scope.ORG, max_bytes=max_bytes)
            except SkillParseError as exc:
                diags.append(diagnostic_from_error(exc, location))
                continue
            skills.append(skill)
            diags.extend(more)
        return DiscoveryResult(tuple(sorted(skills, key=lambda s: (s.name, s.location))),
                               (), tuple(diags))

    def _bundled(self, skill: Skill) -> list[str]:
        return sorted(p for p in self.folders.get(skill.base_dir, {})
                      if p not in SKILL_DEFINITION_FILES
                      and not any(part.startswith(".") for part in p.split("/")))

    def list_files(self, skill: Skill, cap: int = RESOURCE_LIST_CAP) -> ResourceListing:
        found = self._bundled(skill)
        return ResourceListing(tuple(found[:cap]), max(len(found) - cap, 0), True)

    def fetch(self, skill: Skill, path: str, max_bytes: int = RESOURCE_MAX_BYTES) -> SkillFile:
        key = str(PurePosixPath(path))
        if key not in self._bundled(skill):
            raise NotFound(f"no resource {path!r} in this skill")
        data = self.folders[skill.base_dir][key]
        if len(data) > max_bytes:
            raise TooLarge(f"resource {path!r} is {len(data)} bytes; the limit is {max_bytes}")
        return SkillFile(path, data, media_type(key))

    def fetch_skill_file(self, skill: Skill) -> bytes:
        data = self.folders.get(skill.base_dir, {}).get(self.skill_file_name(skill))
        if data is None:
            raise NotFound(f"skill {skill.name!r} is gone; reindex")
        if len(data) > SKILL_FILE_MAX_BYTES:
            raise TooLarge(f"SKILL.md of {skill.name!r} is {len(data)} bytes")
        return data

    def digest(self, skill: Skill, previous: SkillDigests | None = None) -> SkillDigests:
        folder = self.folders[skill.base_dir]
        paths = [self.skill_file_name(skill), *self._bundled(skill)]
        return SkillDigests(tuple(FileDigest(p, len(folder[p]), sha256_digest(folder[p]))
                                  for p in paths))

