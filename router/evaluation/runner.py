"""Run a labelled request set through the Engine (the same code path as the Route RPC)."""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from router.builder.recipe import Recipe, Sources
from router.config import Config, DiscoveryConfig
from router.engine import Engine
from router.errors import InvalidRequest
from router.evaluation.metrics import Labelled, Outcome, Scores, score, split_of
from router.examples.model import Example
from router.routing.model import Reason, RouteQuery

log = logging.getLogger(__name__)

RANK_DEPTH = 10  # MRR@10 needs ten ranked skills


def load_requests(path: str | Path) -> list[Labelled]:
    """Read ``{"id", "query", "expected", "history"?, "tags"?}`` JSON lines (``skills`` is
    read for ``expected``, so an examples file is a request file; other keys are ignored)."""
    out = []
    for lineno, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row: dict[str, Any] = json.loads(line)
            out.append(Labelled(id=str(row.get("id", f"{Path(path).name}:{lineno}")),
                                query=str(row["query"]),
                                expected=tuple(row.get("expected", row.get("skills")) or ()),
                                history=tuple(row.get("history") or ()),
                                tags=tuple(row.get("tags") or ())))
        except (ValueError, KeyError, TypeError) as exc:
            raise InvalidRequest(f"{path}:{lineno}: not a labelled request: {exc}") from exc
    return out


def root_discovery(root: str | Path) -> DiscoveryConfig:
    """Discovery of the skills under ``root`` alone (no project or home folders)."""
    return DiscoveryConfig(project_dir=None, home_dir=None, bundled_roots=(str(root),))


def cache_slug(root: str | Path) -> str:
    """The name of ``root``'s folder in an eval cache (the tail of its resolved path)."""
    return re.sub(r"[^A-Za-z0-9]+", "-", str(Path(root).resolve())).strip("-")[-60:]


def index_for_root(root: str | Path, config: Config, cache_dir: str | Path,
                   progress: bool = False, examples: Sequence[Example] = ()) -> Path:
    """Discover skills under ``root`` and (re)build an index in ``cache_dir``, with
    ``examples`` besides those in the skill folders.

    Unchanged descriptions reuse their cached embeddings, so a repeat run is quick.
    """
    target = Path(cache_dir) / cache_slug(root)
    recipe = Recipe.for_index(config, root_discovery(root), target, progress=progress)
    recipe.build(Sources(examples=tuple(examples), traffic=False))
    return target


def run(engine: Engine, requests: Iterable[Labelled], top_k: int = 0) -> list[Outcome]:
    """Route every request as a gateway would (``top_k`` 0 = the server default) for catalog
    size and latency, then again at depth 10 (embedding cached) for the ranking metrics."""
    outcomes = []
    for req in requests:
        started = time.perf_counter()
        shown = engine.route(RouteQuery(message=req.query, history=req.history, top_k=top_k))
        elapsed = (time.perf_counter() - started) * 1000
        deep = engine.route(RouteQuery(message=req.query, history=req.history,
                                       top_k=max(top_k, RANK_DEPTH)))
        ranked = tuple(s.name for s in deep.skills if s.reason is not Reason.ALWAYS_ON)
        always = tuple(s.name for s in shown.skills if s.reason is Reason.ALWAYS_ON)
        outcomes.append(Outcome(req, ranked, shown.catalog_chars, shown.full_catalog_chars,
                                elapsed, always))
    return outcomes


def by_split(outcomes: Sequence[Outcome]) -> dict[str, Scores]:
    """Scores for the train split, the validation split, and all requests."""
    parts = {"train": [o for o in outcomes if split_of(o.request.id) == "train"],
             "validation": [o for o in outcomes if split_of(o.request.id) == "validation"],
             "all": list(outcomes)}
    return {name: score(part) for name, part in parts.items() if part}


def by_tag(outcomes: Sequence[Outcome]) -> dict[str, Scores]:
    tags = sorted({t for o in outcomes for t in o.request.tags})
    return {t: score([o for o in outcomes if t in o.request.tags]) for t in tags}


def format_table(rows: dict[str, Scores], title: str,
                 columns: Sequence[str] | None = None) -> str:
    """``rows`` as an aligned text table under ``title``; ``columns``: only these figures."""
    if not rows:
        return f"{title}: no requests"
    figures = {name: {k: v for k, v in s.row().items() if columns is None or k in columns}
               for name, s in rows.items()}
    header = ["split", *next(iter(figures.values())).keys()]
    body = [[name, *(str(v) for v in row.values())] for name, row in figures.items()]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    lines = [title, "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in body]
    return "\n".join(lines)
