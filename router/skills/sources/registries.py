"""The registries' skills: the skills each configured registry publishes in its
well-known index (``discovery.registries``, ``router.skills.registry``), fetched, verified
and unpacked into the registry cache, one folder per artifact digest
(``<cache>/skills/<hex>/<name>/``, with ``origin.json`` beside it naming the registry).

Discovery fetches every registry and loads each verified skill from its folder; a registry
that is down, an index refused, an artifact whose digest does not match or an archive that is
unsafe is a diagnostic naming it, and the build goes on with the rest. Serving needs no
registry: a skill's files are in its digest's folder, which nothing rewrites, so the disk
serves them (``router.skills.sources.disk`` hands registries' skills to this module for
discovery only)."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Collection, Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from router.common.memo import MEMO_ENTRIES
from router.errors import InvalidRequest
from router.skills.catalogs import check_name
from router.skills.model import DEFAULT_CATALOG, Diagnostic, DiscoveryResult, Level, Scope, Skill
from router.skills.registry.fetch import Fetched, Fetcher
from router.skills.registry.tree import materialize
from router.skills.walk import SkillDir

if TYPE_CHECKING:
    from router.config import DiscoveryConfig

ORIGIN_FILE = "origin.json"


def parse_registry(spec: str) -> tuple[str, str]:
    """``URL`` (catalog ``default``) or ``NAME=URL`` as (catalog, url); InvalidRequest when
    malformed."""
    name, sep, url = spec.partition("=")
    if not sep or "://" in name:
        name, url = DEFAULT_CATALOG, spec
    url = url.strip()
    if not url.startswith(("http://", "https://")):
        raise InvalidRequest(f"registry {spec!r}: expected URL or NAME=URL with an http(s) URL")
    return (check_name(name.strip()) if name != DEFAULT_CATALOG else name), url


def parse_registries(specs: Iterable[str]) -> tuple[str, ...]:
    """Each spec checked (the form the discovery settings record)."""
    return tuple(f"{c}={u}" for c, u in map(parse_registry, specs))


def cache_dir(config: DiscoveryConfig) -> Path:
    """Where the registries' artifacts and skills are kept."""
    if config.registry_cache:
        return Path(config.registry_cache).expanduser().resolve()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base, "skill-router", "registries").resolve()


def origin_of(skill: Skill) -> str:
    """``registry:<url>`` for a skill a registry published, else ``disk:<catalog>``."""
    return origins([skill])[0]


def origins(skills: Sequence[Skill]) -> list[str]:
    """``origin_of`` each of ``skills``, each folder's record read once (a catalog's skills
    share their parent folder)."""
    published: dict[Path, str | None] = {}
    out = []
    for skill in skills:
        parent = _parent(skill.base_dir)
        if parent not in published:
            try:
                data = json.loads((parent / ORIGIN_FILE).read_text("utf-8"))
                published[parent] = f"registry:{data['registry']}"
            except (OSError, ValueError, KeyError, TypeError):
                published[parent] = None
        out.append(published[parent] or f"{skill.kind.value}:{skill.catalog}")
    return out


@lru_cache(maxsize=MEMO_ENTRIES)  # a catalog's folders, build after build
def _parent(folder: str) -> Path:
    return Path(folder).parent


def discover_registries(config: DiscoveryConfig, taken: Collection[str] = ()) -> DiscoveryResult:
    """Every verified skill of the configured registries, in their catalogs; ``taken`` holds
    the keys other sources' skills have (such a skill wins, and the registry's is a
    diagnostic)."""
    from router.skills.discovery import load_skill_dir

    cache = cache_dir(config)
    fetcher = Fetcher(cache / "fetch", timeout=config.registry_timeout_seconds)
    skills: list[Skill] = []
    diags: list[Diagnostic] = []
    keys = set(taken)
    for spec in config.registries:
        catalog, url = parse_registry(spec)
        got = fetcher.fetch(url)
        diags.extend(Diagnostic(Level.ERROR, got.url, m, catalog) for m in got.errors)
        diags.extend(Diagnostic(Level.WARNING, got.url, m, catalog) for m in got.warnings)
        for fetched in got.skills:
            folder = _folder(cache, fetched, got.url)
            skill, more = load_skill_dir(SkillDir(str(folder), str(folder),
                                                  str(folder / "SKILL.md"), None), Scope.ORG)
            diags.extend(dataclasses.replace(d, catalog=catalog) for d in more)
            if skill is None:
                continue
            skill = dataclasses.replace(skill, catalog=catalog)
            if skill.name != fetched.entry.name:
                diags.append(Diagnostic(Level.ERROR, fetched.entry.url, (
                    f"skill {fetched.entry.name!r}: its SKILL.md names it {skill.name!r}; "
                    "not loaded"), catalog))
            elif skill.key in keys:
                diags.append(Diagnostic(Level.WARNING, fetched.entry.url, (
                    f"skill {skill.name!r} of catalog {catalog!r} is already defined by "
                    "another source, which wins; the registry's is not loaded"), catalog))
            else:
                keys.add(skill.key)
                skills.append(skill)
    return DiscoveryResult(tuple(sorted(skills, key=lambda s: (s.name, s.catalog))), (),
                           tuple(diags))


def _folder(cache: Path, fetched: Fetched, registry: str) -> Path:
    """The skill's folder under its digest, written once (an existing one is the same bytes:
    the digest named them)."""
    home = cache / "skills" / fetched.entry.hex
    folder = home / fetched.entry.name
    if not (folder / "SKILL.md").is_file():
        materialize([fetched], home)
    origin = home / ORIGIN_FILE
    if not origin.is_file():
        origin.write_text(json.dumps({"registry": registry}), encoding="utf-8")
    return folder

