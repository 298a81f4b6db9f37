"""The console's HTTP plumbing: its Jinja2 environment, form bodies and the Host check."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from router.console.auth import ConsoleAccess, host_allowed

TEMPLATES = Path(__file__).parent / "templates"
MAX_FORM_BYTES = 64 * 1024


def environment() -> Environment:
    """Jinja2 with autoescaping on for every template (all are HTML)."""
    return Environment(loader=FileSystemLoader(TEMPLATES),
                       autoescape=select_autoescape(default=True, default_for_string=True),
                       trim_blocks=True, lstrip_blocks=True)


async def read_form(request: Request) -> dict[str, str]:
    """An urlencoded form body (first value of each field); empty when too large or another
    type."""
    if not request.headers.get("content-type", "").startswith(
            "application/x-www-form-urlencoded"):
        return {}
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            return {}  # read no further
    parsed = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    return {key: values[0] for key, values in parsed.items()}


class HostCheck:
    """ASGI middleware: 421 for an HTTP request whose Host the console does not answer."""

    def __init__(self, app: ASGIApp, access: ConsoleAccess, bound: str) -> None:
        self.app, self.access, self.bound = app, access, bound

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            if not host_allowed(self.access, host, self.bound):
                body = b"misdirected request: this console answers loopback Host names only"
                await send({"type": "http.response.start", "status": 421,
                            "headers": [(b"content-type", b"text/plain"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
