"""Find and load skills from every configured scope (the only filesystem scan).

Scopes are searched in ``DiscoveryConfig.precedence`` order (default project > user > org >
bundled; scopes left out of that list follow in the default order). In the project and user
scopes each of ``client_dirs`` is a root, under the project or home directory; org and bundled
roots are skills folders themselves. The first skill found with a name wins: earlier scope, then
earlier client dir (config order), then the sorted walk order inside a root. Every later skill
with that name is reported as shadowed, with a warning naming both. The same folder reached
twice (e.g. ``.claude/skills`` symlinked to ``.agents/skills``) counts once. Project skills load
only when ``trust_project`` is set; otherwise one warning says how many were held back.

All of that makes the catalog ``default``. Each named catalog (``DiscoveryConfig.catalogs``,
``router.skills.catalogs``) is scanned whole, as an organisation root is, with the same rule
inside it (first found wins); a name may be held by several catalogs, all kept.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

from router.common.checkpoints import checkpoint
from router.common.workers import Workers
from router.config import DiscoveryConfig
from router.errors import SkillParseError
from router.skills.catalogs import parse_spec
from router.skills.files import read_file
from router.skills.limits import SKILL_FILE_MAX_BYTES
from router.skills.manifest import attach_manifest, parse_manifest
from router.skills.model import (
    DEFAULT_CATALOG,
    Diagnostic,
    DiscoveryResult,
    Level,
    Scope,
    Shadowed,
    Skill,
)
from router.skills.parse import diagnostic_from_error, parse_skill_md
from router.skills.scan_plan import boundary_for, limits_for, outer_for
from router.skills.walk import ScanLimits, SkillDir, find_skill_dirs

log = logging.getLogger(__name__)

_Parser = Callable[..., tuple[Skill, list[Diagnostic]]]


def _load(parser: _Parser, path: str, base_dir: str, scope: Scope,
          max_bytes: int) -> tuple[Skill | None, list[Diagnostic]]:
    try:
        data = read_file(path, max_bytes)
        return parser(data, location=path, base_dir=base_dir, scope=scope, max_bytes=max_bytes)
    except SkillParseError as exc:
        return None, [diagnostic_from_error(exc, path)]
    except Exception as exc:  # one bad file must never stop a scan
        log.exception("unexpected error loading %s", path)
        return None, [Diagnostic(Level.ERROR, path, f"unexpected error: {exc!r}; skipped")]


def load_skill_dir(folder: SkillDir, scope: Scope, *,
                   max_bytes: int = SKILL_FILE_MAX_BYTES) -> tuple[Skill | None, list[Diagnostic]]:
    """Load one skill folder (SKILL.md, manifest.json, or both); None when it is skipped."""
    if folder.skill_file is None:
        assert folder.manifest_file is not None
        return _load(parse_manifest, folder.manifest_file, folder.path, scope, max_bytes)
    skill, diags = _load(parse_skill_md, folder.skill_file, folder.path, scope, max_bytes)
    if os.path.basename(folder.skill_file) != "SKILL.md":
        diags.append(Diagnostic(Level.WARNING, folder.skill_file,
                                "skill file should be named SKILL.md"))
    if skill is not None and folder.manifest_file is not None:
        try:
            data = read_file(folder.manifest_file, max_bytes)
        except SkillParseError as exc:
            diags.append(Diagnostic(Level.WARNING, folder.manifest_file,
                                    f"manifest.json ignored: {exc.reason}"))
        else:
            skill, more = attach_manifest(skill, data, location=folder.manifest_file,
                                          max_bytes=max_bytes)
            diags.extend(more)
    return skill, diags


def _load_all(folders: list[SkillDir], scope: Scope,
              max_bytes: int) -> list[tuple[Skill | None, list[Diagnostic]]]:
    return [load_skill_dir(folder, scope, max_bytes=max_bytes) for folder in folders]


@dataclass(frozen=True)
class _Root:
    """One root to scan: its folder, its scope, the scope's caps, the folder symlinks must
    stay in (None: the root) and the folders above it whose ``.gitignore`` applies
    (``router.skills.scan_plan``)."""

    path: str
    scope: Scope
    limits: ScanLimits
    boundary: str | None = None
    outer: tuple[str, ...] = ()


def _scan(root: _Root, max_bytes: int, seen: set[str],
          workers: Workers | None = None) -> tuple[list[Skill], list[Diagnostic]]:
    folders, diags = find_skill_dirs(root.path, root.limits, boundary=root.boundary,
                                     outer=root.outer)
    checkpoint("discovering")
    fresh: list[SkillDir] = []
    for folder in folders:
        if folder.real_path in seen:
            log.debug("skipping %s: same folder already loaded", folder.path)
            continue
        seen.add(folder.real_path)
        fresh.append(folder)
    # read and parsed over the build's worker processes when there are many (same order)
    load = partial(_load_all, scope=root.scope, max_bytes=max_bytes)
    loaded = workers.map(load, fresh) if workers is not None else load(fresh)
    skills: list[Skill] = []
    for skill, more in loaded:
        diags.extend(more)
        if skill is not None:
            skills.append(skill)
    return skills, diags


def scan_root(path: str, scope: Scope, *, max_depth: int = 6, max_dirs: int = 2000,
              honour_gitignore: bool = True, max_bytes: int = SKILL_FILE_MAX_BYTES
              ) -> tuple[list[Skill], list[Diagnostic]]:
    """Load every skill under one root, in walk order (no de-duplication by name)."""
    limits = ScanLimits(max_depth, max_dirs, honour_gitignore)
    return _scan(_Root(path, scope, limits), max_bytes, set())


def _scope_order(precedence: tuple[str, ...], diags: list[Diagnostic]) -> list[Scope]:
    order: list[Scope] = []
    for name in precedence:
        try:
            scope = Scope(name.strip().lower())
        except ValueError:
            diags.append(Diagnostic(Level.WARNING, "", f"unknown scope {name!r} in precedence"))
            continue
        if scope not in order:
            order.append(scope)
    return order + [s for s in Scope if s not in order]


def _roots(config: DiscoveryConfig, scope: Scope, diags: list[Diagnostic]) -> list[str]:
    if scope in (Scope.PROJECT, Scope.USER):
        base = config.project_dir if scope is Scope.PROJECT else config.home_dir
        if not base:
            return []
        if scope is Scope.PROJECT and config.home_dir and \
                os.path.realpath(base) == os.path.realpath(config.home_dir):
            return []  # the project is the home directory: its skills are user skills
        found = [os.path.join(os.path.abspath(base), d) for d in config.client_dirs]
        return [p for p in found if os.path.isdir(p)]
    explicit = config.org_roots if scope is Scope.ORG else config.bundled_roots
    roots = []
    for root in explicit:
        if os.path.isdir(root):
            roots.append(os.path.abspath(root))
        else:
            diags.append(Diagnostic(Level.WARNING, root, f"{scope.value} skills root not found"))
    return roots


def _shadow(winner: Skill, loser: Skill) -> tuple[Shadowed, Diagnostic]:
    message = (f"skill {loser.name!r} ({loser.scope.value}) is shadowed by {winner.location} "
               f"({winner.scope.value})")
    return (Shadowed(loser.name, loser.location, winner.location),
            Diagnostic(Level.WARNING, loser.location, message))


def _untrusted(project_dir: str, roots: list[str], limits: ScanLimits) -> list[Diagnostic]:
    count = sum(len(find_skill_dirs(root, limits)[0]) for root in roots)
    if not count:
        return []
    return [Diagnostic(Level.WARNING, project_dir,
                       f"untrusted project {project_dir}: {count} skills not loaded "
                       "(pass --trust-project to load them)")]


def _keep(winners: dict[str, Skill], skills: list[Skill], shadowed: list[Shadowed],
          diags: list[Diagnostic]) -> None:
    for skill in skills:
        if skill.name not in winners:
            winners[skill.name] = skill
            continue
        hidden, warning = _shadow(winners[skill.name], skill)
        shadowed.append(hidden)
        diags.append(warning)


def _named(config: DiscoveryConfig, max_bytes: int, workers: Workers | None,
           diags: list[Diagnostic], shadowed: list[Shadowed],
           default: dict[str, Skill]) -> list[Skill]:
    """The skills of ``default`` and of every named catalog (each scanned whole as an
    organisation root; ``--catalog default=DIR`` adds to ``default``)."""
    by_catalog: dict[str, dict[str, Skill]] = {DEFAULT_CATALOG: default}
    seen: dict[str, set[str]] = {}
    limits = limits_for(config, Scope.ORG)
    for spec in config.catalogs:
        name, root = parse_spec(spec)
        if not os.path.isdir(root):
            diags.append(Diagnostic(Level.WARNING, root, f"catalog {name!r} root not found",
                                    name))
            continue
        skills, found = _scan(_Root(root, Scope.ORG, limits, boundary=root), max_bytes,
                              seen.setdefault(name, set()), workers)
        mine: list[Diagnostic] = list(found)  # each of this catalog's, for its view
        _keep(by_catalog.setdefault(name, {}), [replace(s, catalog=name) for s in skills],
              shadowed, mine)
        diags.extend(replace(d, catalog=name) for d in mine)
    return [s for winners in by_catalog.values() for s in winners.values()]


def discover(config: DiscoveryConfig, *, max_bytes: int = SKILL_FILE_MAX_BYTES,
             workers: Workers | None = None) -> DiscoveryResult:
    """Scan every scope and named catalog, resolve name collisions within each catalog, and
    return skills sorted by (name, catalog); the skill files of a large root are read over
    ``workers`` (same result)."""
    diags: list[Diagnostic] = []
    winners: dict[str, Skill] = {}
    shadowed: list[Shadowed] = []
    seen_roots: set[str] = set()
    seen_dirs: set[str] = set()
    for scope in _scope_order(config.precedence, diags):
        roots = _roots(config, scope, diags)
        limits = limits_for(config, scope)  # catalogs are scanned whole, home/project capped
        if scope is Scope.PROJECT and roots and not config.trust_project:
            diags.extend(_untrusted(os.path.abspath(str(config.project_dir)), roots, limits))
            continue
        for root in roots:
            if os.path.realpath(root) in seen_roots:
                continue
            seen_roots.add(os.path.realpath(root))
            where = _Root(root, scope, limits, boundary_for(config, scope, root),
                          outer_for(config, scope, root))
            skills, found = _scan(where, max_bytes, seen_dirs, workers)
            diags.extend(found)
            _keep(winners, skills, shadowed, diags)
    every = _named(config, max_bytes, workers, diags, shadowed, winners)
    log.info("discovered %d skills (%d shadowed, %d diagnostics)",
             len(every), len(shadowed), len(diags))
    return DiscoveryResult(
        skills=tuple(sorted(every, key=lambda s: (s.name, s.catalog, s.location))),
        shadowed=tuple(sorted(shadowed, key=lambda s: (s.name, s.location))),
        diagnostics=tuple(diags))
