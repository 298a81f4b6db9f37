"""How each scope is scanned: its directory cap, its symlink boundary, the ``.gitignore`` files
above its roots, and whether a scan cut short by a cap may be indexed.

A home or project directory is someone's working tree, so its skills folders keep the
``discovery.max_dirs`` cap (2,000 directories each). An organisation or bundled root is a
catalog: it is scanned whole unless ``discovery.catalog_max_dirs`` (0 = no cap) says otherwise.
The project's own ``.gitignore`` (and any between the project directory and a skills folder)
applies to project skills as git would apply it.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Sequence

from router.config import DiscoveryConfig
from router.errors import InvalidRequest
from router.skills.model import Diagnostic, Scope
from router.skills.walk import CAP_PREFIX, ScanLimits

NO_CAP = sys.maxsize


class IncompleteScan(InvalidRequest):
    """A scan stopped at a directory cap and partial scans are not allowed."""


def limits_for(config: DiscoveryConfig, scope: Scope) -> ScanLimits:
    catalog = scope in (Scope.ORG, Scope.BUNDLED)
    cap = (config.catalog_max_dirs or NO_CAP) if catalog else config.max_dirs
    return ScanLimits(config.max_depth, cap, config.honour_gitignore,
                      config.follow_external_links)


def boundary_for(config: DiscoveryConfig, scope: Scope, root: str) -> str:
    """The folder symlinks found under ``root`` must stay in."""
    base = {Scope.PROJECT: config.project_dir, Scope.USER: config.home_dir}.get(scope)
    return os.path.abspath(base) if base else root


def outer_for(config: DiscoveryConfig, scope: Scope, root: str) -> tuple[str, ...]:
    """The project directory and the folders between it and ``root`` (exclusive), outermost
    first, for project skills; () for other scopes."""
    if scope is not Scope.PROJECT or not config.project_dir:
        return ()
    project = os.path.abspath(config.project_dir)
    relative = os.path.relpath(os.path.dirname(os.path.abspath(root)), project)
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return ()
    folders = [project]
    for part in ([] if relative == os.curdir else relative.split(os.sep)):
        folders.append(os.path.join(folders[-1], part))
    return tuple(folders)


def cap_hits(diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.message.startswith(CAP_PREFIX)]


def check_complete(config: DiscoveryConfig, diagnostics: Sequence[Diagnostic]) -> None:
    """Raise IncompleteScan when a scan hit a directory cap and partial scans are not allowed."""
    hits = cap_hits(diagnostics)
    if not hits or config.allow_partial_scan:
        return
    where = "; ".join(f"{d.path}: {d.message}" for d in hits)
    raise IncompleteScan(f"the skills scan was cut short, so the index would miss skills "
                         f"({where}); raise discovery.max_dirs / discovery.catalog_max_dirs, "
                         "or pass --allow-partial-scan (discovery.allow_partial_scan) to index "
                         "what was found")


def allow_partial(config: DiscoveryConfig, allowed: bool | None) -> DiscoveryConfig:
    return config if allowed is None else dataclasses.replace(config,
                                                              allow_partial_scan=allowed)
