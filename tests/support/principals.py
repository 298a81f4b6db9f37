"""Principals files for the tests: each entry from a name, a token and roles (every catalog
unless told), written as the YAML ``router.access.principals`` reads."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml


def token_sha(token: str) -> str:
    """The ``token_sha256`` a principals file holds for ``token``."""
    return hashlib.sha256(token.encode()).hexdigest()


def entry(name: str, token: str, roles: Sequence[str], catalogs: Any = "*",
          **fields: Any) -> dict[str, Any]:
    """One principal of the file; ``token`` "": none (one known by ``subject`` or
    ``client_cert_subject``, in ``fields`` with ``deny``, ``rate``, ...)."""
    assert not isinstance(roles, str), "roles: a list of role names"
    proof = {"token_sha256": token_sha(token)} if token else {}
    return {"name": name, **proof, "roles": list(roles), "catalogs": catalogs, **fields}


def principals_yaml(*entries: dict[str, Any], **top: Any) -> str:
    """A principals file of ``entries`` (``top``: other sections, e.g. ``oidc``)."""
    return yaml.safe_dump({**top, "principals": list(entries)}, sort_keys=False)


def write_principals(path: Path, *entries: dict[str, Any]) -> Path:
    """``principals_yaml(*entries)`` written to ``path``; return ``path``."""
    path.write_text(principals_yaml(*entries), encoding="utf-8")
    return path
