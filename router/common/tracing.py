"""The one tracing hook the turn's stages call: ``stage(name, ...)`` is a child span of the
current one (an RPC's server span) while tracing is on, and a shared do-nothing context while
it is off, so a Route pays a global read and a call per stage when nobody traces.

``use(provider)`` turns it on with an OpenTelemetry ``TracerProvider`` (``router.door.tracing``
builds the OTLP one; tests give one with an in-memory exporter); ``use(None)`` turns it off.
Spans carry counts, versions and names, never a user's text or a skill's body. Nothing of
OpenTelemetry is imported here until it is turned on. ``TRACEPARENT`` holds the caller's W3C
``traceparent`` while a door serves it, so its calls to the service continue that trace.
"""

from __future__ import annotations

import contextvars
import re
from types import TracebackType
from typing import Any

ENCODE, SEARCH, FUSE, GATE, RENDER = (f"skill_router.{name}" for name in
                                      ("encode", "search", "fuse", "gate", "render"))
INDEX_VERSION = "skill_router.index_version"
PRINCIPAL = "skill_router.principal"
CANDIDATES = "skill_router.candidates"
SHOWN = "skill_router.shown"
TRACEPARENT_KEY = "traceparent"
_TRACEPARENT = re.compile(r"[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}")

# The W3C traceparent of the call a door is serving, passed on to the gRPC service it calls
# (``router.client``); "" when the caller sent none.
TRACEPARENT: contextvars.ContextVar[str] = contextvars.ContextVar("traceparent", default="")


def traceparent_of(value: str | None) -> str:
    """``value`` when it is a valid W3C traceparent, else "" (W3C Trace Context: version
    ``ff`` is invalid, as is a trace id or a parent id of zeros only; version ``00`` has exactly
    four fields, a later version may add more, of which the first four are kept)."""
    value = (value or "").strip()
    head = value[:55]
    if not _TRACEPARENT.fullmatch(head) or (len(value) > 55 and value[55] != "-"):
        return ""
    version, trace_id, parent_id, _ = head.split("-")
    if version == "ff" or (version == "00" and len(value) != 55) or \
            trace_id == "0" * 32 or parent_id == "0" * 16:
        return ""
    return head


class _Off:
    """What a stage is while tracing is off: a context manager and a span that record nothing."""

    def __enter__(self) -> _Off:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        return None

    def set_attribute(self, key: str, value: Any) -> None:
        return None


OFF = _Off()
_tracer: Any = None  # an opentelemetry Tracer while tracing is on


def use(provider: Any) -> None:
    """Trace with ``provider`` (an OpenTelemetry TracerProvider) from now on; None: stop."""
    global _tracer
    _tracer = provider.get_tracer("skill_router") if provider is not None else None


def tracer() -> Any:
    """The tracer in use, None while tracing is off."""
    return _tracer


def stage(name: str, version: str = "", principal: str = "") -> Any:
    """A child span ``name`` of the current span with the index version and the principal
    (a context manager yielding the span); ``OFF`` while tracing is off."""
    active = _tracer
    if active is None:
        return OFF
    return active.start_as_current_span(name, attributes={INDEX_VERSION: version,
                                                          PRINCIPAL: principal})
