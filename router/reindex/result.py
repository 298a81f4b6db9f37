"""What a Reindex did (``ReindexResult``, which the engine returns and the service encodes) and
the counters of the reindexes and reloads of a server (``ReindexStats``, exported as metrics)."""

from __future__ import annotations

from dataclasses import dataclass

from router.builder.recorded import Changes
from router.skills.model import Diagnostic


@dataclass(frozen=True)
class ReindexResult:
    index_version: str  # the version served afterwards
    changes: Changes
    duration_seconds: float
    diagnostics: tuple[Diagnostic, ...]
    swapped: bool


@dataclass
class ReindexStats:
    """Counters an operator wants to see (exported as metrics)."""

    runs: int = 0
    failures: int = 0
    load_failures: int = 0  # new versions found on disk that were refused
    last_duration_seconds: float = 0.0
    last_result: ReindexResult | None = None
