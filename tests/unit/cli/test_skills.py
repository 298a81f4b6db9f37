"""``skill-router list | validate | lint`` and the shared discovery flags."""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path

import pytest

from router.cli import build_parser, main
from router.cli import skills as cli_skills
from router.config import DiscoveryConfig
from router.skills.mcp_tools import tool_skills
from tests.support.skills import write_skill as write_skill_md

GOOD = ("Extracts text and tables from PDF files and fills forms. Use when the user "
        "mentions PDFs or document extraction.")


# A lint-clean description and a one-line body unless a test says otherwise.
write_skill = partial(write_skill_md, description=GOOD, body="# Steps\n")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    write_skill(tmp_path / "proj/.agents/skills/pdf-tools")
    write_skill(tmp_path / "home/.agents/skills/pdf-tools")
    write_skill(tmp_path / "home/.claude/skills/always",
                extra="metadata:\n  router.always_on: 'true'\ndisable-model-invocation: true\n")
    write_skill(tmp_path / "org/org-skill")
    write_skill(tmp_path / "bundled/bundled-skill")
    return tmp_path


def flags(tree: Path) -> list[str]:
    return ["--project", str(tree / "proj"), "--home", str(tree / "home"),
            "--root", str(tree / "org"), "--bundled", str(tree / "bundled")]


def test_list_json_is_one_object_with_the_documented_keys(
        tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", *flags(tree), "--trust-project", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"skills", "shadowed", "diagnostics"}
    assert [s["name"] for s in data["skills"]] == [
        "always", "bundled-skill", "org-skill", "pdf-tools"]
    for skill in data["skills"]:
        assert {"name", "description", "location", "scope", "model_invocable",
                "user_invocable", "enabled"} <= set(skill)
    pdf = data["skills"][-1]
    assert pdf["scope"] == "project"
    assert pdf["location"] == str(tree / "proj/.agents/skills/pdf-tools/SKILL.md")
    assert data["shadowed"] == [{
        "name": "pdf-tools", "location": str(tree / "home/.agents/skills/pdf-tools/SKILL.md"),
        "shadowed_by": pdf["location"]}]
    assert [set(d) for d in data["diagnostics"]] == [{"level", "path", "message"}]
    assert data["diagnostics"][0]["level"] == "warning"


def test_list_untrusted_project(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", *flags(tree), "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["shadowed"] == []
    assert next(s for s in data["skills"] if s["name"] == "pdf-tools")["scope"] == "user"
    assert "untrusted project" in data["diagnostics"][0]["message"]
    assert "--trust-project" in data["diagnostics"][0]["message"]


def test_list_table(tree: Path, capsys: pytest.CaptureFixture[str],
                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run(capsys, "list", *flags(tree), "--trust-project")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 5
    assert lines[0].split() == ["NAME", "SCOPE", "FLAGS", "DESCRIPTION"]
    assert lines[1].split()[:3] == ["always", "user", "always-on,manual-only"]
    assert all(len(line) <= 80 for line in lines) and lines[1].endswith("...")
    assert lines[0].index("SCOPE") == lines[4].index("project")
    assert err.startswith("WARNING ") and "shadowed" in err


def test_list_no_gitignore(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "org").mkdir()
    (tmp_path / "org/.gitignore").write_text("hidden/\n")
    write_skill(tmp_path / "org/hidden/secret")
    base = ["list", "--project", str(tmp_path), "--home", str(tmp_path),
            "--root", str(tmp_path / "org"), "--format", "json"]
    assert json.loads(run(capsys, *base)[1])["skills"] == []
    names = [s["name"] for s in json.loads(run(capsys, *base, "--no-gitignore")[1])["skills"]]
    assert names == ["secret"]


def test_config_file_is_the_base_and_flags_override(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_skill(tmp_path / "a/from-config")
    write_skill(tmp_path / "b/from-flag")
    conf = tmp_path / "router.yaml"
    conf.write_text(f"discovery:\n  org_roots: [{tmp_path / 'a'}]\n  max_depth: 3\n")
    common = ["--project", str(tmp_path), "--home", str(tmp_path), "--format", "json"]
    out = run(capsys, "--config", str(conf), "list", *common)[1]
    assert [s["name"] for s in json.loads(out)["skills"]] == ["from-config"]
    out = run(capsys, "--config", str(conf), "list", *common, "--root", str(tmp_path / "b"))[1]
    assert [s["name"] for s in json.loads(out)["skills"]] == ["from-flag"]


def test_discovery_config_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    args = build_parser().parse_args(["list"])
    cfg = cli_skills.discovery_config_from_args(args, DiscoveryConfig(max_dirs=10))
    assert cfg.project_dir == str(tmp_path) and cfg.home_dir == str(tmp_path / "h")
    assert cfg.max_dirs == 10 and cfg.trust_project is False and cfg.honour_gitignore
    base = DiscoveryConfig(project_dir="/p", trust_project=True, org_roots=("/o",))
    cfg = cli_skills.discovery_config_from_args(args, base)
    assert (cfg.project_dir, cfg.trust_project, cfg.org_roots) == ("/p", True, ("/o",))


def test_bad_config_is_a_usage_error(tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    conf = tmp_path / "bad.yaml"
    conf.write_text("discovery:\n  no_such_key: 1\n")
    code, out, err = run(capsys, "--config", str(conf), "list", "--format", "json")
    assert code == 2 and out == "" and "no_such_key" in err


def test_validate_clean_skill(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "pdf-tools"
    skill_md = write_skill(folder)
    for target in (folder, skill_md):
        code, out, err = run(capsys, "validate", str(target))
        assert (code, out) == (0, "")
        assert "checked 1 skill folder (1 skill loaded): 0 errors, 0 warnings" in err


def test_validate_warnings_only_exit_0(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = write_skill(tmp_path / "folder", name="other-name")
    code, out, _ = run(capsys, "validate", str(tmp_path / "folder"))
    assert code == 0
    assert out.startswith(f"WARNING {path}: name 'other-name' does not match")


def test_validate_errors_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_skill(tmp_path / "skills/good")
    bad = write_skill(tmp_path / "skills/bad", description="")
    code, out, _ = run(capsys, "validate", str(tmp_path / "skills"))
    assert code == 1
    assert f"ERROR {bad}: missing description" in out
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, _ = run(capsys, "validate", str(empty))
    assert code == 1 and "no SKILL.md or manifest.json found" in out


def test_validate_usage_errors_exit_2(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    write_skill(tmp_path / "good")
    code, out, _ = run(capsys, "validate", str(tmp_path / "good"), str(tmp_path / "missing"))
    assert code == 2 and f"ERROR {tmp_path / 'missing'}" in out
    other = tmp_path / "notes.txt"
    other.write_text("hi")
    assert run(capsys, "validate", str(other))[0] == 2
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(["validate"])
    assert info.value.code == 2


def test_validate_manifest_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "search-kb"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps({
        "name": "search-kb", "description": GOOD, "parameters": {"type": "object"}}))
    assert run(capsys, "validate", str(folder / "manifest.json"))[:2] == (0, "")
    (folder / "manifest.json").write_text(json.dumps({
        "name": "search-kb", "description": GOOD, "parameters": {"type": "bogus"}}))
    code, out, _ = run(capsys, "validate", str(folder))
    assert code == 1 and "not a valid JSON Schema" in out


def test_validate_includes_lint_unless_disabled(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    write_skill(tmp_path / "vague", description="Helps with stuff.")
    code, out, _ = run(capsys, "validate", str(tmp_path / "vague"))
    assert code == 0 and "vague" in out and "too short" in out
    assert run(capsys, "validate", "--no-lint", str(tmp_path / "vague"))[:2] == (0, "")


def test_validate_reports_duplicate_names(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    write_skill(tmp_path / "a/dup")
    write_skill(tmp_path / "b/dup")
    code, out, _ = run(capsys, "validate", str(tmp_path / "a"), str(tmp_path / "b"))
    assert code == 0 and "duplicate name 'dup'" in out


def test_lint_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_skill(tmp_path / "good")
    write_skill(tmp_path / "vague", description="Helps with stuff.")
    assert run(capsys, "lint", str(tmp_path / "good"))[:2] == (0, "")
    code, out, _ = run(capsys, "lint", str(tmp_path / "vague"))
    assert code == 1 and out.startswith("WARNING ")
    assert run(capsys, "lint", str(tmp_path / "nope"))[0] == 2


def test_registered_in_the_main_cli() -> None:
    from router.cli import build_parser

    top = build_parser()
    args = top.parse_args(["list", "--format", "json", "--project", os.getcwd()])
    assert args.handler is cli_skills.cmd_list


def test_the_table_shows_an_mcp_tool_s_kind_and_hints() -> None:
    skills, _ = tool_skills({"git": [
        {"name": "git_log", "description": "Shows the commit logs.",
         "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}},
        {"name": "git_reset", "description": "Unstages all staged changes.",
         "inputSchema": {"type": "object"}, "annotations": {"destructiveHint": True}}]})
    rows = cli_skills.format_table(skills, 120)
    assert "params,mcp-tool,read-only" in rows[1] and "git-log" in rows[1]
    assert "params,mcp-tool,destructive" in rows[2]
