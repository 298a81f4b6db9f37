"""The Prometheus ``/metrics`` port of ``serve``: prometheus-client's WSGI app on a threading
server, with what a server with tokens needs.

- **Tokens.** On a server with accepted tokens (``server.auth_token_file`` /
  ``server.auth_token_env``) a scrape must send ``Authorization: Bearer <token>`` with one of
  them, else ``401``; ``server.open_metrics`` (``--open-metrics``) leaves it open for a scrape
  network that is closed by other means. A server without tokens serves it open, as before.
  With a principals file (``server.principals_file``) it opens to the token of a principal
  holding ``ops`` (a token of the token file holds it); a principal of some catalogs only (or
  with deny globs) gets every series but the per-skill ones (``shared``), which name the skills
  of every catalog.
- **Floods.** A connection silent for ``SILENT_SECONDS`` is dropped, and past ``MAX_OPEN``
  open connections a new one is closed at once (one thread each: a scrape needs one).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterable, Sequence
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app

from router.bearer import accepts, bearer_token

SILENT_SECONDS = 30.0
MAX_OPEN = 64
REALM = "skill-router-metrics"
WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class _Handler(WSGIRequestHandler):
    timeout = SILENT_SECONDS  # on every read of the request

    def log_message(self, format: str, *args: Any) -> None:
        """Scrapes are not logged."""


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.open_count = 0
        self.lock = threading.Lock()

    def verify_request(self, request: Any, client_address: Any) -> bool:
        with self.lock:
            if self.open_count >= MAX_OPEN:
                return False  # closed by the caller (shutdown_request)
            self.open_count += 1
            return True

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self.lock:
                self.open_count -= 1


class _Server6(_Server):
    address_family = socket.AF_INET6


def gated(app: WsgiApp, tokens: Sequence[bytes] | Callable[[bytes | None], bool],
          narrowed: Callable[[bytes | None], bool] | None = None,
          shared: WsgiApp | None = None) -> WsgiApp:
    """``app`` for callers sending an accepted bearer token (one of ``tokens``, or one the
    check ``tokens`` accepts), ``shared`` instead for a token ``narrowed`` says sees only some
    catalogs; 401 for the others."""

    def accepted(token: bytes | None) -> bool:
        return tokens(token) if callable(tokens) else accepts(tokens, token)

    def guarded(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        token = bearer_token(environ.get("HTTP_AUTHORIZATION"))
        if accepted(token):
            if shared is not None and narrowed is not None and narrowed(token):
                return shared(environ, start_response)
            return app(environ, start_response)
        start_response("401 Unauthorized", [("Content-Type", "text/plain; charset=utf-8"),
                                            ("WWW-Authenticate", f'Bearer realm="{REALM}"')])
        return [b"missing or invalid bearer token: send 'Authorization: Bearer <token>' with "
                b"a token this server accepts\n"]

    return guarded


def serve_metrics(registry: CollectorRegistry, port: int, host: str,
                  tokens: Sequence[bytes] | Callable[[bytes | None], bool] = (),
                  narrowed: Callable[[bytes | None], bool] | None = None,
                  shared: CollectorRegistry | None = None) -> tuple[Any, int]:
    """Serve ``/metrics`` for ``registry`` on ``host:port`` (0 = a free port) in a daemon
    thread, gated by ``tokens`` when there are any (``shared`` for the tokens ``narrowed``
    picks). Returns ``(server, bound_port)``; call ``server.shutdown()`` to stop."""
    app: WsgiApp = make_wsgi_app(registry)
    if tokens:
        app = gated(app, tokens, narrowed,
                    make_wsgi_app(shared) if shared is not None else None)
    server_class = _Server6 if ":" in host.strip("[]") else _Server
    server = make_server(host.strip("[]"), port, app, server_class=server_class,
                         handler_class=_Handler)
    threading.Thread(target=server.serve_forever, name="metrics-http", daemon=True).start()
    return server, int(server.server_port)
