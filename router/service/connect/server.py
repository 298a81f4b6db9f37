"""The JSON door's listener: uvicorn (HTTP/1.1, with ``router.door.httpd``'s header deadline and
connection cap) on a socket bound before it starts, on its own thread beside the gRPC server,
with the gRPC port's TLS (``server.tls_cert_file``, ``server.tls_key_file``; with
``server.tls_client_ca_file`` every caller presents a certificate it signed, its subject then
naming the caller as on the gRPC port)."""

from __future__ import annotations

import asyncio
import logging
import ssl
import threading
from collections.abc import Sequence
from typing import Any

import uvicorn
from grpc_health.v1 import health_pb2, health_pb2_grpc

from router.config import ServerConfig
from router.door.api import SERVICE_NAME
from router.door.httpd import DoorLimits, door_config, protocol_class
from router.door.listen import address, bind
from router.door.threads import call_pool
from router.service.connect.app import SUBJECT_STATE, ConnectApp
from router.service.connect.calls import CallChain, Registry
from router.service.servicer import SkillRouterServicer
from router.v1 import router_pb2 as pb
from router.v1 import router_pb2_grpc as pb_grpc

log = logging.getLogger(__name__)

# The short names OpenSSL's RFC 2253 form (what gRPC reports as the subject) gives attributes.
_SHORT = {"commonName": "CN", "organizationName": "O", "organizationalUnitName": "OU",
          "countryName": "C", "stateOrProvinceName": "ST", "localityName": "L",
          "domainComponent": "DC", "emailAddress": "emailAddress", "userId": "UID"}


def rfc2253(subject: Any) -> str:
    """A peer certificate's subject (``ssl.SSLSocket.getpeercert()['subject']``) as gRPC
    writes it: ``CN=name,O=org``, the last relative name first."""
    parts = [f"{_SHORT.get(key, key)}={value}" for rdn in reversed(subject or ())
             for key, value in rdn]
    return ",".join(parts)


def _protocol(limits: DoorLimits) -> type:
    base = protocol_class(limits)

    def connection_made(self: Any, transport: asyncio.Transport) -> None:
        base.connection_made(self, transport)
        tls = transport.get_extra_info("ssl_object")
        peer = tls.getpeercert() if tls is not None else None
        if peer:  # this connection's requests carry its subject in their scope's state
            self.app_state = {**self.app_state, SUBJECT_STATE: rfc2253(peer.get("subject"))}

    return type("ConnectH11", (base,), {"connection_made": connection_made})


def tls_settings(config: ServerConfig) -> dict[str, Any]:
    """uvicorn's TLS arguments for the gRPC port's TLS settings ({} for plaintext)."""
    if not config.tls_cert_file:
        return {}
    settings: dict[str, Any] = {"ssl_certfile": config.tls_cert_file,
                                "ssl_keyfile": config.tls_key_file}
    if config.tls_client_ca_file:
        settings |= {"ssl_ca_certs": config.tls_client_ca_file,
                     "ssl_cert_reqs": ssl.CERT_REQUIRED}
    return settings


class JsonDoor:
    """``app`` listening on ``host:port`` (0: any free port) once ``start`` returns."""

    def __init__(self, app: ConnectApp, host: str, port: int, config: ServerConfig) -> None:
        self._socket = bind(host, port, flag="--http-port")
        self.host, self.port = host, int(self._socket.getsockname()[1])
        self.tls = bool(config.tls_cert_file)
        limits = DoorLimits(max_connections=config.max_connections or 1000)
        settings = door_config(app, limits, protocol=_protocol(limits), lifespan="off",
                               **tls_settings(config))
        settings.load()  # a TLS file uvicorn cannot use is said now, not on its thread
        self._app = app
        self._server = uvicorn.Server(settings)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{address(self.host, self.port)}"

    def start(self) -> JsonDoor:
        self._thread = threading.Thread(target=self._server.run,
                                        kwargs={"sockets": [self._socket]},
                                        name="json-door", daemon=True)
        self._thread.start()
        log.info("serving router.v1.SkillRouter as JSON (Connect) on %s", self.url)
        return self

    def stop(self, grace: float | None = None) -> None:
        """Stop taking calls, let those in flight finish (up to ``grace`` s), close."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(grace if grace else 5.0)
        self._socket.close()
        self._app.close()


def json_door(servicer: SkillRouterServicer, health_servicer: Any,
              interceptors: Sequence[Any], config: ServerConfig, host: str,
              port: int, search_threads: int) -> JsonDoor:
    """The JSON door (``router.service.connect``) for the same servicers behind the same
    ``interceptors``, bound to ``host:port``, its calls on threads of its own."""
    registry = Registry()
    pb_grpc.add_SkillRouterServicer_to_server(servicer, registry)  # type: ignore[no-untyped-call]
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, registry)
    chain = CallChain(registry, interceptors, (pb.DESCRIPTOR, health_pb2.DESCRIPTOR),
                      f"{SERVICE_NAME}/Route")
    app = ConnectApp(chain, call_pool(config.max_workers, search_threads,
                                      "skill-router-json"), config.max_request_bytes)
    return JsonDoor(app, host, port, config)
