"""The ops console's audit lines (``ops.audit_log``, ``ops --audit-log PATH``; written by
``router.door.audit``): one JSON line per HTTP request the console answers, refused ones
included (a wrong login token, a missing role, too many failed logins): ``request_id`` (the
console's own), ``trace_id`` (the request's ``traceparent``, else a fresh one), ``principal``
(the signed-in caller's principal of the principals file, for a login the one it signed in as;
null when unknown or without a principals file), ``acting_for`` (null), ``method`` (``POST
/login``, ``GET /route``: the path only, never the query, which holds the message a page
routes), ``code`` (the answer as a gRPC status name: ``OK`` for 2xx and 3xx,
``UNAUTHENTICATED`` 401, ``PERMISSION_DENIED`` 403, ``RESOURCE_EXHAUSTED`` 429, ...),
``index_version`` (null: the service's lines have it, for the calls the pages make) and
``door: "ops"``.
"""

from __future__ import annotations

import uuid
from http.cookies import SimpleCookie
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import cookie_parser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from router.common.tracing import TRACEPARENT_KEY, traceparent_of
from router.console.auth import COOKIE, ConsoleAccess
from router.door.api import code_name_of_http
from router.door.audit import AuditLog


def _set_cookie(message: Message) -> str:
    """The session cookie a response sets ("" when none)."""
    for key, value in message.get("headers", []):
        if key.lower() == b"set-cookie":
            found = SimpleCookie(value.decode("latin-1")).get(COOKIE)
            if found is not None and found.value:
                return found.value
    return ""


class ConsoleAudit:
    """ASGI middleware writing the console's requests to ``audit``."""

    def __init__(self, app: ASGIApp, access: ConsoleAccess, audit: AuditLog) -> None:
        self.app, self.access, self.audit = app, access, audit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        status, opened = 500, ""

        async def watch(message: Message) -> None:
            nonlocal status, opened
            if message["type"] == "http.response.start":
                status, opened = int(message["status"]), _set_cookie(message)
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            self.audit.write(self._line(scope, headers, status, opened))

    def _line(self, scope: Scope, headers: Headers, status: int, opened: str) -> dict[str, Any]:
        cookies = {COOKIE: opened} if opened else cookie_parser(headers.get("cookie", ""))
        entry = self.access.caller_entry(headers, cookies)
        traceparent = traceparent_of(headers.get(TRACEPARENT_KEY))
        return {"request_id": uuid.uuid4().hex,
                "trace_id": traceparent.split("-")[1] if traceparent else uuid.uuid4().hex,
                "principal": entry.principal.name if entry is not None else None,
                "acting_for": None, "method": f"{scope.get('method', '')} {scope.get('path', '')}",
                "code": code_name_of_http(status), "index_version": None, "door": "ops"}
