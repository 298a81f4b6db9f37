"""A bounded connection flood on loopback: many connections that each send half a request and
then nothing, and a watch for the server closing them; and a lowered file limit for a server
started as a subprocess (``preexec_fn``)."""

from __future__ import annotations

import resource
import selectors
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

HALF_REQUEST = b"GET /skills HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "  # headers never end


def file_limit(files: int) -> Callable[[], None]:
    """A ``preexec_fn`` giving the child ``files`` open files at most (soft limit)."""

    def lower() -> None:
        _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (files, hard))

    return lower


@contextmanager
def half_requests(port: int, count: int) -> Iterator[list[socket.socket]]:
    """``count`` connections to ``127.0.0.1:port``, each having sent ``HALF_REQUEST``; all
    closed on exit. A connection the server refuses or resets at once is kept, closed."""
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sockets.append(sock)
            sock.settimeout(5.0)
            try:
                sock.connect(("127.0.0.1", port))
                sock.sendall(HALF_REQUEST)
            except OSError:
                sock.close()  # refused, reset or timed out: the server did not keep it
        yield sockets
    finally:
        for sock in sockets:
            sock.close()


def closed_by_server(sockets: list[socket.socket], deadline: float) -> int:
    """Wait until the server has closed every socket or ``deadline`` (monotonic) passes; the
    number it closed (end of stream or reset; whatever it wrote first is read and dropped)."""
    selector = selectors.DefaultSelector()
    closed = 0
    for sock in sockets:
        try:
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
        except (OSError, ValueError):
            closed += 1
    try:
        while selector.get_map() and time.monotonic() < deadline:
            for key, _ in selector.select(timeout=max(0.0, deadline - time.monotonic())):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    data = sock.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    selector.unregister(sock)
                    closed += 1
    finally:
        selector.close()
    return closed


def garbage_requests(port: int, count: int) -> None:
    """``count`` malformed requests, one connection each, each read until the server closes."""
    for _ in range(count):
        with socket.create_connection(("127.0.0.1", port), timeout=10.0) as sock:
            sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
            while sock.recv(65536):
                pass
