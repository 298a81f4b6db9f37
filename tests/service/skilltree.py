"""A small skills tree on disk (with bundled files, a callable skill and hostile symlinks),
indexed with the hash test embedder and served by a real server on port 0."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from router.config import Config, DiscoveryConfig, ServerConfig
from router.engine import Engine
from router.index.encoders.hashing import HashEmbedder
from router.index.store import build_index
from router.service.server import RouterServer, build_server
from router.skills.discovery import discover
from router.skills.limits import RESOURCE_MAX_BYTES

SECRET = "TOP SECRET: outside every skill directory"
PDF_BODY = "# PDF tools\n\nUse pdfplumber to extract tables. Run `scripts/extract.py FILE`."
MEETING_SCHEMA = {
    "type": "object",
    "properties": {
        "date": {"type": "string", "format": "date", "description": "Day of the meeting."},
        "attendees": {"type": "integer", "minimum": 1},
        "room": {"type": "string", "enum": ["small", "large"]},
        "minutes": {"type": "integer", "default": 30},
    },
    "required": ["date", "attendees"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Tree:
    """Where the pieces of the tree are."""

    root: Path  # the skills root
    secret: Path  # a file outside every skill directory
    index: Path


def _skill(root: Path, name: str, description: str, body: str, extra: str = "") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n{body}\n",
        encoding="utf-8")
    return folder


def write_tree(base: Path) -> Tree:
    """Write the skills tree under ``base`` and return its paths (index not built yet)."""
    root, secret = base / "skills", base / "secret.txt"
    secret.write_text(SECRET, encoding="utf-8")
    (base / "outside").mkdir()
    (base / "outside" / "notes.md").write_text(SECRET, encoding="utf-8")
    pdf = _skill(root, "pdf-tools", "Extracts text and tables from PDF files and merges PDF "
                 "documents. Use when working with PDF files.", PDF_BODY)
    (pdf / "scripts").mkdir()
    (pdf / "scripts" / "extract.py").write_text("print('tables')\n", encoding="utf-8")
    (pdf / "references").mkdir()
    (pdf / "references" / "guide.md").write_text("# Guide\n", encoding="utf-8")
    _skill(root, "git-helper", "Writes git commit messages and explains git history.",
           "# Git\n\nWrite the subject in the imperative.")
    _skill(root, "user-only", "Deploys to production on explicit request only.",
           "# Deploy\n\nAsk before deploying.", "disable-model-invocation: true\n")
    _skill(root, "model-only", "Formats tables of release statistics for reports.",
           "# Stats\n\nAlign numbers right.", "user-invocable: false\n")
    _skill(root, "switched-off", "Analyses CSV spreadsheets.", "# CSV", "enabled: false\n")
    escape = _skill(root, "escape-links", "Summarises meeting notes into action items.",
                    "# Notes\n\nList owners and dates.")
    (escape / "leak.txt").symlink_to(secret)
    (escape / "linked").symlink_to(base / "outside", target_is_directory=True)
    big = _skill(root, "big-data", "Loads very large data exports.", "# Big")
    with open(big / "data.bin", "wb") as fh:
        fh.truncate(RESOURCE_MAX_BYTES + 1)  # sparse: one byte over the cap, nothing written
    meeting = root / "book-meeting"
    meeting.mkdir()
    (meeting / "manifest.json").write_text(json.dumps({
        "name": "book-meeting",
        "description": "Books a meeting room for a date and a number of attendees.",
        "parameters": MEETING_SCHEMA}), encoding="utf-8")
    return Tree(root=root, secret=secret, index=base / "index")


def build_tree_index(tree: Tree, embedder: HashEmbedder | None = None) -> Engine:
    """Discover ``tree``, build its index with the hash embedder and open an Engine on it."""
    found = discover(DiscoveryConfig(bundled_roots=(str(tree.root),)))
    build_index(found.skills, found.diagnostics, embedder or HashEmbedder(), tree.index)
    return Engine.open(tree.index, Config(), embedder or HashEmbedder())


def serve_engine(engine: Engine, max_workers: int = 24) -> RouterServer:
    """A started server for ``engine`` on a free local port."""
    running = build_server(engine, ServerConfig(max_workers=max_workers, grace_seconds=1.0),
                           "127.0.0.1:0")
    running.server.start()
    return running


def free_port() -> int:
    """A local TCP port nothing listens on (right now)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
