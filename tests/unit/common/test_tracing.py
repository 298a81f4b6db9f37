"""``router.common.tracing``: off, a stage is the shared do-nothing context; on, an Engine's
Route makes the five stage spans, each with the index version, the principal and its count,
and no user text. ``router.door.tracing`` refuses an unknown mode or OTLP protocol."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from router.access.model import Principal
from router.common import tracing
from router.door.tracing import start_tracing
from router.errors import InvalidRequest
from router.routing.model import RouteQuery
from tests.support.indexes import build_hash_index, open_engine
from tests.support.skills import SKILLS
from tests.support.spans import recorded_spans

MESSAGE = "merge the PDF files of the secret merger codenamed bluebird"


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    with recorded_spans() as found:
        yield found


def test_off_a_stage_is_the_shared_null_context() -> None:
    assert tracing.tracer() is None
    with tracing.stage(tracing.SEARCH, "v1", "gw") as span:
        span.set_attribute(tracing.CANDIDATES, 3)
    assert tracing.stage(tracing.GATE) is tracing.OFF


def test_a_route_makes_the_five_stage_spans(exporter: InMemorySpanExporter,
                                            tmp_path: Path) -> None:
    engine = open_engine(build_hash_index(SKILLS, tmp_path / "index"))
    engine.route(RouteQuery(message=MESSAGE, caller=Principal("payments-gateway")))
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == [tracing.ENCODE, tracing.SEARCH, tracing.FUSE,
                                       tracing.GATE, tracing.RENDER]
    version = engine.snapshot.info.version
    assert all(s.attributes[tracing.INDEX_VERSION] == version for s in spans)
    assert all(s.attributes[tracing.PRINCIPAL] == "payments-gateway" for s in spans)
    assert spans[1].attributes[tracing.CANDIDATES] > 0
    assert spans[4].attributes[tracing.SHOWN] >= 0
    text = json.dumps([s.to_json() for s in spans])
    assert "bluebird" not in text and "merger" not in text


def test_an_unknown_mode_or_protocol_is_refused() -> None:
    assert start_tracing("") is None and tracing.tracer() is None
    with pytest.raises(InvalidRequest, match="give otlp"):
        start_tracing("jaeger")
    with pytest.raises(InvalidRequest, match="http/protobuf only"):
        start_tracing("otlp", {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
    assert tracing.tracer() is None


def test_the_configuration_refuses_an_unknown_tracing_mode() -> None:
    from router.config import ServerConfig

    assert ServerConfig(tracing="otlp").tracing == "otlp"
    with pytest.raises(InvalidRequest, match=r"server\.tracing"):
        ServerConfig(tracing="zipkin")
