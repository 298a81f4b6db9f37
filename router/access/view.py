"""A caller's view of an index: which skill each name means for it, and nothing else (pure).

For each name, the view holds the skill of the first of the caller's catalogs that has one
(``"*"`` stands for the index's catalog order, from where it appears), minus the names its deny
globs match. A skill outside the view does not exist for that caller: routing, activation,
resources and suggestions all look names up here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

import numpy as np

from router.access.model import EVERY_CATALOG, Principal
from router.skills.model import key_parts


@dataclass(frozen=True)
class View:
    """Name -> row of the skill that name means; ``rows``: the rows held, sorted (None when
    the view holds every row of the index, so search needs no restriction)."""

    positions: Mapping[str, int]
    rows: np.ndarray | None = None
    key: tuple[object, ...] = ()  # what it was made from (catalogs, deny), for caches
    index: Any = None  # an exact (FAISS flat) index of the rows' vectors, for a small view
    catalogs: tuple[str, ...] = ()  # the catalogs it draws on, in precedence order
    deny: tuple[str, ...] = ()
    whole: bool = True  # its principal sees every catalog, with nothing denied

    def holds(self, catalog: str, name: str) -> bool:
        """Whether a skill ``name`` of ``catalog`` (held by the index or not) is within the
        view's bounds: one of its catalogs, no deny glob matching."""
        return self.whole or (catalog in self.catalogs and not denied(name, self.deny))

    def holds_key(self, key: str) -> bool:
        """``holds`` for a record key (``router.skills.model.skill_key``)."""
        return self.holds(*key_parts(key))

    def position(self, name: str) -> int | None:
        return self.positions.get(name)

    def names(self) -> list[str]:
        return sorted(self.positions)

    @property
    def restricted(self) -> bool:
        return self.rows is not None


class Layered(Mapping[str, int]):
    """``top`` over ``base``: a name in ``top`` means its row there (no copy of ``base``)."""

    def __init__(self, top: Mapping[str, int], base: Mapping[str, int]) -> None:
        self._top, self._base = top, base

    def __getitem__(self, name: str) -> int:
        found = self._top.get(name)
        return self._base[name] if found is None else found

    def __iter__(self) -> Iterator[str]:
        yield from self._top
        yield from (n for n in self._base if n not in self._top)

    def __len__(self) -> int:
        return len(self._base) + sum(1 for n in self._top if n not in self._base)


def precedence(wanted: Sequence[str], order: Sequence[str]) -> tuple[str, ...]:
    """The caller's catalogs in precedence order, ``"*"`` expanded to ``order`` (the index's
    catalog order); catalogs the index lacks are left out."""
    out: list[str] = []
    for name in wanted:
        for catalog in (order if name == EVERY_CATALOG else (name,)):
            if catalog in order and catalog not in out:
                out.append(catalog)
    return tuple(out)


def denied(name: str, deny: Sequence[str]) -> bool:
    return any(fnmatchcase(name, glob) for glob in deny)


def view_of(skills: Sequence[tuple[str, str]], order: Sequence[str],
            principal: Principal) -> View:
    """The view of ``principal`` over an index whose row i holds ``skills[i]`` =
    (catalog, name), with catalog order ``order``."""
    ranked = precedence(principal.catalogs, order)
    rank = {catalog: i for i, catalog in enumerate(ranked)}
    positions: dict[str, int] = {}
    for row, (catalog, name) in enumerate(skills):
        mine = rank.get(catalog)
        if mine is None or denied(name, principal.deny):
            continue
        held = positions.get(name)
        if held is None or mine < rank[skills[held][0]]:
            positions[name] = row
    key = (ranked, tuple(principal.deny))
    rows = None if len(positions) == len(skills) else np.array(sorted(positions.values()),
                                                               dtype=np.int64)
    return View(positions, rows, key, catalogs=ranked, deny=tuple(principal.deny),
                whole=principal.sees_everything)
