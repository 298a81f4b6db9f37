"""A skills registry on loopback for the tests: ``http.server`` in a thread serving routes
the test builds (path -> body, Content-Type, status, headers), a path that holds its answer
until the test releases it (a slow registry), and a request log."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from router.skills.registry.index import SCHEMA_0_2_0

INDEX = "/.well-known/agent-skills/index.json"


@dataclass
class Route:
    body: bytes = b""
    content_type: str = "application/octet-stream"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    hold: threading.Event | None = None  # answer only once set


@dataclass
class Registry:
    routes: dict[str, Route] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    base: str = ""

    def serve(self, path: str, body: bytes, content_type: str = "application/octet-stream",
              **kw: object) -> None:
        self.routes[path] = Route(body, content_type, **kw)  # type: ignore[arg-type]

    def index(self, entries: list[dict[str, str]], schema: str = SCHEMA_0_2_0) -> None:
        self.serve(INDEX, json.dumps({"$schema": schema, "skills": entries}).encode(),
                   "application/json")

    def hits(self, path: str) -> int:
        return sum(1 for p, _ in self.requests if p == path)


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def skill_md(name: str, description: str = "", body: str = "") -> bytes:
    description = description or f"Handles {name} work for the registry tests."
    return (f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n{body}\n").encode()


def tar_gz(members: dict[str, bytes], links: dict[str, str] | None = None,
           hardlinks: dict[str, str] | None = None) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
        for name, target in (hardlinks or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.LNKTYPE, target
            tar.addfile(info)
    return out.getvalue()


def zip_bytes(members: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o120777 << 16)
            archive.writestr(info, target)
    return out.getvalue()


@contextmanager
def registry_server() -> Iterator[Registry]:
    """A running registry; ``registry.base`` is its ``http://127.0.0.1:<port>``."""
    registry = Registry()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            registry.requests.append((path, dict(self.headers.items())))
            route = registry.routes.get(path)
            if route is None:
                self.send_error(404)
                return
            if route.hold is not None:
                route.hold.wait(30)
            self.send_response(route.status)
            self.send_header("Content-Type", route.content_type)
            self.send_header("Content-Length", str(len(route.body)))
            for key, value in route.headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(route.body)

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    registry.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield registry
    finally:
        for route in registry.routes.values():
            if route.hold is not None:
                route.hold.set()
        server.shutdown()
        server.server_close()
