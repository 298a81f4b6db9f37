"""Open MCP sessions per caller on the HTTP door.

The SDK's session manager ends a session idle for ``mcp.session_idle_seconds`` (no request in
flight, no open GET stream) and caps the sessions of the whole door (503 past it); one caller
could still take them all. ``SessionQuota`` counts each caller's open sessions (a caller: the
principal its token names on a door with principals, so a host whose JWTs are renewed stays
one caller; else its bearer token, or its address on a door without tokens) and answers 429
to a request that would open one more past ``mcp.max_sessions_per_caller``; other callers are
not affected. A session
counts from the response that names it (``Mcp-Session-Id``) until a DELETE ends it, the door
answers 404 for it (the SDK forgot it), or it has been idle as long as the SDK allows.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from router.bearer import bearer_token

log = logging.getLogger(__name__)

SESSION_HEADER = "mcp-session-id"


@dataclass
class _Session:
    caller: str
    last_seen: float
    in_flight: int = 0


class SessionCounts:
    """Session id -> its caller, last request and requests in flight; thread-safe."""

    def __init__(self, per_caller: int, idle: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.per_caller, self.idle, self.clock = per_caller, idle, clock
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.Lock()

    def _live(self, session: _Session, now: float) -> bool:
        return session.in_flight > 0 or now - session.last_seen < self.idle

    def full(self, caller: str) -> bool:
        """Whether ``caller`` already has ``per_caller`` open sessions (expired ones dropped)."""
        with self._lock:
            now = self.clock()
            for key in [k for k, s in self._sessions.items() if not self._live(s, now)]:
                del self._sessions[key]
            return sum(s.caller == caller for s in self._sessions.values()) >= self.per_caller

    def opened(self, session_id: str, caller: str) -> None:
        with self._lock:
            self._sessions[session_id] = _Session(caller, self.clock())

    def begin(self, session_id: str) -> None:
        with self._lock:
            found = self._sessions.get(session_id)
            if found is not None:
                found.in_flight += 1

    def end(self, session_id: str, *, gone: bool) -> None:
        with self._lock:
            found = self._sessions.get(session_id)
            if found is None:
                return
            if gone:
                del self._sessions[session_id]
                return
            found.in_flight = max(0, found.in_flight - 1)
            found.last_seen = self.clock()


def caller_of(scope: Scope, named: Callable[[bytes], str | None] | None = None) -> str:
    """Who is calling: the principal ``named`` finds for its bearer token, else a digest of
    the token, else the client address."""
    token = bearer_token(Headers(scope=scope).get("authorization"))
    name = named(token) if token is not None and named is not None else None
    if name is not None:
        return "principal:" + name
    if token is not None:
        return "token:" + hashlib.sha256(token).hexdigest()
    client = scope.get("client")
    return f"address:{client[0] if client else ''}"


class SessionQuota:
    """ASGI middleware applying ``SessionCounts`` to the door's HTTP requests."""

    def __init__(self, app: ASGIApp, counts: SessionCounts,
                 named: Callable[[bytes], str | None] | None = None) -> None:
        self.app, self.counts, self._named = app, counts, named

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session_id = Headers(scope=scope).get(SESSION_HEADER)
        if session_id is None:
            await self._opening(scope, receive, send)
            return
        self.counts.begin(session_id)
        status = 0

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            gone = status == 404 or (scope.get("method") == "DELETE" and 200 <= status < 300)
            self.counts.end(session_id, gone=gone)

    async def _opening(self, scope: Scope, receive: Receive, send: Send) -> None:
        caller = caller_of(scope, self._named)
        if scope.get("method") == "POST" and self.counts.full(caller):
            log.warning("refused a new MCP session: the caller has %d open",
                        self.counts.per_caller)
            await _too_many(send, self.counts.per_caller)
            return

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and int(message["status"]) < 400:
                opened = Headers(raw=message.get("headers", [])).get(SESSION_HEADER)
                if opened:
                    self.counts.opened(opened, caller)
            await send(message)

        await self.app(scope, receive, watch)


async def _too_many(send: Send, cap: int) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
        "code": -32000, "message": f"too many open sessions for this caller ({cap}): end "
                                   "one (DELETE) or let one expire"}}).encode("utf-8")
    await send({"type": "http.response.start", "status": 429,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode("ascii")),
                            (b"retry-after", b"60")]})
    await send({"type": "http.response.body", "body": body})
