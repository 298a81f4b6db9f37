"""Figures on the real-skill set: plain BM25 baselines and the product, ranked the same way.

    python -m scripts.realskills measure [--index DIR]

recall@k = mean over on-topic requests of |top-k ∩ expected| / |expected|; hit@1 = share whose
first skill is expected; all@5 = share with every expected skill in the top 5. ``--index``: also
the product, routing in process with that index (``skill-router eval --root`` builds it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

Request = dict[str, Any]
Rankings = dict[str, list[str]]

GROUPS: dict[str, Callable[[Request], bool]] = {
    "all": lambda r: True,
    "long": lambda r: "long" in r["tags"],
    "long, one skill": lambda r: "long" in r["tags"] and len(r["expected"]) == 1,
    "long, several": lambda r: "long" in r["tags"] and len(r["expected"]) > 1,
    "short": lambda r: "short" in r["tags"],
}


def figures(ranked: Rankings, requests: Iterable[Request]) -> dict[str, dict[str, float]]:
    """Per group of on-topic requests: n, R@5, R@10, hit@1, all@5 (pure)."""
    on = [r for r in requests if r["expected"]]
    out = {}
    for group, wanted in GROUPS.items():
        part = [r for r in on if wanted(r)]
        if not part:
            continue

        def recall(r: Request, k: int) -> float:
            return len(set(ranked[r["id"]][:k]) & set(r["expected"])) / len(r["expected"])

        n = len(part)
        out[group] = {"n": n, "R@5": sum(recall(r, 5) for r in part) / n,
                      "R@10": sum(recall(r, 10) for r in part) / n,
                      "hit@1": sum(ranked[r["id"]][:1] != [] and ranked[r["id"]][0]
                                   in r["expected"] for r in part) / n,
                      "all@5": sum(set(r["expected"]) <= set(ranked[r["id"]][:5])
                                   for r in part) / n}
    return out


def fields(row: dict[str, Any]) -> tuple[str, str, str]:
    """A catalog row's name, description (from its frontmatter) and body."""
    import yaml

    from router.skills.parse import split_frontmatter

    front, body = split_frontmatter(str(row["skill_md"]))
    meta = yaml.safe_load(front) if front else {}
    description = meta.get("description", "") if isinstance(meta, dict) else ""
    return str(row["name"]), " ".join(str(description or "").split()), body


def document(row: dict[str, Any], body_chars: int) -> str:
    """Name, description and the first ``body_chars`` characters of the body."""
    name, description, body = fields(row)
    return " ".join([name.replace("-", " "), description, body[:body_chars]])


def bm25_search(rows: Sequence[dict[str, Any]], requests: Sequence[Request], body_chars: int,
                depth: int) -> tuple[Any, Any]:
    """Plain BM25 (bm25s, English stopwords) over each row's ``document``: per request the
    ``depth`` best rows and their scores, best first."""
    import bm25s

    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize([document(r, body_chars) for r in rows],
                                   stopwords="en", show_progress=False), show_progress=False)
    tokens = bm25s.tokenize([str(r["query"]) for r in requests], stopwords="en",
                            show_progress=False)
    return retriever.retrieve(tokens, k=depth, show_progress=False)


def bm25_rankings(rows: Sequence[dict[str, Any]], requests: Sequence[Request],
                  body_chars: int, depth: int = 10) -> Rankings:
    names = [str(r["name"]) for r in rows]
    docs, _ = bm25_search(rows, requests, body_chars, depth)
    return {str(r["id"]): [names[i] for i in docs[n]] for n, r in enumerate(requests)}


def product_rankings(index_dir: Path, requests: Sequence[Request]) -> Rankings:
    from router.config import load_config
    from router.engine import Engine
    from router.evaluation import runner
    from router.evaluation.metrics import Labelled

    engine = Engine.open(index_dir, load_config())
    labelled = [Labelled(id=str(r["id"]), query=str(r["query"]),
                         expected=tuple(r["expected"]), tags=tuple(r["tags"]))
                for r in requests]
    return {o.request.id: list(o.ranked) for o in runner.run(engine, labelled)}


def table(results: dict[str, dict[str, dict[str, float]]]) -> str:
    """Markdown: one row per method and group."""
    lines = ["| method | requests | n | R@5 | R@10 | hit@1 | all@5 |",
             "|---|---|---|---|---|---|---|"]
    for method, groups in results.items():
        for group, f in groups.items():
            lines.append(f"| {method} | {group} | {f['n']:.0f} | {f['R@5']:.3f} "
                         f"| {f['R@10']:.3f} | {f['hit@1']:.3f} | {f['all@5']:.3f} |")
    return "\n".join(lines)
