"""Spans recorded in memory: OpenTelemetry installed for the router (``router.common.tracing``)
with an in-memory exporter, and taken away again afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from router.common import tracing


@contextmanager
def recorded_spans() -> Iterator[InMemorySpanExporter]:
    """The exporter every span the router ends goes to while inside."""
    found = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(found))
    tracing.use(provider)
    try:
        yield found
    finally:
        tracing.use(None)
        provider.shutdown()
