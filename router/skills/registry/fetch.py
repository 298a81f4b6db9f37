"""Fetching a registry (the I/O edge, httpx): the index with HTTP caching headers (validators,
and ``Cache-Control``: within ``max-age`` the cached index is used without a request;
``no-cache`` revalidates every time, ``no-store`` keeps no copy), each
artifact verified against its digest before anything reads it, a local cache keyed by digest
(an unchanged digest is never fetched again), bounded redirects and sizes, timeouts and the
standard proxy variables. One registry's failure is its own diagnostics, never an exception."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx2 as httpx

from router.skills.registry.index import ARCHIVE, Entry, Index, index_url, parse_index
from router.skills.registry.unpack import Limits, UnsafeArchive, archive_format, unpack

log = logging.getLogger(__name__)

MAX_REDIRECTS = 5
MAX_INDEX_BYTES = 8 * 1024 * 1024
MAX_ARTIFACT_BYTES = 64 * 1024 * 1024
TIMEOUT_SECONDS = 10.0
_SUFFIX = {"skill-md": ".md", "tar.gz": ".tar.gz", "zip": ".zip"}


@dataclass(frozen=True)
class Fetched:
    """One verified skill: its index entry and its files by relative path."""

    entry: Entry
    files: dict[str, bytes]


@dataclass(frozen=True)
class Registry:
    """What one registry gave: its verified skills, and the problems (``errors``: a skill or
    the index refused; ``warnings``: skipped entries, a stale cached index in use)."""

    url: str
    skills: tuple[Fetched, ...] = ()
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass
class Fetcher:
    """Fetches registries into ``cache`` (a folder: ``artifacts/<hex><suffix>``, and
    ``indexes/<sha of url>.json`` with the validators of the last index seen)."""

    cache: Path
    timeout: float = TIMEOUT_SECONDS
    limits: Limits = field(default_factory=Limits)
    transport: httpx.BaseTransport | None = None  # tests only
    clock: Callable[[], float] = time.time  # the index's freshness (Cache-Control: max-age)

    def fetch(self, registry: str) -> Registry:
        """Every skill of ``registry`` that verifies and unpacks (see the module notes)."""
        try:
            url = index_url(registry)
        except ValueError as exc:
            return Registry(registry, errors=(str(exc),))
        with httpx.Client(follow_redirects=True, max_redirects=MAX_REDIRECTS, trust_env=True,
                          timeout=self.timeout, transport=self.transport) as client:
            index, stale = self._index(client, url)
            if index is None:
                return Registry(url, errors=(stale,))
            good_path = self.cache / "good" / f"{hashlib.sha256(url.encode()).hexdigest()}.json"
            good = _read_json(good_path)
            skills, errors = [], list(index.errors)
            for entry in index.entries:
                try:
                    skills.append(Fetched(entry, self._artifact(client, entry)))
                    good[entry.name] = dataclasses.asdict(entry)
                except (_Refused, UnsafeArchive) as exc:
                    last = self._last_good(good.get(entry.name))
                    errors.append(f"{url}: skill {entry.name!r}: {exc}; " + (
                        f"serving its last good version ({last.entry.digest})" if last
                        else "not loaded"))
                    if last is not None:
                        skills.append(last)
            _write_atomic(good_path, json.dumps(good).encode())
        warnings = (*index.warnings, *((stale,) if stale else ()))
        return Registry(url, tuple(skills), tuple(errors), warnings)

    def _last_good(self, row: object) -> Fetched | None:
        """The skill as it last verified (its artifact still in the cache), or None."""
        if not isinstance(row, dict):
            return None
        try:
            entry = Entry(**{k: str(row[k]) for k in ("name", "type", "description", "url",
                                                      "digest")})
        except KeyError:
            return None
        cached = self._cached(entry)
        if cached is None:
            return None
        data, fmt = cached
        try:
            return Fetched(entry, {"SKILL.md": data} if fmt == "skill-md"
                           else unpack(data, fmt, self.limits))
        except UnsafeArchive:
            return None

    # --- the index ---------------------------------------------------------------------------

    def _index(self, client: httpx.Client, url: str) -> tuple[Index | None, str]:
        meta_path = self.cache / "indexes" / f"{hashlib.sha256(url.encode()).hexdigest()}.json"
        cached = _read_json(meta_path)
        now = self.clock()
        if "body" in cached and now < _number(cached.get("fresh_until")):
            return parse_index(str(cached["body"]).encode(), url), ""  # fresh: no request
        headers = {}
        if cached.get("etag"):
            headers["If-None-Match"] = str(cached["etag"])
        if cached.get("last_modified"):
            headers["If-Modified-Since"] = str(cached["last_modified"])
        try:
            response = _get(client, url, MAX_INDEX_BYTES, headers)
        except _Refused as exc:
            if "body" in cached:
                return parse_index(str(cached["body"]).encode(), url), (
                    f"{url}: the index could not be fetched ({exc}); using the copy of the "
                    "last build")
            return None, f"{url}: the index could not be fetched ({exc})"
        policy = response.headers.get("cache-control", "")
        if response.status_code == 304 and "body" in cached:
            # a 304 refreshes the stored copy: its own Cache-Control, else the stored one's
            policy = policy or str(cached.get("cache_control", ""))
            if "no-store" not in _directives(policy):
                _write_atomic(meta_path, json.dumps({
                    **cached, "cache_control": policy,
                    "fresh_until": _fresh_until(policy, response.headers, now)}).encode())
            else:
                meta_path.unlink(missing_ok=True)
            return parse_index(str(cached["body"]).encode(), url), ""
        body = response.content
        index = parse_index(body, url)
        if "no-store" in _directives(policy):
            meta_path.unlink(missing_ok=True)  # no copy kept, nor validators of an old one
        elif not index.errors or index.entries:
            _write_atomic(meta_path, json.dumps({
                "etag": response.headers.get("etag", ""),
                "last_modified": response.headers.get("last-modified", ""),
                "cache_control": policy,
                "fresh_until": _fresh_until(policy, response.headers, now),
                "body": body.decode("utf-8", "replace")}).encode())
        return index, ""

    # --- artifacts ---------------------------------------------------------------------------

    def _artifact(self, client: httpx.Client, entry: Entry) -> dict[str, bytes]:
        cached = self._cached(entry)
        if cached is not None:
            data, fmt = cached
        else:
            response = _get(client, entry.url, MAX_ARTIFACT_BYTES, {})
            data = response.content
            actual = "sha256:" + hashlib.sha256(data).hexdigest()
            if actual != entry.digest:
                raise _Refused(f"digest mismatch: the index says {entry.digest}, the artifact "
                               f"at {entry.url} is {actual}")
            fmt = "skill-md" if entry.type != ARCHIVE else archive_format(
                response.headers.get("content-type", ""), response.url)
            _write_atomic(self.cache / "artifacts" / f"{entry.hex}{_SUFFIX[fmt]}", data)
        if fmt == "skill-md":
            return {"SKILL.md": data}
        return unpack(data, fmt, self.limits)

    def _cached(self, entry: Entry) -> tuple[bytes, str] | None:
        for fmt, suffix in _SUFFIX.items():
            path = self.cache / "artifacts" / f"{entry.hex}{suffix}"
            if (fmt == "skill-md") != (entry.type != ARCHIVE) or not path.is_file():
                continue
            data = path.read_bytes()
            if hashlib.sha256(data).hexdigest() == entry.hex:  # a damaged copy is fetched again
                return data, fmt
        return None


class _Refused(Exception):
    """An artifact or index not taken: the message says why."""


@dataclass(frozen=True)
class _Reply:
    status_code: int
    url: str
    headers: httpx.Headers
    content: bytes


def _get(client: httpx.Client, url: str, cap: int, headers: dict[str, str]) -> _Reply:
    """GET ``url`` with at most ``cap`` bytes of body; _Refused for anything but a 2xx/304."""
    try:
        with client.stream("GET", url, headers=headers) as response:
            if response.status_code == 304:
                return _Reply(304, str(response.url), response.headers, b"")
            if response.status_code >= 300:
                raise _Refused(f"HTTP {response.status_code} from {response.url}")
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > cap:
                    raise _Refused(f"{url} is larger than {cap} bytes")
                chunks.append(chunk)
            return _Reply(response.status_code, str(response.url), response.headers,
                          b"".join(chunks))
    except httpx.TooManyRedirects:
        raise _Refused(f"more than {MAX_REDIRECTS} redirects from {url}") from None
    except httpx.TimeoutException:
        raise _Refused(f"timed out fetching {url}") from None
    except httpx.HTTPError as exc:
        raise _Refused(f"{type(exc).__name__} fetching {url}: {exc}") from None


def _directives(cache_control: str) -> dict[str, str]:
    """A ``Cache-Control`` header's directives, lower-cased names to values ("" for none)."""
    found = {}
    for part in cache_control.split(","):
        name, _, value = part.strip().partition("=")
        if name:
            found[name.strip().lower()] = value.strip().strip('"')
    return found


def _fresh_until(cache_control: str, headers: httpx.Headers, now: float) -> float:
    """When a response stored at ``now`` stops being fresh: ``max-age`` less its ``Age``; 0
    (revalidate at once) for ``no-cache``, no ``max-age`` or one that does not parse."""
    directives = _directives(cache_control)
    if "no-cache" in directives or "no-store" in directives:
        return 0.0
    try:
        max_age = int(directives.get("max-age", ""))
    except ValueError:
        return 0.0
    try:
        age = max(0, int(headers.get("age", "0")))
    except ValueError:
        age = 0
    return now + max_age - age if max_age > age else 0.0


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _read_json(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
