"""A well-known skills index, read (pure): the ``$schema`` matched against the known 0.2.0
URI, each entry's name, type, digest and URL checked, URLs resolved per RFC 3986 against the
index URL. A bad entry is a diagnostic and is skipped; an unknown ``$schema`` skips the whole
index."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

SCHEMA_0_2_0 = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
KNOWN_SCHEMAS = frozenset({SCHEMA_0_2_0})
WELL_KNOWN = "/.well-known/agent-skills/index.json"
SKILL_MD = "skill-md"
ARCHIVE = "archive"
TYPES = frozenset({SKILL_MD, ARCHIVE})
NAME = re.compile(r"^(?=.{1,64}$)[a-z0-9]+(?:-[a-z0-9]+)*$")  # the spec's name rule
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
DESCRIPTION_CHARS = 1024


@dataclass(frozen=True)
class Entry:
    """One skill an index publishes: its artifact's absolute URL and digest."""

    name: str
    type: str
    description: str
    url: str
    digest: str  # "sha256:<64 hex>"

    @property
    def hex(self) -> str:
        return self.digest.removeprefix("sha256:")


@dataclass(frozen=True)
class Index:
    """The entries of one index and a message for each thing skipped (``warnings`` for an
    unknown type, ``errors`` for a bad entry or index)."""

    url: str
    entries: tuple[Entry, ...] = ()
    warnings: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()


def index_url(registry: str) -> str:
    """The index URL of a registry given as its origin, a base URL or the index itself."""
    if registry.endswith(".json"):
        return registry
    parts = urlsplit(registry)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"registry {registry!r} is not an http(s) URL")
    return registry.rstrip("/") + WELL_KNOWN


def parse_index(data: bytes, url: str) -> Index:
    """The index ``data`` fetched from ``url`` (see the module notes)."""
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        return Index(url, errors=(f"{url}: the index is not JSON ({exc})",))
    if not isinstance(doc, dict):
        return Index(url, errors=(f"{url}: the index is not a JSON object",))
    schema = doc.get("$schema")
    if schema not in KNOWN_SCHEMAS:
        return Index(url, errors=(f"{url}: unknown index $schema {schema!r} (known: "
                                  f"{', '.join(sorted(KNOWN_SCHEMAS))}); index skipped",))
    skills = doc.get("skills")
    if not isinstance(skills, list):
        return Index(url, errors=(f"{url}: 'skills' is not an array; index skipped",))
    entries: list[Entry] = []
    warnings: list[str] = []
    errors: list[str] = []
    seen: set[str] = set()
    for i, raw in enumerate(skills):
        entry, problem = _entry(raw, url)
        where = f"{url}: skill {i}" + (f" ({raw.get('name')!r})" if isinstance(raw, dict) else "")
        if entry is None:
            (warnings if problem.startswith("unknown type") else errors).append(
                f"{where}: {problem}; skipped")
        elif entry.name in seen:
            errors.append(f"{where}: the name {entry.name!r} is listed twice; skipped")
        else:
            seen.add(entry.name)
            entries.append(entry)
    return Index(url, tuple(entries), tuple(warnings), tuple(errors))


def _entry(raw: Any, base: str) -> tuple[Entry | None, str]:
    if not isinstance(raw, dict):
        return None, "not an object"
    fields = {k: raw.get(k) for k in ("name", "type", "description", "url", "digest")}
    missing = [k for k, v in fields.items() if not isinstance(v, str) or not v]
    if missing:
        return None, f"missing or empty {', '.join(missing)}"
    name, kind, description, url, digest = (str(v) for v in fields.values())
    if kind not in TYPES:
        return None, f"unknown type {kind!r} (known: {', '.join(sorted(TYPES))})"
    if not NAME.match(name):
        return None, (f"the name {name!r} breaks the spec's rule (1-64 characters: lowercase "
                      "letters, digits and single hyphens, not at either end)")
    if not DIGEST.match(digest):
        return None, f"the digest {digest!r} is not 'sha256:' and 64 lowercase hex digits"
    resolved = urljoin(base, url)
    if urlsplit(resolved).scheme not in ("http", "https"):
        return None, f"the url {url!r} resolves to {resolved!r}, not http(s)"
    return Entry(name, kind, description[:DESCRIPTION_CHARS], resolved, digest), ""
