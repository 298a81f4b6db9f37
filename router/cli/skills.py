"""Subcommands ``list``, ``validate`` and ``lint``; discovery flags shared with other commands."""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import shutil
import sys
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

from router.cli.common_args import add_json_args
from router.cli.guard import EXIT_FAILURE, EXIT_OK, EXIT_USAGE
from router.common.textsafe import one_line, printable
from router.config import DiscoveryConfig, load_config
from router.errors import InvalidRequest, NotFound, SkillParseError, TooLarge
from router.skills.catalogs import parse_specs
from router.skills.discovery import load_skill_dir
from router.skills.files import skill_text
from router.skills.limits import MANIFEST_FILE, SKILL_MD_FILES
from router.skills.lint import lint_skill
from router.skills.mcp_tools import parse_specs as parse_servers
from router.skills.model import Diagnostic, Level, Scope, Skill, SkillKind
from router.skills.sources.base import SkillSource, create_source
from router.skills.walk import ScanLimits, find_skill_dirs

log = logging.getLogger(__name__)



def add_discovery_args(parser: argparse.ArgumentParser) -> None:
    """Add the flags that choose where skills are discovered."""
    group = parser.add_argument_group("discovery")
    group.add_argument("--project", metavar="DIR",
                       help="project directory (default: the config's, else the current one)")
    group.add_argument("--home", metavar="DIR",
                       help="home directory for user-level skills (default: the config's, "
                            "else $HOME)")
    group.add_argument("--no-project", action="store_true",
                       help="no project scope (e.g. a server indexing only shared roots)")
    group.add_argument("--no-home", action="store_true", help="no user (home) scope")
    group.add_argument("--root", metavar="DIR", action="append",
                       help="organisation skills root; repeatable; replaces the config's list")
    group.add_argument("--bundled", metavar="DIR", action="append",
                       help="bundled skills root; repeatable; replaces the config's list")
    group.add_argument("--catalog", metavar="NAME=DIR", action="append",
                       help="a named catalog, indexed whole; repeatable, in precedence order "
                            "(the other flags' skills form the catalog 'default', after these)")
    group.add_argument("--registry", metavar="[NAME=]URL", action="append",
                       help="index the skills a registry publishes in its well-known index "
                            "(URL/.well-known/agent-skills/index.json) into catalog NAME "
                            "(default: 'default'); repeatable; replaces the config's list")
    group.add_argument("--mcp-server", metavar="NAME=COMMAND", action="append",
                       help="index the tools of an MCP server (COMMAND: a command line run "
                            "over stdio, or an http(s):// URL) as callable skills of catalog "
                            "NAME; repeatable; replaces the config's list")
    group.add_argument("--trust-project", action="store_const", const=True, default=None,
                       help="load project-level skills (they are skipped unless trusted)")
    group.add_argument("--no-gitignore", dest="honour_gitignore", action="store_const",
                       const=False, default=None, help="scan folders that .gitignore excludes")


def discovery_config_from_args(args: argparse.Namespace,
                               base: DiscoveryConfig) -> DiscoveryConfig:
    """``base`` (the config file's discovery section) with the command-line flags applied.
    A folder named on the command line that does not exist is an InvalidRequest naming it
    (a typo must not become an empty catalog)."""
    _check_folders(args)
    project = getattr(args, "project", None) or base.project_dir or os.getcwd()
    home = (getattr(args, "home", None) or base.home_dir
            or os.environ.get("HOME") or os.path.expanduser("~"))
    changes: dict[str, Any] = {
        "project_dir": None if getattr(args, "no_project", False) else os.path.abspath(project),
        "home_dir": None if getattr(args, "no_home", False) else os.path.abspath(home)}
    if getattr(args, "root", None):
        changes["org_roots"] = tuple(os.path.abspath(p) for p in args.root)
    if getattr(args, "bundled", None):
        changes["bundled_roots"] = tuple(os.path.abspath(p) for p in args.bundled)
    if getattr(args, "catalog", None):
        changes["catalogs"] = parse_specs(args.catalog)
    if getattr(args, "registry", None):
        from router.skills.sources.registries import parse_registries

        changes["registries"] = parse_registries(args.registry)  # a malformed one stops here
    if getattr(args, "mcp_server", None):
        parse_servers(args.mcp_server)  # a malformed one stops here, before anything is built
        changes["mcp_servers"] = tuple(args.mcp_server)
    if getattr(args, "trust_project", None) is not None:
        changes["trust_project"] = bool(args.trust_project)
    if getattr(args, "honour_gitignore", None) is not None:
        changes["honour_gitignore"] = bool(args.honour_gitignore)
    return dataclasses.replace(base, **changes)


def _check_folders(args: argparse.Namespace) -> None:
    named = [("--project", getattr(args, "project", None)), ("--home", getattr(args, "home", None)),
             *(("--root", p) for p in getattr(args, "root", None) or ()),
             *(("--bundled", p) for p in getattr(args, "bundled", None) or ()),
             *(("--catalog", s.partition("=")[2]) for s in getattr(args, "catalog", None) or ()
               if "=" in s)]
    for flag, path in named:
        if path and not os.path.isdir(path):
            what = "not a folder" if os.path.exists(path) else "no such folder"
            raise InvalidRequest(f"{flag} {path}: {what}")


def format_diagnostic(diag: Diagnostic) -> str:
    where = f" {diag.path}:" if diag.path else ":"
    return printable(f"{diag.level.value.upper()}{where} {diag.message}")


def _flags(skill: Skill) -> str:
    flags = [("always-on", skill.always_on), ("manual-only", not skill.model_invocable),
             ("no-user", not skill.user_invocable), ("disabled", not skill.enabled),
             ("deprecated", skill.deprecated), ("params", skill.parameters is not None),
             ("mcp-tool", skill.kind is SkillKind.MCP_TOOL),  # and its annotations' hints
             ("read-only", skill.annotations.get("readOnlyHint") is True),
             ("destructive", skill.annotations.get("destructiveHint") is True)]
    return ",".join(name for name, on in flags if on) or "-"


def format_table(skills: Sequence[Skill], width: int) -> list[str]:
    """Aligned rows: name, scope, flags, description truncated to fit ``width``."""
    rows = [(printable(s.name), s.scope.value, _flags(s), printable(one_line(s.description)))
            for s in skills]
    table = [("NAME", "SCOPE", "FLAGS", "DESCRIPTION"), *rows]
    widths = [max(len(row[i]) for row in table) for i in range(3)]
    room = max(20, width - sum(widths) - 6)
    lines = []
    for name, scope, flags, text in table:
        text = text if len(text) <= room else text[: room - 3].rstrip() + "..."
        line = f"{name:<{widths[0]}}  {scope:<{widths[1]}}  {flags:<{widths[2]}}  {text}"
        lines.append(line.rstrip())
    return lines


def _base_config(args: argparse.Namespace) -> DiscoveryConfig:
    return load_config(getattr(args, "config", None)).discovery


def cmd_list(args: argparse.Namespace) -> int:
    config = discovery_config_from_args(args, _base_config(args))
    result = create_source(config.source).discover(config)
    if args.format == "json":
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        return EXIT_OK
    if result.skills:
        width = shutil.get_terminal_size((120, 24)).columns
        print("\n".join(format_table(result.skills, width)))
    else:
        print("no skills found", file=sys.stderr)
    _print_diagnostics(result.diagnostics, sys.stderr)
    return EXIT_OK


def _print_diagnostics(diags: Iterable[Diagnostic], out: TextIO) -> None:
    for diag in diags:
        print(format_diagnostic(diag), file=out)


def _check_root(root: str, *, lint: bool) -> tuple[list[Skill], list[Diagnostic], int]:
    """The skills loaded under ``root``, every problem found, and how many folders held a
    SKILL.md or manifest.json."""
    folders, diags = find_skill_dirs(root, ScanLimits())
    if not folders:
        diags.append(Diagnostic(Level.ERROR, root, "no SKILL.md or manifest.json found"))
    skills: list[Skill] = []
    source = create_source("disk")  # the folders checked are on disk: the disk reads them
    for folder in folders:
        skill, more = load_skill_dir(folder, Scope.BUNDLED)
        diags.extend(more)
        if skill is None:
            continue
        skills.append(skill)
        if lint:
            diags.extend(lint_skill(skill, _body(skill, diags, source)))
    return skills, diags, len(folders)


def _body(skill: Skill, diags: list[Diagnostic], source: SkillSource) -> str | None:
    """The instructions of ``skill``'s SKILL.md as ``source`` serves them (None for a
    manifest, or when they cannot be read: a warning then says why)."""
    if skill.kind is not SkillKind.SKILL_MD:
        return None
    try:
        return skill_text(source.read_skill_file(skill), skill.location, body_only=True)
    except SkillParseError as exc:
        diags.append(Diagnostic(Level.WARNING, skill.location, f"body not checked: {exc.reason}"))
    except (NotFound, TooLarge) as exc:  # gone or grown since it was loaded
        diags.append(Diagnostic(Level.WARNING, skill.location, f"body not checked: {exc}"))
    return None


def _resolve(path: str) -> str | None:
    """The folder to check for ``path``, or None when ``path`` cannot be validated."""
    full = os.path.abspath(path)
    if os.path.isdir(full):
        return full
    if os.path.isfile(full) and os.path.basename(full) in (*SKILL_MD_FILES, MANIFEST_FILE):
        return os.path.dirname(full)
    return None


def check_paths(paths: Sequence[str], *, lint: bool, strict: bool, scanner_path: str = "") -> int:
    """Validate each path, print every problem to stdout (and which content scan ran to
    stderr), and return the exit code."""
    code = EXIT_OK
    skills: list[Skill] = []
    diags: list[Diagnostic] = []
    folders = 0
    for path in paths:
        root = _resolve(path)
        if root is None:
            print(f"ERROR {path}: no such skill folder, SKILL.md or manifest.json")
            code = EXIT_USAGE
            continue
        found, more, count = _check_root(root, lint=lint)
        folders += count
        skills.extend(found)
        diags.extend(more)
    seen: dict[str, str] = {}
    for skill in skills:
        if skill.name in seen and seen[skill.name] != skill.location:
            diags.append(Diagnostic(Level.WARNING, skill.location,
                                    f"duplicate name {skill.name!r}; also {seen[skill.name]}"))
        seen.setdefault(skill.name, skill.location)
    from router.admission.admit import finding_diagnostics, scan_diagnostics

    diags.extend(finding_diagnostics(skills))  # what admission would find in them
    scanned, ran = scan_diagnostics(skills, scanner_path) if skills else ([], "")
    diags.extend(scanned)
    if ran:
        print(ran, file=sys.stderr)
    unique = list(dict.fromkeys(diags))
    _print_diagnostics(unique, sys.stdout)
    errors = sum(d.level is Level.ERROR for d in unique)
    print(f"checked {counted(folders, 'skill folder')} ({counted(len(skills), 'skill')} "
          f"loaded): {counted(errors, 'error')}, {counted(len(unique) - errors, 'warning')}",
          file=sys.stderr)
    if code == EXIT_OK and (errors or (strict and unique)):
        code = EXIT_FAILURE
    return code


def counted(count: int, noun: str) -> str:
    """``1 error``, ``2 errors``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _scanner_setting(args: argparse.Namespace) -> str:
    return load_config(getattr(args, "config", None)).admission.scanner_path


def cmd_validate(args: argparse.Namespace) -> int:
    return check_paths(args.paths, lint=not args.no_lint, strict=False,
                       scanner_path=_scanner_setting(args))


def cmd_lint(args: argparse.Namespace) -> int:
    return check_paths(args.paths, lint=True, strict=True, scanner_path=_scanner_setting(args))


def register(sub: Any) -> None:
    """Add ``list``, ``validate`` and ``lint`` to the ``skill-router`` subcommands."""
    listing = sub.add_parser("list", help="discover skills in every scope and list them")
    add_discovery_args(listing)
    add_json_args(listing)  # a table (diagnostics on stderr) or one JSON object on stdout
    listing.set_defaults(handler=cmd_list)
    paths_help = "a skill folder, a SKILL.md or manifest.json file, or a folder of skill folders"
    validate = sub.add_parser(
        "validate", help="check skills against the spec and the description-quality lint",
        description="Print every problem as 'LEVEL path: message'. Lint warnings are included "
                    "unless --no-lint. Exit 0: clean or warnings only; 1: a skill would be "
                    "skipped (errors); 2: a path is missing or not a skill.")
    validate.add_argument("paths", nargs="+", metavar="PATH", help=paths_help)
    validate.add_argument("--no-lint", action="store_true",
                          help="report spec problems only, not description-quality warnings")
    validate.set_defaults(handler=cmd_validate)
    lint = sub.add_parser(
        "lint", help="description-quality lint (what/when, third person, verb first, ...)",
        description="Like validate, but any warning fails: exit 0 only when nothing is found; "
                    "1 on any warning or error; 2 when a path is missing or not a skill.")
    lint.add_argument("paths", nargs="+", metavar="PATH", help=paths_help)
    lint.set_defaults(handler=cmd_lint)
