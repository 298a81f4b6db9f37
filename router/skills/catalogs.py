"""Named catalogs: ``--catalog NAME=DIR`` specs, their names and their order (pure).

An index holds one or more named catalogs. ``skill-router index --catalog NAME=DIR`` (repeatable)
adds one, indexed whole as an organisation root is; the skills the discovery flags find
(``--root``, ``--bundled``, the project and user scopes) form the catalog ``default``. The
index's catalog order, the precedence of a caller that sees every catalog (``"*"``), is the
order of the ``--catalog`` flags, then ``default`` (unless a flag named it already).
``project`` is reserved for the skills a gateway sends with a turn.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

from router.errors import InvalidRequest
from router.skills.model import DEFAULT_CATALOG, PROJECT_CATALOG

NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")


def check_name(name: str) -> str:
    """``name`` if it is a usable catalog name, else InvalidRequest saying why."""
    if not NAME.fullmatch(name):
        raise InvalidRequest(f"catalog name {name!r} is not valid: use 1-63 lowercase letters, "
                             "digits and '-', starting with a letter or digit")
    if name == PROJECT_CATALOG:
        raise InvalidRequest(f"catalog name {PROJECT_CATALOG!r} is reserved for the skills "
                             "sent with a turn (RouteRequest.project_skills)")
    return name


def parse_spec(spec: str) -> tuple[str, str]:
    """``NAME=DIR`` as (name, absolute dir); InvalidRequest when malformed."""
    name, sep, folder = spec.partition("=")
    if not sep or not folder:
        raise InvalidRequest(f"--catalog {spec!r}: expected NAME=DIR")
    return check_name(name.strip()), os.path.abspath(folder)


def parse_specs(specs: Iterable[str]) -> tuple[str, ...]:
    """Normalised ``NAME=/abs/dir`` specs (the form the discovery settings record)."""
    return tuple(f"{name}={folder}" for name, folder in map(parse_spec, specs))


def catalog_order(specs: Sequence[str]) -> tuple[str, ...]:
    """The index's catalog order: the named catalogs as given, then ``default``."""
    names: list[str] = []
    for spec in specs:
        name = parse_spec(spec)[0]
        if name not in names:
            names.append(name)
    if DEFAULT_CATALOG not in names:
        names.append(DEFAULT_CATALOG)
    return tuple(names)


def complete_order(order: Sequence[str], present: Iterable[str]) -> tuple[str, ...]:
    """``order`` with any catalog of ``present`` it lacks appended (sorted)."""
    known = list(dict.fromkeys(order))
    return (*known, *sorted(set(present) - set(known)))
