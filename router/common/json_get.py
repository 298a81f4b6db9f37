"""One HTTP(S) GET of a small JSON document under a deadline on the whole exchange.

``get_json(url, seconds)`` connects, sends, reads the headers and the body within ``seconds``
in all: a timer shuts the socket down at the deadline, so a server that hangs, or trickles one
byte at a time (which a per-read timeout never ends), cannot hold the caller longer. Redirects
are not followed (an identity provider's key and discovery URLs answer directly). Failures are
``GetFailed`` naming why, never with a secret: URLs here carry none.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import ssl
import threading
import time
from typing import Any
from urllib.parse import urlsplit


class GetFailed(Exception):
    """The document could not be fetched or read (the reason)."""


def _connection(url: str, seconds: float) -> tuple[http.client.HTTPConnection, str]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise GetFailed(f"{url} is not an http(s) URL")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if parts.scheme == "https":
        return http.client.HTTPSConnection(parts.hostname, parts.port, timeout=seconds,
                                           context=ssl.create_default_context()), target
    return http.client.HTTPConnection(parts.hostname, parts.port, timeout=seconds), target


def _cut(connection: http.client.HTTPConnection, expired: threading.Event) -> None:
    expired.set()
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def get_json(url: str, seconds: float, max_bytes: int) -> tuple[Any, str]:
    """The JSON document at ``url`` and its Cache-Control header, within ``seconds`` in all."""
    connection, target = _connection(url, seconds)
    expired = threading.Event()
    timer = threading.Timer(seconds, _cut, (connection, expired))
    timer.daemon = True
    started = time.monotonic()
    timer.start()
    try:
        connection.connect()
        if expired.is_set():
            raise OSError("connect outlasted the deadline")
        connection.request("GET", target, headers={"Accept": "application/json"})
        answer = connection.getresponse()
        if answer.status != 200:
            raise GetFailed(f"{url} answered HTTP {answer.status}")
        body = b""
        while len(body) <= max_bytes:
            chunk = answer.read1(65536)
            if not chunk:
                break
            body += chunk
        cache_control = answer.getheader("Cache-Control", "") or ""
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if expired.is_set() or time.monotonic() - started >= seconds:
            raise GetFailed(f"{url} did not answer in full within {seconds:g} s") from None
        raise GetFailed(f"{url} could not be reached: {exc}") from None
    finally:
        timer.cancel()
        connection.close()
    if expired.is_set():
        raise GetFailed(f"{url} did not answer in full within {seconds:g} s")
    if len(body) > max_bytes:
        raise GetFailed(f"{url} answered more than {max_bytes} bytes")
    try:
        return json.loads(body), cache_control
    except (ValueError, RecursionError):
        raise GetFailed(f"{url} did not answer JSON") from None
