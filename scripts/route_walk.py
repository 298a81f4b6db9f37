"""Count the packages of router/ one served Route walks through, and its climbs back.

    python scripts/route_walk.py --index DIR [--message TEXT]

A profile hook records every Python call made during one ``Engine.route_turn`` (after a first
one warmed the caches and claimed the session), with the top-level package of the caller's and
the callee's module. Packages crossed: the packages whose functions ran. A climb back: a call
(counted once per caller module and callee module) from a package other than the engine that
goes up a floor (the floors of tests/unit/test_layout.py) or returns to a package the engine's
own calls had already entered and left. The index folder is copied first: the Route's feedback
rows are written to the copy.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import Any

from router.config import load_config
from router.engine import Engine
from router.routing.model import RouteQuery
from tests.unit.test_layout import LAYERS

FLOOR = {name: level for level, names in enumerate(LAYERS) for name in names}


def _package(frame: FrameType | None) -> tuple[str, FrameType | None]:
    """The nearest router module at or above ``frame``, and its frame."""
    while frame is not None:
        name = str(frame.f_globals.get("__name__", ""))
        if name.startswith("router."):
            return name, frame
        frame = frame.f_back
    return "", None


def _on_stack(frame: FrameType | None) -> set[str]:
    out = set()
    while frame is not None:
        name = str(frame.f_globals.get("__name__", ""))
        if name.startswith("router."):
            out.add(name.split(".")[1])
        frame = frame.f_back
    return out


class Walk:
    """What one Route called, by package."""

    def __init__(self) -> None:
        self.packages: set[str] = set()
        self.engine_calls: list[str] = []  # the packages the engine calls into, in order
        self.climbs: set[tuple[str, str]] = set()  # (caller module, callee module)

    def hook(self, frame: FrameType, event: str, arg: Any) -> None:
        name = str(frame.f_globals.get("__name__", ""))
        if event != "call" or not name.startswith("router."):
            return
        package = name.split(".")[1]
        self.packages.add(package)
        caller, back = _package(frame.f_back)
        if not caller or caller.split(".")[1] == package:
            return
        source = caller.split(".")[1]
        if source == "engine":
            if not self.engine_calls or self.engine_calls[-1] != package:
                self.engine_calls.append(package)
        elif FLOOR[package] < FLOOR[source] or (package in self.engine_calls
                                                and package not in _on_stack(back)):
            self.climbs.add((caller, name))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True, help="index folder to serve (copied)")
    parser.add_argument("--message", default="merge these pdf files into one")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp()) / "index"
    shutil.copytree(args.index, work)
    engine = Engine.open(work, load_config())
    query = RouteQuery(message=args.message, session_id="walk")
    engine.route_turn(query)  # caches warm, lazy imports done, the session claimed
    walk = Walk()
    sys.setprofile(walk.hook)
    try:
        engine.route_turn(query)
    finally:
        sys.setprofile(None)
        engine.close()
        shutil.rmtree(work.parent, ignore_errors=True)
    print(f"packages crossed: {len(walk.packages)} ({', '.join(sorted(walk.packages))})")
    print(f"the engine calls: {' > '.join(walk.engine_calls)}")
    print(f"climbs back: {len(walk.climbs)}")
    for caller, callee in sorted(walk.climbs):
        print(f"  {caller} -> {callee}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
