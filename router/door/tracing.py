"""Turning tracing on for a process: ``server.tracing: otlp`` (``SKILL_ROUTER_SERVER_TRACING``)
exports spans with OpenTelemetry's OTLP exporter over HTTP/protobuf, configured by the standard
variables: ``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (default
``http://localhost:4318``), ``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_EXPORTER_OTLP_TIMEOUT``,
``OTEL_SERVICE_NAME`` (default ``skill-router``), ``OTEL_RESOURCE_ATTRIBUTES``,
``OTEL_TRACES_SAMPLER`` / ``OTEL_TRACES_SAMPLER_ARG`` (default: parent-based, always on) and
the batch processor's ``OTEL_BSP_*``. ``OTEL_EXPORTER_OTLP_PROTOCOL`` may be
``http/protobuf`` only (the gRPC exporter is not shipped). Off (""), nothing of the SDK is
imported. ``start_tracing`` returns the provider, to ``shutdown()`` (flush) on exit.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from router.common import tracing
from router.errors import InvalidRequest

TRACING_MODES = ("", "otlp")
PROTOCOL = "http/protobuf"
DEFAULT_SERVICE = "skill-router"


def check_mode(mode: str) -> None:
    if mode not in TRACING_MODES:
        raise InvalidRequest(f"server.tracing is {mode!r}: give otlp (export spans over OTLP/"
                             "HTTP, configured by the OTEL_* variables) or leave it empty (off)")


def start_tracing(mode: str, env: Mapping[str, str] | None = None) -> Any:
    """Trace with an OTLP/HTTP exporter when ``mode`` is ``otlp`` (the provider, in use from
    now on); None when off. InvalidRequest for an unknown mode or OTLP protocol."""
    check_mode(mode)
    if not mode:
        return None
    env = os.environ if env is None else env
    for key in ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        protocol = env.get(key, "").strip()
        if protocol and protocol != PROTOCOL:
            raise InvalidRequest(f"{key}={protocol}: server.tracing exports over {PROTOCOL} "
                                 "only; point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's "
                                 "HTTP port (4318)")
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    given = env.get("OTEL_SERVICE_NAME") or "service.name=" in env.get(
        "OTEL_RESOURCE_ATTRIBUTES", "")
    named = {} if given else {SERVICE_NAME: DEFAULT_SERVICE}
    provider = TracerProvider(resource=Resource.create(named))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    tracing.use(provider)
    return provider


def stop_tracing(provider: Any) -> None:
    """Flush and stop ``provider`` (from ``start_tracing``; None: nothing to do)."""
    if provider is not None:
        tracing.use(None)
        provider.shutdown()
