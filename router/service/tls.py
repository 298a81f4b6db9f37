"""TLS for the gRPC server (and mutual TLS), plus a plaintext health-only listener for probes.

``server.tls_cert_file`` and ``server.tls_key_file`` (PEM) switch the API port to TLS;
``server.tls_client_ca_file`` additionally requires every caller to present a certificate
signed by that CA (mutual TLS). Kubernetes' built-in ``grpc:`` probes speak plaintext only, so
``server.health_port`` (0 = off) opens a second, plaintext port that serves nothing but
``grpc.health.v1.Health`` with the same statuses as the API port.
"""

from __future__ import annotations

import logging
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2_grpc

from router.config import ServerConfig
from router.errors import InvalidRequest
from router.service.connections import connection_options

log = logging.getLogger(__name__)


def read_pem(path: str, what: str) -> bytes:
    """The bytes of a PEM file, or InvalidRequest naming the setting and the problem."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InvalidRequest(f"cannot read the {what} {path}: {exc.strerror or exc}") from exc
    if b"-----BEGIN" not in data:
        raise InvalidRequest(f"the {what} {path} is not a PEM file")
    return data


def tls_enabled(config: ServerConfig) -> bool:
    return bool(config.tls_cert_file or config.tls_key_file or config.tls_client_ca_file)


def server_credentials(config: ServerConfig) -> grpc.ServerCredentials | None:
    """TLS credentials for the API port, or None for plaintext. Raises InvalidRequest when
    the settings are incomplete or a file cannot be read."""
    if not tls_enabled(config):
        return None
    if not (config.tls_cert_file and config.tls_key_file):
        raise InvalidRequest("TLS needs both server.tls_cert_file and server.tls_key_file "
                             "(--tls-cert and --tls-key)")
    pair = (read_pem(config.tls_key_file, "TLS key"),
            read_pem(config.tls_cert_file, "TLS certificate"))
    client_ca = (read_pem(config.tls_client_ca_file, "client CA")
                 if config.tls_client_ca_file else None)
    return grpc.ssl_server_credentials([pair], root_certificates=client_ca,
                                       require_client_auth=client_ca is not None)


def start_health_listener(health: Any, config: ServerConfig) -> grpc.Server | None:
    """Serve ``health`` (a HealthServicer) alone, in plaintext, on ``config.health_port``;
    None when that is 0. Raises OSError when the port cannot be bound."""
    if config.health_port <= 0:
        return None
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2,
                                                    thread_name_prefix="skill-router-health"),
                         options=[("grpc.so_reuseport", 0), *connection_options(config)])
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    target = f"{config.host}:{config.health_port}"
    try:
        port = server.add_insecure_port(target)
    except RuntimeError as exc:
        raise OSError(f"cannot listen on {target} for health checks: {exc}") from exc
    if port == 0:
        raise OSError(f"cannot listen on {target} for health checks: the address is in use")
    server.start()
    log.info("plaintext health checks on %s:%d", config.host, port)
    return server
