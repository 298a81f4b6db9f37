"""Read example requests from every file source: pure parsers plus thin readers.

* A skill folder's ``evals/evals.json`` (the skill-creator format: ``{"skill_name", "evals":
  [{"id", "prompt", ...}]}``): every ``prompt`` is a positive example of that skill.
* A skill folder's trigger-eval file (``evals/trigger_evals.json``, ``evals/trigger-eval.json``,
  ``evals/trigger_eval.json`` or ``evals/trigger-evals.json``): a JSON list of
  ``{"query", "should_trigger"}`` (skill-creator's eval set; ``prompt`` is read for ``query``,
  and ``{"queries": [...]}`` / ``{"evals": [...]}`` wrappers are accepted). A should-trigger
  query is a positive example, a should-not-trigger query a negative one.
* A catalog-level file (``skill-router index --examples FILE``): JSON lines
  ``{"query": "...", "skills": ["name", ...]}``; ``"skills": []`` is a request no skill should
  take. Extra keys (``id``, ...) are ignored.

A malformed file or line is a diagnostic, never an exception: what can be read is kept.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from router.common.workers import Workers
from router.examples.model import Example, ExampleSource
from router.skills.model import Diagnostic, Level, Skill

EVALS_FILE = "evals/evals.json"
TRIGGER_FILES = ("evals/trigger_evals.json", "evals/trigger-eval.json",
                 "evals/trigger_eval.json", "evals/trigger-evals.json")
MAX_QUERY_CHARS = 2_000  # longer texts are cut: an example is a request, not a document

Parsed = tuple[list[Example], list[Diagnostic]]


def _warn(origin: str, message: str) -> Diagnostic:
    return Diagnostic(Level.WARNING, origin, message)


def _query(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return " ".join(value.split())[:MAX_QUERY_CHARS]


def _json(text: str, origin: str) -> tuple[Any, list[Diagnostic]]:
    try:
        return json.loads(text), []
    except ValueError as exc:
        return None, [_warn(origin, f"not JSON, examples ignored: {exc}")]


def parse_evals(text: str, skill: str, origin: str) -> Parsed:
    """The prompts of a skill-creator ``evals/evals.json`` as positive examples of ``skill``."""
    data, problems = _json(text, origin)
    if problems:
        return [], problems
    items = data.get("evals") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return [], [_warn(origin, 'expected an object with an "evals" list; examples ignored')]
    out: list[Example] = []
    diagnostics: list[Diagnostic] = []
    for i, item in enumerate(items):
        query = _query(item.get("prompt")) if isinstance(item, dict) else None
        if query is None:
            diagnostics.append(_warn(origin, f"evals[{i}] has no prompt text; skipped"))
            continue
        out.append(Example(query, (skill,), (), ExampleSource.EVALS, origin))
    return out, diagnostics


def parse_trigger_evals(text: str, skill: str, origin: str) -> Parsed:
    """A trigger-eval set: should-trigger queries are positives, the others negatives."""
    data, problems = _json(text, origin)
    if problems:
        return [], problems
    if isinstance(data, dict):
        data = data.get("queries", data.get("evals"))
    if not isinstance(data, list):
        return [], [_warn(origin, 'expected a list of {"query", "should_trigger"}; '
                                  "examples ignored")]
    out: list[Example] = []
    diagnostics: list[Diagnostic] = []
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            diagnostics.append(_warn(origin, f"item {i} is not an object; skipped"))
            continue
        query = _query(item.get("query", item.get("prompt")))
        trigger = item.get("should_trigger")
        if query is None or not isinstance(trigger, bool):
            diagnostics.append(_warn(origin, f"item {i} needs a query and a true/false "
                                             "should_trigger; skipped"))
            continue
        pos, neg = ((skill,), ()) if trigger else ((), (skill,))
        out.append(Example(query, pos, neg, ExampleSource.TRIGGER, origin))
    return out, diagnostics


def parse_example_lines(text: str, origin: str) -> Parsed:
    """A catalog-level examples file (JSON lines ``{"query", "skills"}``)."""
    out: list[Example] = []
    diagnostics: list[Diagnostic] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{origin}:{lineno}"
        try:
            row = json.loads(line)
        except ValueError as exc:
            diagnostics.append(_warn(where, f"not JSON; line skipped: {exc}"))
            continue
        query = _query(row.get("query")) if isinstance(row, dict) else None
        skills = row.get("skills") if isinstance(row, dict) else None
        if query is None or not isinstance(skills, list) \
                or not all(isinstance(s, str) and s for s in skills):
            diagnostics.append(_warn(where, 'needs "query" (text) and "skills" (a list of '
                                            "names, [] for none); line skipped"))
            continue
        out.append(Example(query, tuple(dict.fromkeys(skills)), (), ExampleSource.FILE, origin))
    return out, diagnostics


def _folder_examples(base_dir: str, skill: str) -> Parsed:
    out: list[Example] = []
    diagnostics: list[Diagnostic] = []
    folder = Path(base_dir)
    if not (folder / "evals").is_dir():  # every file below is in evals/: one look, not five
        return out, diagnostics
    for rel, parse in ((EVALS_FILE, parse_evals),
                       *((t, parse_trigger_evals) for t in TRIGGER_FILES)):
        path = folder / rel
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            diagnostics.append(_warn(str(path), f"unreadable, examples ignored: {exc}"))
            continue
        found, problems = parse(text, skill, str(path))
        out += found
        diagnostics += problems
    return out, diagnostics


def _folders_examples(jobs: list[tuple[str, str]]) -> list[Parsed]:
    return [_folder_examples(base_dir, skill) for base_dir, skill in jobs]


def read_skill_examples(skills: Iterable[Skill], workers: Workers | None = None) -> Parsed:
    """Examples from every skill folder's evals and trigger-eval files (the folders read over
    ``workers`` when there are many; same result)."""
    jobs = [(s.base_dir, s.key) for s in skills]
    parsed = workers.map(_folders_examples, jobs) if workers is not None \
        else _folders_examples(jobs)
    out: list[Example] = []
    diagnostics: list[Diagnostic] = []
    for found, problems in parsed:
        out += found
        diagnostics += problems
    return out, diagnostics


def read_example_files(paths: Sequence[str | Path]) -> Parsed:
    """Examples from catalog-level files; a missing or unreadable file is a diagnostic."""
    out: list[Example] = []
    diagnostics: list[Diagnostic] = []
    for path in paths:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            diagnostics.append(_warn(str(path), f"examples file unreadable, ignored: {exc}"))
            continue
        found, problems = parse_example_lines(text, str(path))
        out += found
        diagnostics += problems
    return out, diagnostics


def fingerprint(examples: Iterable[Example]) -> str:
    """A digest of what examples say (order-independent), to tell a Reindex they changed
    (passed-over skills only where there are some: the digests of before are unchanged)."""
    rows = sorted(json.dumps([e.query, sorted(e.skills), sorted(e.negatives),
                              *([sorted(e.passed_over)] if e.passed_over else [])])
                  for e in examples)
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()
