"""Principals files for the tests: each entry from a name, a token and roles (every catalog
unless told), written as the YAML ``router.access.principals`` reads."""

from __future__ import annotations

import hashlib
from typing import Any

import yaml


def token_sha(token: str) -> str:
    """The ``token_sha256`` a principals file holds for ``token``."""
    return hashlib.sha256(token.encode()).hexdigest()


def entry(name: str, token: str, roles: list[str], catalogs: Any = "*",
          **fields: Any) -> dict[str, Any]:
    """One principal of the file (``fields``: ``deny``, ``rate``, ...)."""
    return {"name": name, "token_sha256": token_sha(token), "roles": roles,
            "catalogs": catalogs, **fields}


def principals_yaml(*entries: dict[str, Any], **top: Any) -> str:
    """A principals file of ``entries`` (``top``: other sections, e.g. ``oidc``)."""
    return yaml.safe_dump({**top, "principals": list(entries)}, sort_keys=False)
