"""What one benchmark run measures."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from router.config import DEFAULT_MODEL


@dataclass(frozen=True)
class BenchOptions:
    sizes: tuple[int, ...] = (1_000, 10_000, 100_000)
    quick: bool = False
    out_dir: Path = Path("bench_results")
    model: str = DEFAULT_MODEL
    seed: int = 7
    build_size: int = 1_000  # skills embedded for real to measure the build rate
    embed_limit: int | None = None  # skills past this get derived vectors (see skill_vectors)
    query_backend: str = "onnx-int8"  # index.query_backend of the Routes measured

    @property
    def requests(self) -> int:
        return 40 if self.quick else 200
