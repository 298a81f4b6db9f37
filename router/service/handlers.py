"""Method handlers built once per method, not once per call.

grpc asks the server's interceptors for a call's handler on every call, and each of ours wraps
the servicer's in a new handler of its own. None of them reads anything but the method's name
while doing so (a call's metadata, caller and deadline are read when the call runs), so the
outermost interceptor keeps the finished handler per method name and hands it out again.

Only handlers that exist are kept: a caller may name any method, and one the server does not
serve is looked up (and answered UNIMPLEMENTED) each time rather than remembered. The methods
served are fixed once the server starts, so the cache never outgrows them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import grpc


class HandlerCache:
    """Finished handlers by method name (thread-safe; a race builds one twice, harmlessly)."""

    def __init__(self) -> None:
        self._built: dict[str, Any] = {}
        self._lock = threading.Lock()

    def get(self, details: grpc.HandlerCallDetails, build: Callable[[], Any]) -> Any:
        """The handler kept for ``details.method``, else ``build()``'s (kept unless None)."""
        method = details.method
        found = self._built.get(method)
        if found is not None:
            return found
        handler = build()
        if handler is not None:
            with self._lock:
                self._built.setdefault(method, handler)
        return handler

    def __len__(self) -> int:
        return len(self._built)
