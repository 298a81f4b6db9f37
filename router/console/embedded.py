"""The console inside ``serve`` (``--ops-port`` / ``ops.port``): a client of the server's own
gRPC port on loopback, presenting the server's first accepted token, and accepting the
server's tokens from its browser callers. Checked before the model loads (bind rule, TLS);
started once the gRPC server listens; stopped when it stops."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from router.bearer import is_loopback, read_tokens
from router.config import OpsConfig, ServerConfig
from router.credentials import CallerAuth
from router.errors import InvalidRequest

if TYPE_CHECKING:
    from router.console.server import ConsoleServer

log = logging.getLogger(__name__)
ALL_INTERFACES = frozenset({"", "0.0.0.0", "::", "[::]"})


def loopback_target(address: str) -> str:
    """Where the console reaches a server listening on ``address`` (``host:port``): loopback
    when it listens there or on every interface, its own address otherwise."""
    host, _, port = address.rpartition(":")
    if host in ALL_INTERFACES or is_loopback(host):
        return f"[::1]:{port}" if host.strip("[]") == "::1" else f"127.0.0.1:{port}"
    return address


class EmbeddedConsole:
    """The console ``serve`` runs, or nothing when ``port`` is 0."""

    def __init__(self, server: ServerConfig, ops: OpsConfig, port: int | None) -> None:
        self.port = ops.port if port is None else port
        self.host = ops.host
        self.ops = ops
        self._server: ConsoleServer | None = None
        if self.port < 0:
            raise InvalidRequest("--ops-port must be 0 (off) or a port number")
        if not self.port:
            self.tokens: tuple[bytes, ...] = ()
            return
        if server.principals_file or ops.principals_file:
            raise InvalidRequest("the ops console inside serve calls the server with its "
                                 "first token, which acts for no principal of a principals "
                                 "file; run `skill-router ops --target ... --principals FILE` "
                                 "with a token of a principal holding delegate instead of "
                                 "--ops-port")
        if server.tls_cert_file or server.tls_client_ca_file:
            raise InvalidRequest("the ops console inside serve speaks plaintext gRPC to the "
                                 "server; with TLS on, run `skill-router ops --target` with "
                                 "the TLS flags instead of --ops-port")
        self.tokens = read_tokens(server.auth_token_file, server.auth_token_env,
                                  env_setting="server.auth_token_env")
        # the console's parts load only when it is on: a server without it skips the HTTP
        # server's imports
        from router.console.auth import console_access
        from router.console.forwarded import trusted_networks
        from router.door.httpd import DoorLimits

        # the bind rule and the limits, before anything loads
        console_access(self.host, self.tokens, session_seconds=ops.session_seconds,
                       login_failures=ops.login_failures_per_minute)
        DoorLimits(ops.header_timeout_seconds, ops.max_connections)
        trusted_networks(ops.trusted_proxies)

    @property
    def url(self) -> str | None:
        return self._server.url if self._server is not None else None

    def start(self, address: str) -> None:
        """Serve the console for the gRPC server listening on ``address``."""
        if not self.port:
            return
        from router.console.server import ConsoleServer, RouterLink

        token = self.tokens[0].decode("utf-8") if self.tokens else ""
        self._server = ConsoleServer(RouterLink(loopback_target(address),
                                                CallerAuth(token=token)),
                                     self.host, self.port, self.tokens,
                                     ops=self.ops, flag="--ops-port").start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
