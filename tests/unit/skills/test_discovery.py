"""Discovery over real folders: scopes, scan rules, limits, collisions, trust."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from router.config import DiscoveryConfig
from router.errors import SkillParseError
from router.skills.discovery import discover, scan_root
from router.skills.files import read_body
from router.skills.model import DiscoveryResult, Level, Scope, SkillKind
from tests.support.skills import DESCRIPTION as DESC
from tests.support.skills import write_skill


def config(tmp_path: Path, **kw: Any) -> DiscoveryConfig:
    base: dict[str, Any] = {"project_dir": str(tmp_path / "proj"),
                            "home_dir": str(tmp_path / "home"), "trust_project": True}
    base.update(kw)
    return DiscoveryConfig(**base)


def names(result: DiscoveryResult) -> list[str]:
    return [s.name for s in result.skills]


def messages(result: DiscoveryResult, level: Level | None = None) -> str:
    return "\n".join(d.message for d in result.diagnostics if level in (None, d.level))


def by_name(result: DiscoveryResult, name: str) -> Any:
    return next(s for s in result.skills if s.name == name)


def test_every_scope_and_client_dir(tmp_path: Path) -> None:
    write_skill(tmp_path / "proj/.agents/skills/alpha")
    write_skill(tmp_path / "proj/.claude/skills/bravo")
    write_skill(tmp_path / "home/.cursor/skills/charlie")
    write_skill(tmp_path / "org/delta")
    write_skill(tmp_path / "bundled/echo")
    result = discover(config(tmp_path, org_roots=(str(tmp_path / "org"),),
                             bundled_roots=(str(tmp_path / "bundled"),)))
    assert result.diagnostics == ()
    assert names(result) == ["alpha", "bravo", "charlie", "delta", "echo"]
    scopes = {s.name: s.scope for s in result.skills}
    assert scopes == {"alpha": Scope.PROJECT, "bravo": Scope.PROJECT, "charlie": Scope.USER,
                      "delta": Scope.ORG, "echo": Scope.BUNDLED}
    alpha = by_name(result, "alpha")
    assert alpha.location == str(tmp_path / "proj/.agents/skills/alpha/SKILL.md")
    assert alpha.base_dir == str(tmp_path / "proj/.agents/skills/alpha")


def test_nested_skills_found_but_skill_folders_not_descended(tmp_path: Path) -> None:
    root = tmp_path / "org"
    write_skill(root / "category/deep-skill")
    write_skill(root / "outer")
    write_skill(root / "outer/scripts/inner")
    skills, diags = scan_root(str(root), Scope.ORG)
    assert [s.name for s in skills] == ["deep-skill", "outer"] and diags == []


def test_lowercase_skill_md_and_manifest_folders(tmp_path: Path) -> None:
    root = tmp_path / "org"
    write_skill(root / "lower", filename="skill.md")
    (root / "callable").mkdir(parents=True)
    (root / "callable/manifest.json").write_text(json.dumps(
        {"name": "callable", "description": DESC, "parameters": {"type": "object"}}))
    write_skill(root / "both")
    (root / "both/manifest.json").write_text(json.dumps({"parameters": {"type": "object"}}))
    skills, diags = scan_root(str(root), Scope.ORG)
    kinds = {s.name: (s.kind, s.parameters is not None) for s in skills}
    assert kinds == {"both": (SkillKind.SKILL_MD, True), "callable": (SkillKind.MANIFEST, True),
                     "lower": (SkillKind.SKILL_MD, False)}
    assert [d.message for d in diags] == ["skill file should be named SKILL.md"]


def test_git_and_node_modules_are_skipped(tmp_path: Path) -> None:
    root = tmp_path / "org"
    write_skill(root / ".git/hidden-a")
    write_skill(root / "pkg/node_modules/hidden-b")
    write_skill(root / "visible")
    assert [s.name for s in scan_root(str(root), Scope.ORG)[0]] == ["visible"]


def test_gitignore_is_honoured_including_nested_files(tmp_path: Path) -> None:
    root = tmp_path / "org"
    (root / "sub").mkdir(parents=True)
    (root / ".gitignore").write_text("build/\ngen*/\n")
    (root / "sub/.gitignore").write_text("tmp/\n!gen-keep/\n")
    write_skill(root / "build/ignored-a")
    write_skill(root / "gen-x/ignored-b")
    write_skill(root / "sub/tmp/ignored-c")
    write_skill(root / "sub/gen-keep/kept-d")
    write_skill(root / "tmp/kept-e")  # sub/.gitignore does not apply above sub/
    skills, _ = scan_root(str(root), Scope.ORG)
    assert sorted(s.name for s in skills) == ["kept-d", "kept-e"]
    everything, _ = scan_root(str(root), Scope.ORG, honour_gitignore=False)
    assert len(everything) == 5
    result = discover(config(tmp_path, org_roots=(str(root),), honour_gitignore=False))
    assert len(result.skills) == 5


def test_depth_limit(tmp_path: Path) -> None:
    root = tmp_path / "org"
    write_skill(root / "1/2/3/4/5/six-deep")
    write_skill(root / "a/b/c/d/e/f/seven-deep")
    result = discover(config(tmp_path, org_roots=(str(root),)))
    assert names(result) == ["six-deep"]
    warning = next(d for d in result.diagnostics if "depth limit 6" in d.message)
    assert warning.level is Level.WARNING and warning.path.endswith("a/b/c/d/e/f/seven-deep")
    assert names(discover(config(tmp_path, org_roots=(str(root),), max_depth=7))) == [
        "seven-deep", "six-deep"]


def test_max_dirs_limit(tmp_path: Path) -> None:
    root = tmp_path / "org"
    for i in range(5):
        write_skill(root / f"s{i}")
    skills, diags = scan_root(str(root), Scope.ORG, max_dirs=3)
    assert [s.name for s in skills] == ["s0", "s1"]
    assert "scan stopped after 3 directories" in diags[0].message
    assert len(scan_root(str(root), Scope.ORG, max_dirs=6)[1]) == 0


def test_symlink_loops_are_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "org"
    write_skill(root / "a/real-skill")
    (root / "a/loop").symlink_to(root)
    (root / "a/self").symlink_to(root / "a")
    (root / "b").mkdir()
    (root / "b/up").symlink_to(root / "b")
    skills, diags = scan_root(str(root), Scope.ORG)
    assert [s.name for s in skills] == ["real-skill"] and diags == []


def test_symlinked_skill_folder_outside_the_root_is_found_only_when_allowed(
        tmp_path: Path) -> None:
    write_skill(tmp_path / "elsewhere/linked-skill")
    root = tmp_path / "org"
    root.mkdir()
    (root / "linked-skill").symlink_to(tmp_path / "elsewhere/linked-skill")
    skills, diags = scan_root(str(root), Scope.ORG)
    assert skills == [] and "symlink leads outside" in diags[0].message
    allowed = discover(config(tmp_path, org_roots=(str(root),), follow_external_links=True))
    assert [s.location for s in allowed.skills] == [str(root / "linked-skill/SKILL.md")]
    assert allowed.diagnostics == ()


def test_same_folder_through_two_client_dirs_counts_once(tmp_path: Path) -> None:
    write_skill(tmp_path / "proj/.agents/skills/shared")
    (tmp_path / "proj/.claude").mkdir()
    (tmp_path / "proj/.claude/skills").symlink_to(tmp_path / "proj/.agents/skills")
    result = discover(config(tmp_path))
    assert names(result) == ["shared"] and result.shadowed == () and result.diagnostics == ()


def test_project_overrides_user(tmp_path: Path) -> None:
    project = write_skill(tmp_path / "proj/.agents/skills/dup")
    user = write_skill(tmp_path / "home/.agents/skills/dup", description="User copy. Use when.")
    result = discover(config(tmp_path))
    assert by_name(result, "dup").location == str(project)
    assert [s.to_dict() for s in result.shadowed] == [
        {"name": "dup", "location": str(user), "shadowed_by": str(project)}]
    warning = next(d for d in result.diagnostics if "shadowed" in d.message)
    assert warning.level is Level.WARNING and warning.path == str(user)
    assert str(project) in warning.message


def test_changed_precedence_user_overrides_project(tmp_path: Path) -> None:
    project = write_skill(tmp_path / "proj/.agents/skills/dup")
    user = write_skill(tmp_path / "home/.agents/skills/dup")
    result = discover(config(tmp_path, precedence=("user", "project", "org", "bundled")))
    assert by_name(result, "dup").location == str(user)
    assert result.shadowed[0].location == str(project)
    assert result.shadowed[0].shadowed_by == str(user)


def test_org_overrides_bundled_and_unlisted_scopes_follow(tmp_path: Path) -> None:
    org = write_skill(tmp_path / "org/dup")
    write_skill(tmp_path / "bundled/dup")
    result = discover(config(tmp_path, org_roots=(str(tmp_path / "org"),),
                             bundled_roots=(str(tmp_path / "bundled"),), precedence=("org",)))
    assert by_name(result, "dup").location == str(org)
    assert len(result.shadowed) == 1


def test_within_a_scope_client_dir_order_then_walk_order(tmp_path: Path) -> None:
    agents = write_skill(tmp_path / "proj/.agents/skills/dup")
    claude = write_skill(tmp_path / "proj/.claude/skills/dup")
    result = discover(config(tmp_path))
    assert by_name(result, "dup").location == str(agents)
    assert result.shadowed[0].location == str(claude)
    reverse = discover(config(tmp_path, client_dirs=(".claude/skills", ".agents/skills")))
    assert by_name(reverse, "dup").location == str(claude)
    first = write_skill(tmp_path / "org/a/dup2", name="dup2")
    second = write_skill(tmp_path / "org/b/dup2", name="dup2")
    result = discover(config(tmp_path, org_roots=(str(tmp_path / "org"),)))
    assert by_name(result, "dup2").location == str(first)
    assert [s.location for s in result.shadowed if s.name == "dup2"] == [str(second)]


def test_untrusted_project_is_not_loaded(tmp_path: Path) -> None:
    write_skill(tmp_path / "proj/.agents/skills/dup")
    write_skill(tmp_path / "proj/.claude/skills/other")
    user = write_skill(tmp_path / "home/.agents/skills/dup")
    result = discover(config(tmp_path, trust_project=False))
    assert names(result) == ["dup"] and by_name(result, "dup").location == str(user)
    assert result.shadowed == ()
    project_dir = str(tmp_path / "proj")
    assert [d.to_dict() for d in result.diagnostics] == [{
        "level": "warning", "path": project_dir,
        "message": f"untrusted project {project_dir}: 2 skills not loaded "
                   "(pass --trust-project to load them)"}]


def test_project_that_is_the_home_directory_loads_once(tmp_path: Path) -> None:
    write_skill(tmp_path / "home/.agents/skills/mine")
    result = discover(config(tmp_path, project_dir=str(tmp_path / "home"), trust_project=False))
    assert [(s.name, s.scope) for s in result.skills] == [("mine", Scope.USER)]
    assert result.diagnostics == ()


def test_broken_skill_is_an_error_and_others_still_load(tmp_path: Path) -> None:
    write_skill(tmp_path / "org/good")
    bad = write_skill(tmp_path / "org/bad", description="")
    (tmp_path / "org/binary").mkdir()
    (tmp_path / "org/binary/SKILL.md").write_bytes(b"---\x00\x01\x02")
    result = discover(config(tmp_path, org_roots=(str(tmp_path / "org"),)))
    assert names(result) == ["good"]
    errors = {d.path: d.message for d in result.diagnostics if d.level is Level.ERROR}
    assert "missing description" in errors[str(bad)]
    assert "binary" in errors[str(tmp_path / "org/binary/SKILL.md")]


def test_unreadable_directory_simulated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_skill(tmp_path / "org/locked/inner")
    write_skill(tmp_path / "org/open")
    real_scandir = os.scandir
    locked = str(tmp_path / "org/locked")

    def scandir(path: Any) -> Any:
        if str(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = discover(config(tmp_path, org_roots=(str(tmp_path / "org"),)))
    assert names(result) == ["open"]
    assert [(d.level, d.path) for d in result.diagnostics] == [(Level.WARNING, locked)]
    assert "cannot read directory" in result.diagnostics[0].message


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="chmod 000 does not stop root from reading; covered by the "
                           "simulated test above")
def test_unreadable_directory_chmod(tmp_path: Path) -> None:
    write_skill(tmp_path / "org/locked/inner")
    write_skill(tmp_path / "org/open")
    locked = tmp_path / "org/locked"
    locked.chmod(0)
    try:
        result = discover(config(tmp_path, org_roots=(str(tmp_path / "org"),)))
    finally:
        locked.chmod(0o755)
    assert names(result) == ["open"]
    assert "cannot read directory" in messages(result, Level.WARNING)


def test_unreadable_file_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = write_skill(tmp_path / "org/locked")
    write_skill(tmp_path / "org/open")
    real_open = os.open

    def fake_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file) == str(locked):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake_open)
    result = discover(config(tmp_path, org_roots=(str(tmp_path / "org"),)))
    assert names(result) == ["open"]
    error = next(d for d in result.diagnostics if d.level is Level.ERROR)
    assert error.path == str(locked) and "cannot read file" in error.message


def test_missing_roots_and_unknown_scope_names(tmp_path: Path) -> None:
    result = discover(config(tmp_path, org_roots=(str(tmp_path / "nope"),),
                             precedence=("project", "galaxy")))
    text = messages(result, Level.WARNING)
    assert "org skills root not found" in text and "unknown scope 'galaxy'" in text
    assert result.skills == ()


def test_results_are_deterministic_and_sorted(tmp_path: Path) -> None:
    for name in ["zulu", "alpha", "mike"]:
        write_skill(tmp_path / "org" / name)
        write_skill(tmp_path / "bundled" / name)
    cfg = config(tmp_path, org_roots=(str(tmp_path / "org"),),
                 bundled_roots=(str(tmp_path / "bundled"),))
    first, second = discover(cfg), discover(cfg)
    assert first == second
    assert names(first) == ["alpha", "mike", "zulu"]
    assert [s.name for s in first.shadowed] == ["alpha", "mike", "zulu"]
    json.dumps(first.to_dict())


def test_read_body(tmp_path: Path) -> None:
    path = write_skill(tmp_path / "s", body="\n\n# Steps\n\nDo it.\n\n")
    assert read_body(str(path)) == "# Steps\n\nDo it."
    manifest = tmp_path / "m/manifest.json"
    manifest.parent.mkdir()
    manifest.write_text(json.dumps({"name": "m", "description": " Does m. "}))
    assert read_body(str(manifest)) == "Does m."
    with pytest.raises(SkillParseError, match="cannot read file"):
        read_body(str(tmp_path / "missing/SKILL.md"))
