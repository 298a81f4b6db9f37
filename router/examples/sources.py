"""Every file source of example requests for one build, and how a build records them.

A build reads the evals and trigger-eval files of every skill folder and the catalog-level
``--examples`` files; their paths are kept in the manifest's settings so a Reindex reads the
same files again. Requests learned from traffic come in as ``extra`` (``Example`` records).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from router.common.workers import Workers
from router.examples.loading import Parsed, read_example_files, read_skill_examples
from router.examples.model import Example
from router.examples.selection import bound
from router.skills.model import Skill

SETTINGS_KEY = "examples"


def example_settings(paths: Iterable[str | Path]) -> dict[str, Any]:
    """The ``settings`` entry recording the catalog-level example files (absolute paths)."""
    return {SETTINGS_KEY: {"files": [str(Path(p).resolve()) for p in paths]}}


def files_from_settings(settings: Mapping[str, Any]) -> list[str]:
    data = settings.get(SETTINGS_KEY)
    found = data.get("files") if isinstance(data, Mapping) else None
    return [str(p) for p in found] if isinstance(found, list) else []


def gather(skills: Sequence[Skill], paths: Sequence[str | Path],
           extra: Sequence[Example] = (), workers: Workers | None = None) -> Parsed:
    """Examples from the skill folders (read over ``workers`` when there are many), then the
    files, then ``extra``, with diagnostics; curated rows past the catalog's bound are left out
    with a warning naming their file (``router.examples.selection.bound``)."""
    in_folders, folder_problems = read_skill_examples(skills, workers)
    in_files, file_problems = read_example_files(paths)
    kept, cut = bound([*in_folders, *in_files, *extra])
    return kept, [*folder_problems, *file_problems, *cut]
