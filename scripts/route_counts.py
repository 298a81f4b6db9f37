"""Count (not time) an in-process Route against its bare encode, under valgrind's callgrind.

    PYTHONPATH=. valgrind --tool=callgrind --instr-atstart=no --cache-sim=yes \\
        [--LL=2097152,16,64] --callgrind-out-file=/tmp/counts/callgrind.out.%p \\
        .venv/bin/python scripts/route_counts.py INDEX_DIR [N]
    grep -H -E '^(desc: Trigger|totals)' /tmp/counts/callgrind.out.*.*

Three phases of N calls each (default 20), one-sentence benchmark requests, each phase its
own: bare encodes, Routes whose embedding is cached, Routes whose embedding is not. Only the
phases are instrumented (``callgrind_control -i on``), each dumped apart (``bare``,
``cached``, ``uncached``); the totals' events are Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw.
``--LL`` sets the simulated last level (by default the host's last-level cache).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence

from benchmarks import catalog as bench_catalog
from router.calibration.fusion_terms import FusionConfig
from router.config import load_config
from router.engine import Engine
from router.routing.fusion import query_views
from router.routing.model import RouteQuery


def _control(*args: str) -> None:
    subprocess.run(["callgrind_control", *args, str(os.getpid())], check=True,
                   capture_output=True)


def _phase(name: str, call: Callable[[str], object], texts: Sequence[str]) -> None:
    _control("-z")
    _control("-i", "on")
    for text in texts:
        call(text)
    _control("-i", "off")
    _control("-d", name)


def main(index_dir: str, count: int) -> None:
    engine = Engine.open(index_dir, load_config())
    engine.warm_up()
    fusion = FusionConfig()
    one = [m for m in bench_catalog.requests(3000)[1000:]
           if len(query_views(m, fusion)) == 1][:3 * count]
    bare, cached, fresh = one[:count], one[count:2 * count], one[2 * count:]

    def route(text: str) -> object:
        return engine.route(RouteQuery(message=text))

    def encode(text: str) -> object:
        return engine.embedder.encode([text])

    for text in (*bare[:3], *cached):  # the cached phase's embeddings, and a warm path
        route(text)
    _phase("bare", encode, bare)
    _phase("cached", route, cached)
    _phase("uncached", route, fresh)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 20)
