"""An identity provider's signing keys (its JWKS), fetched over HTTP and cached.

``KeySet(jwks_url, issuer)`` holds the keys at ``jwks_url``, else at the ``jwks_uri`` of the
issuer's ``/.well-known/openid-configuration`` (whose ``issuer`` must be the configured one).
Nothing is fetched until a key is asked for; the keys are then kept as long as the answer's
``Cache-Control: max-age`` says (5 minutes without it; at least 5 seconds, at most a day) and
fetched again after that, or when a token names a ``kid`` the set lacks: at most one such
refetch every ``REFETCH_SECONDS``, whatever the callers send. A fetch that fails keeps the keys
in use (callers whose key is cached go on while the provider is down), logs why, and is not
tried again for ``REFETCH_SECONDS`` counted from when it ended. Only signing keys
of an asymmetric type are kept (``use`` absent or ``sig``; ``kty`` RSA, EC or OKP).

A fetch runs on a thread of its own, one at a time, with a deadline of ``FETCH_SECONDS`` on the
whole of it (a provider that hangs or trickles one byte at a time cannot hold it longer; past
the deadline it counts as failed). A caller that needs it waits for it at most until that
deadline, and only ``MAX_WAITERS`` callers at once (never one whose key is in hand, however
old): the others answer at once with the keys in hand (none while nothing is cached, so a
flood of tokens naming unknown keys is refused without parking the server's threads).
``shared_key_set`` gives one ``KeySet`` per (URL, issuer) in a
process, so a principals file read again on SIGHUP keeps its cache.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from router.bearer import is_loopback
from router.common.json_get import GetFailed, get_json

log = logging.getLogger(__name__)

DEFAULT_TTL = 300.0
MIN_TTL = 5.0
MAX_TTL = 86400.0
REFETCH_SECONDS = 5.0
FETCH_SECONDS = 5.0  # the whole fetch: connect, headers and body
MAX_WAITERS = 2  # callers waiting for a fetch at once; fewer than a server's threads
MAX_BYTES = 1 << 20
DISCOVERY = "/.well-known/openid-configuration"
SIGNING_TYPES = frozenset({"RSA", "EC", "OKP"})
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?(\d+)", re.IGNORECASE)

Jwk = Mapping[str, Any]
# url -> (the decoded JSON document, its Cache-Control header or "")
Fetch = Callable[[str], tuple[Any, str]]


class FetchFailed(Exception):
    """A JWKS or discovery document could not be fetched or read (the reason, no secret)."""


def check_url(url: str, what: str) -> str:
    """A problem with ``url`` as ``what`` ("" when fine): http(s) only, with a host."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{what} must be an https:// URL (http:// for a provider on loopback or in " \
               f"the cluster), not {url!r}"
    return ""


def warn_if_plain(url: str, what: str) -> None:
    """Log a warning for an ``http://`` URL beyond loopback (keys could be swapped in transit)."""
    parts = urlsplit(url)
    if parts.scheme == "http" and not is_loopback(parts.hostname or ""):
        log.warning("%s %s is plain http beyond loopback: whoever sits on the path can hand "
                    "this server signing keys; use https unless the network is trusted", what,
                    url)


def max_age(cache_control: str) -> float:
    """How long an answer with this ``Cache-Control`` may be kept, within [MIN_TTL, MAX_TTL]."""
    lowered = cache_control.lower()
    if "no-store" in lowered or "no-cache" in lowered:
        return MIN_TTL
    found = _MAX_AGE.search(cache_control)
    seconds = float(found.group(1)) if found else DEFAULT_TTL
    return min(max(seconds, MIN_TTL), MAX_TTL)


def http_fetch(url: str) -> tuple[Any, str]:
    """GET ``url`` as JSON within ``FETCH_SECONDS`` in all: the document and its
    Cache-Control; FetchFailed naming why."""
    try:
        return get_json(url, FETCH_SECONDS, MAX_BYTES)
    except GetFailed as exc:
        raise FetchFailed(str(exc)) from None


def signing_keys(document: Any, url: str) -> dict[str, Jwk]:
    """The signing keys of a JWKS document by ``kid`` ("" for a key without one)."""
    keys = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(keys, list):
        raise FetchFailed(f"{url} is not a JWKS: it has no \"keys\" list")
    found: dict[str, Jwk] = {}
    for key in keys:
        if not isinstance(key, dict) or key.get("kty") not in SIGNING_TYPES:
            continue
        if key.get("use", "sig") != "sig":
            continue
        found.setdefault(str(key.get("kid", "")), key)
    return found


class _Refresh:
    """One fetch under way: set when it ends; counted as failed past ``deadline``."""

    def __init__(self, deadline: float) -> None:
        self.deadline, self.done = deadline, threading.Event()


class KeySet:
    """The signing keys of one provider, fetched lazily and cached (see the module)."""

    def __init__(self, jwks_url: str = "", issuer: str = "", *, fetch: Fetch = http_fetch,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not jwks_url and not issuer:
            raise ValueError("a KeySet needs a jwks_url or an issuer")
        self._configured, self._issuer = jwks_url, issuer
        self._jwks_url = jwks_url
        self._fetch, self._clock = fetch, clock
        self._keys: dict[str, Jwk] | None = None
        self._expires = 0.0
        self._failed = -math.inf  # when the last failed fetch ended
        self._refetched = -math.inf  # when the last fetch for an unknown kid was made
        self._lock = threading.Lock()  # held only to read and change the state, never to fetch
        self._refresh: _Refresh | None = None
        self._waiters = threading.BoundedSemaphore(MAX_WAITERS)
        self.fetches = 0  # JWKS documents fetched (what the tests count)

    @property
    def where(self) -> str:
        """The JWKS URL in use, or the discovery URL it comes from (for messages)."""
        return self._jwks_url or self._issuer.rstrip("/") + DISCOVERY

    def key(self, kid: str) -> Jwk | None:
        """The signing key named ``kid`` ("": a token without one gets the only key, when the
        set has exactly one); None when the provider publishes no such key, or while the keys
        are not fetched yet."""
        keys = self._keys
        if keys is None or not _holds(keys, kid) or self._clock() >= self._expires:
            refresh = self._start(kid)
            held = keys is not None and _holds(keys, kid)  # stale but usable: no wait
            if refresh is not None and not held and self._waiters.acquire(blocking=False):
                try:
                    refresh.done.wait(max(0.0, refresh.deadline - self._clock()))
                finally:
                    self._waiters.release()
            keys = self._keys
        if keys is None:
            return None
        if not kid and "" not in keys:
            return next(iter(keys.values())) if len(keys) == 1 else None
        return keys.get(kid)

    def settled(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for the fetch under way, if any; whether none is left."""
        running = self._refresh
        return running is None or running.done.wait(timeout)

    def _start(self, kid: str) -> _Refresh | None:
        """The fetch under way, else a new one when one is due; None when none is."""
        with self._lock:
            now = self._clock()
            running = self._refresh
            if running is not None and not running.done.is_set():
                if now < running.deadline:
                    return running
                self._failed = max(self._failed, running.deadline)  # overdue: failed
                return None  # though still on its thread: one at a time
            fresh = self._keys is not None and now < self._expires
            if fresh and _holds(self._keys or {}, kid):
                return None
            if now - self._failed < REFETCH_SECONDS or \
                    (fresh and now - self._refetched < REFETCH_SECONDS):
                return None
            if fresh:
                self._refetched = now
            refresh = self._refresh = _Refresh(now + FETCH_SECONDS)
        threading.Thread(target=self._run, args=(refresh,), daemon=True,
                         name="jwks-fetch").start()
        return refresh

    def _run(self, refresh: _Refresh) -> None:
        try:
            keys, ttl = self._load()
        except FetchFailed as exc:
            self._ended(refresh, None, 0.0)
            log.warning("cannot refresh the signing keys (%s): %s; %s", self.where, exc,
                        "keeping the cached keys" if self._keys is not None
                        else "JWT callers are refused until the keys are fetched")
        except Exception:  # a bug must not leave the refresh under way for ever
            self._ended(refresh, None, 0.0)
            log.exception("cannot refresh the signing keys (%s)", self.where)
        else:
            self._ended(refresh, keys, ttl)

    def _ended(self, refresh: _Refresh, keys: dict[str, Jwk] | None, ttl: float) -> None:
        with self._lock:
            now = self._clock()
            if keys is not None:
                self._keys, self._expires = keys, now + ttl
            else:
                self._failed = max(self._failed, now)  # the back-off runs from the end
            refresh.done.set()

    def _load(self) -> tuple[dict[str, Jwk], float]:
        url = self._jwks_url or self._discover()
        try:
            document, cache_control = self._fetch(url)
        except FetchFailed:
            if not self._configured:
                self._jwks_url = ""  # discover again next time
            raise
        self.fetches += 1
        return signing_keys(document, url), max_age(cache_control)

    def _discover(self) -> str:
        url = self._issuer.rstrip("/") + DISCOVERY
        document, _ = self._fetch(url)
        if not isinstance(document, dict) or not isinstance(document.get("jwks_uri"), str):
            raise FetchFailed(f"{url} names no jwks_uri")
        if document.get("issuer") != self._issuer:
            raise FetchFailed(f"{url} names the issuer {document.get('issuer')!r}, not "
                              f"{self._issuer!r} (oidc.issuer must be the provider's, exactly)")
        jwks_url = str(document["jwks_uri"])
        problem = check_url(jwks_url, "the discovered jwks_uri")
        if problem:
            raise FetchFailed(problem)
        warn_if_plain(jwks_url, "the discovered jwks_uri")
        self._jwks_url = jwks_url
        return jwks_url


def _holds(keys: dict[str, Jwk], kid: str) -> bool:
    return kid in keys or (not kid and len(keys) == 1)


_SHARED: dict[tuple[str, str], KeySet] = {}
_SHARED_LOCK = threading.Lock()


def shared_key_set(jwks_url: str, issuer: str) -> KeySet:
    """This process's one KeySet for ``jwks_url`` (or the issuer's discovery)."""
    with _SHARED_LOCK:
        key = (jwks_url, "" if jwks_url else issuer)
        found = _SHARED.get(key)
        if found is None:
            found = _SHARED[key] = KeySet(jwks_url, issuer)
        return found
