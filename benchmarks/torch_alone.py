"""The floor's torch encode timed alone in a fresh process, under the OpenMP wait policy its
environment gives (the benchmark runs it with libgomp's default): one ``encode([message])``
at a time at 1 and 2 threads. ``python -m benchmarks.torch_alone MODEL`` reads a JSON list of
messages on stdin and writes ``{"torch_1t": {...}, "torch_2t": {...}}`` on stdout."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from benchmarks import measure as bench_measure
from benchmarks.openmp import child_env, policy_of
from router.encoders.base import Embedder


def per_thread(torch: Embedder, parts: dict[int, list[str]]) -> dict[str, Any]:
    """``torch_<n>t``: p50/p99 of one ``encode([message])`` of each of ``parts[n]`` with torch
    at ``n`` CPU threads (torch is left at the last count)."""
    import torch as torch_lib

    out: dict[str, Any] = {}
    for threads, part in parts.items():
        torch_lib.set_num_threads(threads)
        out[f"torch_{threads}t"] = bench_measure.latencies(lambda t: torch.encode([t]), part)
    return out


def measure(model: str, messages: list[str]) -> dict[str, Any]:
    """Per thread count, p50/p99 of one encode of each message (messages split in two)."""
    from router.encoders.factory import make_embedder

    half = len(messages) // 2
    return per_thread(make_embedder(model, backend="torch"),
                      {1: messages[:half], 2: messages[half:]})


def in_child(model: str, messages: list[str], timeout: float = 300.0) -> dict[str, Any]:
    """``measure`` in a child process with the benchmark's starting environment."""
    env = child_env()
    done = subprocess.run([sys.executable, "-m", "benchmarks.torch_alone", model],
                          input=json.dumps(messages), capture_output=True, text=True,
                          env=env, timeout=timeout, check=True)
    out: dict[str, Any] = json.loads(done.stdout)
    out["omp_wait_policy"] = policy_of(env)
    return out


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1], json.loads(sys.stdin.read()))))
