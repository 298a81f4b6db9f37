"""A catalog drawn from a labelled one, to measure "nothing fits" on real requests.

``skill-router eval --draw N`` copies ``N`` of the ``--root`` catalog's skill folders (a seeded
sample) into the eval cache and routes the labelled requests against them. A request all of
whose expected skills were drawn is on-topic and scored as usual; one none of whose skills
was drawn asks for something the drawn catalog does not do, so it is relabelled with no
expected skill (tag ``nothing_fits``) and counts in the "nothing" column (the share given no
retrieved skill); one with some of its skills drawn is left out. Unlike everyday off-topic
requests these are requests for tools, in the catalog's own style, often with a sibling tool
in the catalog: the hard case of the relevance gate (docs/routing-quality.md).
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from router.errors import InvalidRequest
from router.evaluation.metrics import Labelled
from router.evaluation.runner import cache_slug, root_discovery
from router.skills.sources.base import create_source

NOTHING_FITS = "nothing_fits"  # the tag of a relabelled request
MARKER = ".drawn.json"  # the drawn names, written last: a folder without it is redrawn


@dataclass(frozen=True)
class Drawn:
    """The drawn catalog's folder and skill names."""

    root: Path
    names: frozenset[str]


def draw(root: str | Path, count: int, seed: int, cache: str | Path) -> Drawn:
    """Copy ``count`` skills of the catalog under ``root`` (a sample seeded by ``seed``) into a
    folder of ``cache``; a folder already holding that draw is reused."""
    found = create_source("disk").discover(root_discovery(root)).skills  # folders, copied
    folders = {s.name: Path(s.base_dir) for s in found}
    if not 0 < count < len(folders):
        raise InvalidRequest(f"--draw must be between 1 and {len(folders) - 1} (the catalog "
                             f"under {root} holds {len(folders)} skills), not {count}")
    names = sorted(random.Random(seed).sample(sorted(folders), count))
    target = Path(cache) / f"drawn-{cache_slug(root)}-{count}-{seed}"
    marker = target / MARKER
    if marker.is_file() and json.loads(marker.read_text(encoding="utf-8")) == names:
        return Drawn(target, frozenset(names))
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for name in names:
        shutil.copytree(folders[name], target / name, symlinks=True)
    marker.write_text(json.dumps(names), encoding="utf-8")
    return Drawn(target, frozenset(names))


def relabel(requests: Sequence[Labelled], drawn: frozenset[str]) -> list[Labelled]:
    """On-topic requests (every expected skill drawn) as they are; requests none of whose
    skills was drawn with no expected skill, tagged ``nothing_fits``; the rest left out.
    Requests labelled off-topic already stay as they are."""
    out = []
    for request in requests:
        wanted = set(request.expected)
        if wanted <= drawn:
            out.append(request)
        elif not wanted & drawn:
            out.append(replace(request, expected=(), tags=(*request.tags, NOTHING_FITS)))
    return out
