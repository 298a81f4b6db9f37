"""The gRPC server: SkillRouter, standard health checking, reflection and graceful shutdown.

``create_server`` binds but does not start, so callers (and tests on port 0) decide when to
start and can read the bound port first. ``serve`` starts, blocks, and on SIGTERM/SIGINT
reports NOT_SERVING, then stops with the configured grace period so in-flight calls finish;
it also serves Prometheus metrics and picks up index versions written into the index folder.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable
from concurrent import futures
from dataclasses import dataclass, replace
from types import FrameType
from typing import TYPE_CHECKING, Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from router.config import ServerConfig
from router.door.api import SERVICE_NAME
from router.door.audit import AuditLog, open_audit
from router.door.listen import MAKE_RUN, cannot_listen, check_free
from router.door.path_policy import PathPolicy
from router.door.poller import IndexPoller
from router.door.threads import call_pool
from router.door.tracing import start_tracing, stop_tracing
from router.engine import Engine
from router.service.access import AccessInterceptor, Gate
from router.service.audit import audit_observer
from router.service.auth import warn_if_open
from router.service.connections import connection_options
from router.service.interceptors import CallObserver, LoggingInterceptor, observing
from router.service.metrics import ServiceMetrics, start_metrics_http
from router.service.servicer import CallerReader, add_to_server
from router.service.tls import server_credentials, start_health_listener, tls_enabled
from router.service.tracing import TracingInterceptor

if TYPE_CHECKING:
    from router.service.connect.server import JsonDoor

log = logging.getLogger(__name__)

# Health is reported for the whole server ("") and for the SkillRouter service by name.
HEALTH_SERVICES: tuple[str, ...] = ("", SERVICE_NAME)


@dataclass(frozen=True)
class RouterServer:
    """A bound server with its health servicer, so shutdown can report NOT_SERVING first."""

    server: grpc.Server
    port: int
    address: str
    health: Any  # grpc_health.v1.health.HealthServicer
    gate: Gate  # its principals: reload() on SIGHUP
    audit: AuditLog | None = None  # server.audit_log, closed by stop()
    json_door: JsonDoor | None = None  # the Connect protocol's port, when asked for

    def start(self) -> None:
        """Start taking calls on the gRPC port (and the JSON door's)."""
        self.server.start()
        if self.json_door is not None:
            self.json_door.start()

    def begin_shutdown(self) -> None:
        """Report NOT_SERVING on every health service; new calls are still accepted."""
        self.health.enter_graceful_shutdown()

    def stop(self, grace: float | None) -> None:
        """Report NOT_SERVING, refuse new calls, and wait up to ``grace`` s for in-flight ones."""
        self.begin_shutdown()
        stopped = self.server.stop(grace)
        if self.json_door is not None:
            self.json_door.stop(grace)
        stopped.wait()
        if self.audit is not None:
            self.audit.close()


def rpc_pool(config: ServerConfig, search_threads: int) -> futures.ThreadPoolExecutor:
    """The threads calls run on, each setting ``index.search_threads`` as it starts
    (``router.door.threads``)."""
    return call_pool(config.max_workers, search_threads, "skill-router-rpc")


def build_server(engine: Engine, config: ServerConfig, address: str | None = None,
                 *, observer: CallObserver | None = None,
                 caller_of: CallerReader | None = None,
                 http_port: int | None = None) -> RouterServer:
    """Create and bind (not start) a server for ``engine``; see ``create_server``.
    ``caller_of`` reads each call's caller (default: the one ``config``'s principals and
    tokens resolve, ``router.service.access``); ``http_port`` the JSON door's port (default
    ``config.http_port``; 0 there is off, here any free port)."""
    target = address or f"{config.host}:{config.port}"
    credentials = server_credentials(config)
    gate = Gate(config)
    audit = open_audit(config.audit_log)
    if audit is not None:
        observer = observing(observer, audit_observer(engine, audit))
    interceptors = [LoggingInterceptor(observer),
                    *([TracingInterceptor()] if config.tracing else []),
                    AccessInterceptor(gate)]
    server = grpc.server(
        rpc_pool(config, engine.config.index.search_threads),
        interceptors=interceptors,
        options=[("grpc.max_receive_message_length", config.max_request_bytes),
                 # A busy port is an error: never share it with another server process.
                 ("grpc.so_reuseport", 0), *connection_options(config)],
    )
    servicer = add_to_server(engine, server, caller_of or gate.principal_of,
                             lambda c: gate.caller(c).operator,
                             PathPolicy(config.expose_paths, engine.index_dir))
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    for name in HEALTH_SERVICES:
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    http = config.http_port if http_port is None else http_port
    wants_json = http_port is not None or http > 0
    if wants_json:  # imported only by a server with the JSON door, before either port is bound
        from router.service.connect.server import json_door
    port = _bind(server, target, credentials)
    host = target.rsplit(":", 1)[0] if ":" in target else target
    running = RouterServer(server=server, port=port, address=f"{host}:{port}",
                           health=health_servicer, gate=gate, audit=audit)
    if not wants_json:
        return running
    try:  # the JSON door: the same servicers behind the same interceptors
        door = json_door(servicer, health_servicer, interceptors, config, host, http,
                         engine.config.index.search_threads)
    except BaseException:
        running.stop(None)  # the gRPC port is free again for whoever retries
        raise
    return replace(running, json_door=door)


def _bind(server: grpc.Server, target: str,
          credentials: grpc.ServerCredentials | None = None) -> int:
    host, _, port_text = target.rpartition(":")
    if port_text.isdigit():  # a taken port is said once, before gRPC's core logs its own line
        check_free(host, int(port_text), also=MAKE_RUN)
    try:
        if credentials is None:
            port = server.add_insecure_port(target)
        else:
            port = server.add_secure_port(target, credentials)
    except RuntimeError as exc:
        raise OSError(f"cannot listen on {target}: {exc}") from exc
    if port == 0:
        raise cannot_listen(host, int(port_text) if port_text.isdigit() else 0, also=MAKE_RUN)
    return port


def create_server(engine: Engine, config: ServerConfig,
                  address: str | None = None) -> tuple[grpc.Server, int]:
    """A sync gRPC server for ``engine``, bound to ``address`` (default ``host:port`` from
    ``config``; port 0 picks a free port) but not started. Returns ``(server, bound_port)``.

    Registered: router.v1.SkillRouter, grpc.health.v1.Health (SERVING for "" and
    router.v1.SkillRouter) and server reflection for all of them.
    """
    built = build_server(engine, config, address)
    return built.server, built.port


@dataclass(frozen=True)
class Endpoints:
    """Where a started server can be reached."""

    address: str  # host:port of the gRPC API (and its health service)
    metrics_url: str | None  # the Prometheus endpoint, None when off
    json_url: str | None = None  # the JSON door (Connect protocol), None when off


def serve(engine: Engine, config: ServerConfig, address: str | None = None,
          *, ready: Callable[[Endpoints], None] | None = None) -> None:
    """Serve until SIGTERM or SIGINT, then stop gracefully within ``config.grace_seconds``.

    Also serves Prometheus metrics on ``config.metrics_port`` (0 = off) and, when the Engine
    has an index folder and ``config.index_poll_seconds`` > 0, reloads new versions written
    there. ``ready`` (optional) is called with the endpoints once the server is started.
    """
    metrics = ServiceMetrics(engine)
    provider = start_tracing(config.tracing)
    running = build_server(engine, config, address, observer=metrics.observe)
    stop_requested = threading.Event()
    previous = _install_signal_handlers(stop_requested, running.gate.reload)
    http, poller, health_listener = None, None, None
    try:
        running.start()
        health_listener = start_health_listener(running.health, config)
        http, metrics_url = _start_metrics(metrics, config, running.gate)
        poller = _start_poller(engine, config)
        log.info("serving router.v1.SkillRouter on %s%s", running.address,
                 " (TLS)" if tls_enabled(config) else "")
        warn_if_open(config)
        if ready is not None:
            door = running.json_door
            ready(Endpoints(running.address, metrics_url,
                            door.url if door is not None else None))
        while not stop_requested.wait(timeout=1.0):
            pass
        log.info("shutting down: NOT_SERVING, up to %.1fs for in-flight calls",
                 config.grace_seconds)
    finally:
        running.stop(config.grace_seconds)
        if health_listener is not None:
            health_listener.stop(0)
        if poller is not None:
            poller.stop()
        if http is not None:
            http.shutdown()
        engine.close()
        stop_tracing(provider)  # the last spans flushed
        _restore_signal_handlers(previous)
        log.info("server stopped")


def _start_metrics(metrics: ServiceMetrics, config: ServerConfig,
                   gate: Gate) -> tuple[Any, str | None]:
    """Start ``/metrics``; a busy port is logged and metrics stay off (serving goes on). With
    principals or tokens it opens to an ``ops`` principal's token (401 for others), the
    per-skill series to those of every catalog."""
    if config.metrics_port <= 0:
        return None, None
    accept: tuple[bytes, ...] | Callable[[bytes | None], bool] = ()
    if not config.open_metrics and gate.table is not None:
        accept = gate.accepts_ops_token
    try:
        http, port = start_metrics_http(metrics, config.metrics_port, config.host, accept,
                                        gate.narrow_token)
    except OSError as exc:
        log.error("metrics are off: cannot listen on %s:%d (%s)", config.host,
                  config.metrics_port, exc)
        return None, None
    return http, f"http://{config.host}:{port}/metrics"


def _start_poller(engine: Engine, config: ServerConfig) -> IndexPoller | None:
    if engine.index_dir is None or config.index_poll_seconds <= 0:
        return None
    return IndexPoller(engine, config.index_poll_seconds).start()


_Handler = Callable[[int, FrameType | None], Any] | int | None


def _install_signal_handlers(stop: threading.Event,
                             reload: Callable[[], Any]) -> dict[signal.Signals, _Handler]:
    """Make SIGTERM and SIGINT request a graceful stop and SIGHUP ``reload`` the principals
    (main thread only; else a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        log.warning("not on the main thread: SIGTERM/SIGINT will not stop the server")
        return {}

    def on_signal(signum: int, frame: FrameType | None) -> None:
        log.info("received %s", signal.Signals(signum).name)
        stop.set()

    def on_hangup(signum: int, frame: FrameType | None) -> None:
        log.info("received SIGHUP: reloading the principals")
        reload()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    previous[signal.SIGHUP] = signal.signal(signal.SIGHUP, on_hangup)
    return previous


def _restore_signal_handlers(previous: dict[signal.Signals, _Handler]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)
