"""Where a Route over gRPC spends its time: the server's own part and the wire's.

Every answered call carries the server's own time in its ``server-timing`` trailing metadata
(``handler;dur=<ms>``: from the server taking the call to its answer, ``router.service
.interceptors``). A Route timed by the client, less that, is what the wire and gRPC's own
machinery cost both ways (the client's stub, HTTP/2 on loopback, the server's thread hop, the
serialisation of the answer). The server's own time beside the in-process Route of the same
run shows what the Engine costs inside the server process, which sits idle between calls.
The pairs come from ``benchmarks.measure.grpc_route_call(address, pairs)``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

JSON_BOUND_MS = 1.0  # Route over the JSON door may cost at most this over gRPC (p50)
DOOR_BOUND_MS = 1.0  # Route over gRPC may cost at most this over in-process (p50)


def split_figures(pairs: Sequence[tuple[float, float]], warmup: int = 3) -> dict[str, float]:
    """p50s in ms of the server's own time and of the rest (client time less it, per call),
    leaving out the first ``warmup`` calls."""
    kept = np.asarray(pairs[warmup:], dtype=np.float64).reshape(-1, 2) * 1000.0
    if not len(kept):
        return {"handler_p50_ms": 0.0, "wire_p50_ms": 0.0, "n": 0}
    return {"handler_p50_ms": round(float(np.percentile(kept[:, 1], 50)), 3),
            "wire_p50_ms": round(float(np.percentile(kept[:, 0] - kept[:, 1], 50)), 3),
            "n": len(kept)}


def door_rows(size: str, f: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """gRPC over in-process, and the split of the gRPC Route (runs before the split: none)."""
    inside, grpc_p50 = f["route_in_process"]["p50_ms"], f["route_grpc"]["p50_ms"]
    door = grpc_p50 - inside
    yield (f"{size:>7} gRPC p50 over in-process p50",
           f"{door:+.2f} ms (in-process {inside:.2f}, gRPC {grpc_p50:.2f} ms; "
           f"target <= +{DOOR_BOUND_MS:.2f})")
    split = f.get("grpc_split")
    if split and split.get("n"):
        yield (f"{size:>7} gRPC: the server's own p50",
               f"{split['handler_p50_ms']:.2f} ms ({split['handler_p50_ms'] - inside:+.2f} "
               f"over in-process); wire and gRPC both ways p50 {split['wire_p50_ms']:.2f} ms")
    if "route_json" in f:  # runs from before the JSON door lack it
        over = f["route_json"]["p50_ms"] - grpc_p50
        verdict = "within" if over <= JSON_BOUND_MS else "OVER"
        yield (f"{size:>7} json p50 - grpc p50",
               f"{over:+.2f} ms ({verdict} the {JSON_BOUND_MS:.1f} ms bound)")
