"""An identity provider that never answers in full, on a loopback port: ``hang`` reads the
request and sends nothing; ``trickle`` sends a 200 answer one byte at a time, a byte every
``gap`` seconds, for as long as the caller reads. Connections are counted."""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

ANSWER = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n"
          b'{"keys": []}')


@dataclass
class SlowProvider:
    mode: str
    gap: float = 0.5
    url: str = ""
    connections: int = 0
    stopped: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _handler(provider: SlowProvider) -> type[socketserver.BaseRequestHandler]:
    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            sock: socket.socket = self.request
            with provider.lock:
                provider.connections += 1
            sock.recv(65536)
            if provider.mode == "hang":
                provider.stopped.wait()
                return
            for index in range(len(ANSWER)):
                if provider.stopped.wait(provider.gap):
                    return
                try:
                    sock.sendall(ANSWER[index:index + 1])
                except OSError:
                    return

    return Handler


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


@contextmanager
def slow_provider(mode: str, gap: float = 0.5) -> Iterator[SlowProvider]:
    """A provider in ``mode`` ("hang" or "trickle") whose JWKS URL is ``.url``."""
    provider = SlowProvider(mode, gap)
    server = _Server(("127.0.0.1", 0), _handler(provider))
    provider.url = f"http://127.0.0.1:{server.server_address[1]}/keys"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield provider
    finally:
        provider.stopped.set()
        server.shutdown()
        server.server_close()
