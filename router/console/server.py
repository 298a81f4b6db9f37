"""Running the console: uvicorn on a socket bound before it starts (port 0 picks a free one,
and connections queue from the moment ``start`` returns), on its own thread inside ``serve`` or
in the foreground for ``skill-router ops``; with the header deadline and connection cap of
``router.door.httpd`` (``ops.header_timeout_seconds``, ``ops.max_connections``)."""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from types import FrameType

import uvicorn

from router.access.callers import LiveTable, load_table
from router.client import SkillRouterClient
from router.config import OpsConfig
from router.console.app import Console
from router.console.audit import ConsoleAudit
from router.console.auth import console_access
from router.console.forwarded import proxy_settings
from router.console.routes import console_app
from router.credentials import CallerAuth
from router.door.audit import open_audit
from router.door.httpd import DoorLimits, door_config
from router.door.listen import bind

log = logging.getLogger(__name__)


def _principals(path: str, tokens: Sequence[bytes]) -> LiveTable | None:
    """The principals file at ``path`` with ``tokens`` as principals (None: no file)."""
    if not path:
        return None
    return LiveTable(lambda: load_table(path, tokens=tokens))


@dataclass(frozen=True)
class RouterLink:
    """The router a console reaches: its gRPC ``target``, the ``auth`` it is reached with, and
    the deadlines of a call (``timeout``) and of a Reindex (``reindex_timeout``), in seconds."""

    target: str
    auth: CallerAuth
    timeout: float = 10.0
    reindex_timeout: float = 600.0


class ConsoleServer:
    """The console for the ``router`` linked, listening on ``host:port`` and accepting
    ``tokens`` (and those of ``ops.principals_file``, read again on SIGHUP by ``run``) from its
    own callers, with the limits of ``ops``.
    Raises InvalidRequest (bind rule, a bad limit) or OSError (port busy, naming ``flag``, the
    option that chose the port: ``router.door.listen``) at construction;
    ``start`` serves on a thread."""

    def __init__(self, router: RouterLink, host: str, port: int, tokens: Sequence[bytes], *,
                 ops: OpsConfig | None = None, flag: str = "--port") -> None:
        ops = ops or OpsConfig()
        target, auth = router.target, router.auth
        principals = _principals(ops.principals_file, tokens)
        if principals is not None:
            tokens = ()  # accepted through the principals, as route/ops/admin principals
        limits = DoorLimits(ops.header_timeout_seconds, ops.max_connections)
        proxies = proxy_settings(ops.trusted_proxies)
        access = console_access(host, tokens, session_seconds=ops.session_seconds,
                                login_failures=ops.login_failures_per_minute,
                                principals=principals)
        self.principals = principals
        self.client = SkillRouterClient(target, timeout=router.timeout, ca_file=auth.ca_file,
                                        cert_file=auth.cert_file, key_file=auth.key_file,
                                        token=auth.token, tls=auth.tls)
        self.console = Console(self.client, access, target=target,
                               reindex_timeout=router.reindex_timeout)
        self.audit = open_audit(ops.audit_log)  # ops.audit_log: one line per request
        self._socket = bind(host, port, flag=flag)
        self.host = host
        self.port: int = self._socket.getsockname()[1]
        app = console_app(self.console, host)
        if self.audit is not None:
            app = ConsoleAudit(app, access, self.audit)
        self._server = uvicorn.Server(door_config(app, limits, lifespan="off", **proxies))
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host.strip('[]')}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> ConsoleServer:
        """Serve on a daemon thread; the socket already listens, so callers may connect."""
        self._thread = threading.Thread(target=self._server.run,
                                        kwargs={"sockets": [self._socket]},
                                        name="ops-console", daemon=True)
        self._thread.start()
        log.info("ops console on %s (router %s)", self.url, self.client.target)
        return self

    def run(self) -> None:
        """Serve until SIGTERM or SIGINT (main thread), then stop gracefully."""
        stop = threading.Event()

        def on_signal(signum: int, frame: FrameType | None) -> None:
            log.info("received %s", signal.Signals(signum).name)
            stop.set()

        previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM,
                                                                     signal.SIGINT)}
        if self.principals is not None:
            source = self.principals
            previous[signal.SIGHUP] = signal.signal(signal.SIGHUP,
                                                    lambda signum, frame: source.reload())
        try:
            self.start()
            while not stop.wait(timeout=1.0):
                if self._thread is not None and not self._thread.is_alive():
                    break  # uvicorn ended on its own (it logged why)
        finally:
            self.stop()
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def stop(self, timeout: float = 5.0) -> None:
        """Ask uvicorn to stop, wait for its thread, close the socket and the client."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
        self.close()

    def close(self) -> None:
        self._socket.close()
        self.client.close()
        if self.audit is not None:
            self.audit.close()
