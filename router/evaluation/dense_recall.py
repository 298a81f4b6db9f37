"""An encoder alone on a labelled catalog: each request ranks every skill by the cosine of its
embedded text (``embedding_text``, as the index embeds it), with no BM25, no examples and no
gate, so two encoders compare as encoders (the product's own encoder against its base:
``skill-router train-encoder --validate-only DIR --catalog ROOT --queries FILE``). Requests
whose expected skills are not all in the catalog, or that expect none, are left out."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from router.encoders.base import Embedder
from router.encoders.tools_model.validation import Figures, figures
from router.evaluation.metrics import Labelled, split_of
from router.evaluation.runner import load_requests, root_discovery
from router.index.vectors import embedding_text
from router.skills.model import Skill
from router.skills.sources.base import create_source


def catalog(root: str | Path) -> list[Skill]:
    """The skills discovery finds under ``root`` alone, by name."""
    found = create_source().discover(root_discovery(root))
    return sorted({s.name: s for s in found.skills}.values(), key=lambda s: s.name)


def measure(skills: Sequence[Skill], requests: Sequence[Labelled],
            encoder: Embedder) -> dict[str, Figures]:
    """``encoder``'s figures over all scored requests and per split (train, validation)."""
    position = {s.name: i for i, s in enumerate(skills)}
    scored = [r for r in requests if r.expected and all(e in position for e in r.expected)]
    if not scored:
        return {}
    scores = encoder.encode([r.query for r in scored]) @ encoder.encode(
        [embedding_text(s) for s in skills]).T
    needed = [{position[e] for e in r.expected} for r in scored]
    out = {"all": figures(scores, needed)}
    for split in ("train", "validation"):
        rows = [i for i, r in enumerate(scored) if split_of(r.id) == split]
        if rows:
            out[split] = figures(scores[rows], [needed[i] for i in rows])
    return out


def on_root(root: str | Path, queries: str | Path, encoder: Embedder) -> dict[str, Figures]:
    return measure(catalog(root), load_requests(queries), encoder)
