"""Where discovery may go and how much of it: symlinks out of a scope, directory caps per
scope (catalogs whole, home/project capped), cut-short scans refused by ``index``, and the
project's own .gitignore."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from router.cli import main
from router.config import DiscoveryConfig
from router.index.versions.layout import read_info
from router.skills.discovery import discover
from router.skills.model import DiscoveryResult, Scope
from router.skills.scan_plan import IncompleteScan, check_complete, outer_for

SKILL = "---\nname: {name}\ndescription: Handles {name} work. Use when asked.\n---\n# Steps\n"


def write_skill(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(SKILL.format(name=folder.name))
    return folder


def org(root: Path, **settings: object) -> DiscoveryConfig:
    return DiscoveryConfig(project_dir=None, home_dir=None, org_roots=(str(root),),
                           **settings)  # type: ignore[arg-type]


def names(result: DiscoveryResult) -> list[str]:
    return [s.name for s in result.skills]


def link_warnings(result: DiscoveryResult) -> list[str]:
    return [d.path for d in result.diagnostics if "symlink leads outside" in d.message]


# --- symlinks ------------------------------------------------------------------------------

def test_a_link_to_the_filesystem_root_is_not_walked(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root / "real")
    (root / "r").symlink_to("/")
    result = discover(org(root))
    assert names(result) == ["real"] and link_warnings(result) == [str(root / "r")]
    assert all(not d.message.startswith("scan stopped") for d in result.diagnostics)


def test_a_skill_folder_linked_from_outside_is_skipped_unless_allowed(tmp_path: Path) -> None:
    write_skill(tmp_path / "elsewhere/outside")
    root = tmp_path / "skills"
    write_skill(root / "inside")
    (root / "x").symlink_to(tmp_path / "elsewhere")
    (root / "alias").symlink_to(root / "inside")  # inside the root: followed (same folder)
    assert names(discover(org(root))) == ["inside"]
    assert names(discover(org(root, follow_external_links=True))) == ["inside", "outside"]


def test_a_skill_file_linked_from_outside_is_skipped(tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text(SKILL.format(name="leaky"))
    root = tmp_path / "skills"
    (root / "leaky").mkdir(parents=True)
    (root / "leaky/SKILL.md").symlink_to(secret)
    result = discover(org(root))
    assert names(result) == [] and link_warnings(result) == [str(root / "leaky/SKILL.md")]


def test_user_skills_may_link_within_home_but_not_out_of_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_skill(home / "code/mine")
    write_skill(tmp_path / "other/theirs")
    skills = home / ".claude/skills"
    skills.mkdir(parents=True)
    (skills / "mine").symlink_to(home / "code/mine")
    (skills / "theirs").symlink_to(tmp_path / "other/theirs")
    result = discover(DiscoveryConfig(project_dir=None, home_dir=str(home)))
    assert names(result) == ["mine"] and link_warnings(result) == [str(skills / "theirs")]


# --- directory caps ------------------------------------------------------------------------

def test_an_organisation_root_is_scanned_whole(tmp_path: Path) -> None:
    root = tmp_path / "catalog"
    for i in range(2100):  # more directories than the home/project cap of 2,000
        write_skill(root / f"s{i:04d}")
    result = discover(org(root))
    assert len(result.skills) == 2100
    check_complete(org(root), result.diagnostics)  # nothing was cut


def test_home_scans_keep_their_cap_and_catalogs_can_have_one(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for i in range(5):
        write_skill(home / f".agents/skills/h{i}")
        write_skill(tmp_path / f"catalog/c{i}")
    config = DiscoveryConfig(project_dir=None, home_dir=str(home),
                             org_roots=(str(tmp_path / "catalog"),), max_dirs=3)
    result = discover(config)
    assert sorted(names(result)) == ["c0", "c1", "c2", "c3", "c4", "h0", "h1"]
    with pytest.raises(IncompleteScan, match="--allow-partial-scan"):
        check_complete(config, result.diagnostics)
    check_complete(DiscoveryConfig(allow_partial_scan=True), result.diagnostics)
    capped = discover(org(tmp_path / "catalog", catalog_max_dirs=3))
    assert names(capped) == ["c0", "c1"]


def test_index_fails_on_a_cut_short_scan_unless_allowed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    for i in range(5):
        write_skill(tmp_path / f"catalog/c{i}")
    monkeypatch.setenv("SKILL_ROUTER_DISCOVERY_CATALOG_MAX_DIRS", "3")
    argv = ["index", "--no-project", "--no-home", "--root", str(tmp_path / "catalog"),
            "--out", str(tmp_path / "index"), "--model", "hash"]
    assert main(argv) == 2
    assert "scan was cut short" in capsys.readouterr().err
    assert not (tmp_path / "index/CURRENT").exists()
    assert main([*argv, "--allow-partial-scan"]) == 0
    assert read_info(tmp_path / "index").skill_count == 2


# --- the project's .gitignore --------------------------------------------------------------

def test_the_project_gitignore_hides_project_skills(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    for name in ("kept", "local-only", "scratch"):
        write_skill(project / ".agents/skills" / name)
    (project / ".gitignore").write_text(".agents/skills/local-only/\n")
    (project / ".agents/.gitignore").write_text("skills/scratch/\n")
    config = DiscoveryConfig(project_dir=str(project), home_dir=None, trust_project=True)
    assert names(discover(config)) == ["kept"]
    unfiltered = DiscoveryConfig(project_dir=str(project), home_dir=None, trust_project=True,
                                 honour_gitignore=False)
    assert names(discover(unfiltered)) == ["kept", "local-only", "scratch"]


def test_outer_gitignore_folders_run_from_the_project_down(tmp_path: Path) -> None:
    config = DiscoveryConfig(project_dir=str(tmp_path))
    root = os.path.join(str(tmp_path), ".agents", "skills")
    assert outer_for(config, Scope.PROJECT, root) == (str(tmp_path),
                                                      os.path.join(str(tmp_path), ".agents"))
    assert outer_for(config, Scope.ORG, root) == ()
