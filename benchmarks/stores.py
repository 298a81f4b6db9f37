"""What recording a Route costs it, per feedback store: none (``feedback.enabled: false``),
the files in the index folder, and PostgreSQL (``feedback.store_url``). Each Route writes one
row, off the answer's path in both stores. With PostgreSQL a Route's session work (the claim
on a session's first turn, the turn count, what it was shown) is one statement, sent as the
turn starts and read when it reveals (``router.engine.sessions``); target: at most +0.3 ms
p50 over no store. The figure is each store's Route p50 less the p50 with no store, taken in
turn on the same index.

PostgreSQL is ``SKILL_ROUTER_BENCH_POSTGRES_DSN`` (a server where a database may be created)
when set, else the throwaway cluster the tests start (root, PostgreSQL 15 installed); without
either the PostgreSQL line says why it is missing.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks import measure as bench_measure
from router.config import Config
from router.engine import Engine
from router.routing.model import RouteQuery

DSN_ENV = "SKILL_ROUTER_BENCH_POSTGRES_DSN"
TURNS = 5  # Routes per session


@contextlib.contextmanager
def _postgres() -> Iterator[str]:
    """A database URL to record into; RuntimeError saying why there is none."""
    server = os.environ.get(DSN_ENV, "")
    if server:
        yield _database(server)
        return
    try:
        from tests.support.postgres import Cluster, _unavailable
    except ImportError as exc:  # an installed package without the tests
        raise RuntimeError(f"no {DSN_ENV} and no test cluster ({exc})") from None
    why = _unavailable()
    if why:
        raise RuntimeError(why)
    cluster = Cluster()
    try:
        cluster.start()
        yield _database(cluster.dsn)
    finally:
        cluster.stop()
        cluster.remove()


def _database(server: str) -> str:
    import psycopg

    name = f"bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server.rstrip("/") + "/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return server.rstrip("/") + "/" + name


def store_figures(root: Path, config: Config, texts: Sequence[str]) -> dict[str, Any]:
    """p50/p99 of a Route per store, and each store's p50 over the one with no store, in ms."""
    work = Path(tempfile.mkdtemp(prefix="skill-router-bench-stores-"))
    try:
        index = work / "index"  # a copy: its feedback/ folder is this figure's alone
        shutil.copytree(root, index, ignore=shutil.ignore_patterns("feedback"))
        off = replace(config, feedback=replace(config.feedback, enabled=False))
        spool = replace(config.feedback, spool_dir=str(work / "spool"))
        engines = {"route_store_none": Engine.open(index, off),
                   "route_store_files": Engine.open(index, config)}
        out: dict[str, Any] = {}
        with contextlib.ExitStack() as stack:
            try:
                url = stack.enter_context(_postgres())
                engines["route_store_postgresql"] = Engine.open(
                    index, replace(config, feedback=replace(spool, store_url=url)))
            except (RuntimeError, OSError) as exc:
                out["postgresql_missing"] = str(exc)

            def call(engine: Engine) -> Any:
                turns = itertools.count()  # conversations of TURNS turns: a new session's
                # first turn asks the database who owns it, the others do not

                def route(text: str) -> object:
                    session = f"bench-{next(turns) // TURNS}"
                    return engine.route(RouteQuery(message=text, session_id=session))
                return route

            out.update(bench_measure.interleaved(
                {name: call(engine) for name, engine in engines.items()}, texts))
            for engine in engines.values():
                engine.close()
        base = out["route_store_none"]["p50_ms"]
        for name in engines:
            out[name]["added_p50_ms"] = round(out[name]["p50_ms"] - base, 3)
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def store_rows(size: str, figures: dict[str, Any]) -> list[tuple[str, str]]:
    found = figures.get("stores")
    if not found:
        return []
    base = found.get("route_store_none", {}).get("p50_ms", 0.0)
    rows = [(f"{size:>7} {name}", f"p50 {f['p50_ms']:.2f} ms  p99 {f['p99_ms']:.2f} ms  "
             f"{f['added_p50_ms']:+.2f} ms over no store ({base:.2f})")
            for name, f in found.items() if isinstance(f, dict)]
    if "postgresql_missing" in found:
        rows.append((f"{size:>7} route_store_postgresql", f"not measured: "
                                                          f"{found['postgresql_missing']}"))
    return rows
