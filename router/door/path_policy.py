"""What a caller sees of the server's paths (``server.expose_paths``), the same at every door.

With the setting on (the default) nothing changes. Off, every string of an answer, and every
error message, is rewritten by a ``router.common.paths.PathView`` made once per served version
from the version's recorded discovery settings: a skill's location becomes relative to its
skills root (``pdf-tools/SKILL.md``), a root itself its last component, the version folder the
version's name, the index folder its last component, the project folder its last component,
the home folder ``~`` and an example file its file name. Nothing inside changes: activation
still reads the real files. ``PathPolicy.over`` gives a door the view of the version it
serves, the text and error messages rewritten by it; a door applies the view to its own answers
(the gRPC service to its protobuf messages in ``router.service.codec.paths``).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from router.builder.recorded import discovery_from_settings, recorded_settings
from router.common.paths import EXPOSED, Folder, PathView, named_folder, root_folder, skill_folders
from router.config import DiscoveryConfig
from router.errors import RouterError
from router.examples.sources import files_from_settings
from router.index.store import IndexSnapshot
from router.index.versions.layout import VERSIONS
from router.skills.catalogs import parse_spec

log = logging.getLogger(__name__)

T = TypeVar("T")


def discovery_roots(config: DiscoveryConfig) -> list[str]:
    """Every skills root ``config`` names (whether or not it exists), as discovery spells it."""
    roots: list[str] = []
    for base in (config.project_dir, config.home_dir):
        if base:
            roots.extend(os.path.join(os.path.abspath(base), d) for d in config.client_dirs)
    roots.extend(os.path.abspath(r) for r in (*config.org_roots, *config.bundled_roots))
    roots.extend(parse_spec(spec)[1] for spec in config.catalogs)  # each named catalog's root
    return roots


def _spellings(path: str) -> set[str]:
    return {os.path.abspath(path), os.path.realpath(path)}


def path_view(snapshot: IndexSnapshot, index_dir: str | Path | None) -> PathView:
    """The view hiding ``snapshot``'s folders (its roots, skills, index and example files)."""
    folders: list[Folder] = []
    settings: dict[str, object] = {}
    try:
        settings = recorded_settings(snapshot.info.path)
        discovery: DiscoveryConfig | None = discovery_from_settings(settings,
                                                                    snapshot.info.version)
    except RouterError:
        discovery = None  # a version without recorded discovery: its skills' folders alone
    dirs = [s for skill in snapshot.skills for s in _spellings(skill.base_dir)]
    # Without recorded discovery, the folders holding skill folders stand for the roots.
    named = discovery_roots(discovery) if discovery else [os.path.dirname(d) for d in dirs]
    roots = list(dict.fromkeys(s for r in named for s in _spellings(r)))
    folders.extend(skill_folders(roots, dirs))
    if discovery is not None:
        if discovery.project_dir:
            folders.extend(named_folder(p, os.path.basename(p.rstrip("/")))
                           for p in _spellings(discovery.project_dir))
        if discovery.home_dir:
            folders.extend(named_folder(p, "~") for p in _spellings(discovery.home_dir))
    for file in files_from_settings(settings):
        folders.extend(named_folder(p, os.path.basename(p)) for p in _spellings(file))
    version_dir = snapshot.info.path
    folders.extend(named_folder(p, snapshot.info.version) for p in _spellings(version_dir))
    index = str(index_dir) if index_dir is not None else os.path.dirname(
        os.path.dirname(version_dir))
    folders.extend(root_folder(os.path.join(p, VERSIONS)) for p in _spellings(index))
    folders.extend(named_folder(p, os.path.basename(p.rstrip("/"))) for p in _spellings(index))
    return PathView(tuple(folders))


class PathPolicy:
    """The view for the served version: ``EXPOSED`` when paths are exposed, else one made
    per version (cached for the latest)."""

    def __init__(self, expose: bool, index_dir: str | Path | None = None) -> None:
        self.expose, self._index_dir = expose, index_dir
        self._lock = threading.Lock()
        self._cached: tuple[tuple[str, str], PathView] | None = None

    def view(self, snapshot: IndexSnapshot) -> PathView:
        if self.expose:
            return EXPOSED
        key = (snapshot.info.path, snapshot.info.version)
        with self._lock:
            if self._cached is None or self._cached[0] != key:
                self._cached = (key, path_view(snapshot, self._index_dir))
                log.debug("paths hidden from callers for index %s", snapshot.info.version)
            return self._cached[1]

    def over(self, snapshot: Callable[[], IndexSnapshot]) -> Shown:
        """What callers see of the version ``snapshot()`` serves at the time of each use."""
        return Shown(self, snapshot)


class Shown:
    """A door's paths as its callers see them: the served version's view (read at each use:
    a swap or a Reindex answers with the version it swapped in), text and errors rewritten."""

    def __init__(self, policy: PathPolicy, snapshot: Callable[[], IndexSnapshot]) -> None:
        self._policy, self._snapshot = policy, snapshot

    def view(self) -> PathView:
        return self._policy.view(self._snapshot())

    def text(self, text: str) -> str:
        return self.view().text(text)

    def hiding(self, call: Callable[[], T]) -> T:
        """``call()``, a ``RouterError``'s message rewritten by ``text`` (same error class)."""
        try:
            return call()
        except RouterError as exc:
            shown = self.text(str(exc))
            if shown == str(exc):
                raise
            raise type(exc)(shown) from None
