"""The call context of a JSON-door call: what the gRPC door's handler chain (interceptors and
servicer) reads of a call, from an HTTP request instead of a gRPC one, so one chain serves
both wires. Headers are the call's metadata (``authorization``, ``traceparent``,
``x-request-id``, the delegation headers), the client certificate's subject its auth context,
``Connect-Timeout-Ms`` its deadline."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, NoReturn

import grpc

from router.service.access import SUBJECT_KEY

DOOR = "connect"  # the calls' door in their facts, metrics and spans


class Aborted(Exception):
    """The chain ended the call with a status (``abort``)."""


class HttpCallContext:
    """A ``grpc.ServicerContext`` for one HTTP request (the methods the handler chain uses)."""

    door = DOOR

    def __init__(self, metadata: Sequence[tuple[str, str]], *, subject: str = "",
                 peer: str = "", timeout: float | None = None) -> None:
        self._metadata = tuple(metadata)
        self._subject, self._peer = subject, peer
        self._deadline = None if timeout is None else time.monotonic() + timeout
        self._code: grpc.StatusCode | None = None
        self._details = ""
        self._trailing: tuple[tuple[str, str], ...] = ()

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    def auth_context(self) -> dict[str, list[bytes]]:
        return {SUBJECT_KEY: [self._subject.encode("utf-8")]} if self._subject else {}

    def peer(self) -> str:
        return self._peer

    def time_remaining(self) -> float | None:
        if self._deadline is None:
            return None
        return max(0.0, self._deadline - time.monotonic())

    def is_active(self) -> bool:
        remaining = self.time_remaining()
        return remaining is None or remaining > 0

    def abort(self, code: grpc.StatusCode, details: str) -> NoReturn:
        self._code, self._details = code, details
        raise Aborted(details)

    def set_code(self, code: grpc.StatusCode) -> None:
        self._code = code

    def set_details(self, details: str) -> None:
        self._details = details

    def code(self) -> grpc.StatusCode | None:
        return self._code

    def details(self) -> str:
        return self._details

    def set_trailing_metadata(self, metadata: Sequence[tuple[str, Any]]) -> None:
        self._trailing = tuple((str(k), str(v)) for k, v in metadata)

    def trailing_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._trailing

    def add_callback(self, callback: Any) -> bool:
        return False  # no streaming call runs here: nothing waits for the end of one
