"""Skills for the tests: SKILL.md writers, in-memory ``Skill`` records, the catalog the service
tests serve, and a skills tree on disk with bundled files, a callable skill and hostile links."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from router.skills.limits import RESOURCE_MAX_BYTES
from router.skills.model import Diagnostic, Level, Skill

# --- SKILL.md on disk ------------------------------------------------------------------------

DESCRIPTION = "Extracts things from files. Use when the user asks for it."
TOPICS = ("PDF files and tables", "git commit messages", "CSV spreadsheets and charts",
          "Docker images and containers", "SQL queries and schemas", "email drafts and replies")


def write_skill(folder: Path, name: str | None = None, description: str | None = DESCRIPTION,
                *, body: str = "# Steps\n\nDo it.\n", extra: str = "",
                filename: str = "SKILL.md") -> Path:
    """Write ``folder/filename`` (front matter: ``name``, default the folder's name; then
    ``description`` unless empty; then the raw ``extra`` lines) and return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    desc = f"description: {description}\n" if description else ""
    path = folder / filename
    path.write_text(f"---\nname: {name or folder.name}\n{desc}{extra}---\n{body}",
                    encoding="utf-8")
    return path


def add_skill(root: Path, name: str, description: str) -> Path:
    """``root/name/SKILL.md`` with a title and one step (rewritten if it is there)."""
    return write_skill(root / name, name, description, body=f"# {name}\n\nSteps.\n")


def write_catalog(root: Path, count: int = len(TOPICS)) -> Path:
    """``count`` skills named ``skill-<i>`` about rotating topics under ``root``."""
    for i in range(count):
        add_skill(root, f"skill-{i}", f"Handles {TOPICS[i % len(TOPICS)]} (variant {i}).")
    return root


# --- in-memory records -------------------------------------------------------------------------


def skill_record(name: str, description: str, *, root: str = "/srv/skills",
                 **fields: Any) -> Skill:
    """A ``Skill`` at ``root/name/SKILL.md``; ``content_hash`` is the name unless given."""
    fields.setdefault("content_hash", name)
    return Skill(name=name, description=description, location=f"{root}/{name}/SKILL.md",
                 base_dir=f"{root}/{name}", **fields)


PDF = "Extracts text and tables from PDF files, fills PDF forms and merges PDF documents."
# The catalog the service tests serve: routable skills and one of each kind never routed.
SKILLS: tuple[Skill, ...] = (
    skill_record("house-style", "Applies the house writing style to every answer.",
                 always_on=True),
    skill_record("pdf-tools", PDF + " Use when working with PDF files."),
    skill_record("csv-analyst", "Analyses CSV spreadsheets: summary statistics, pivots, charts."),
    skill_record("git-helper", "Writes git commit messages and explains git history."),
    skill_record("docker-deploy", "Builds Docker images and deploys containers to a cluster."),
    skill_record("pdf-legacy", PDF + " Old version.", deprecated=True),
    skill_record("pdf-disabled", PDF + " Switched off.", enabled=False),
    skill_record("pdf-manual", PDF + " Only on request.", model_invocable=False),
)
DIAGNOSTICS: tuple[Diagnostic, ...] = (
    Diagnostic(Level.WARNING, "/srv/skills/Odd/SKILL.md", "name 'odd' does not match folder"),
    Diagnostic(Level.ERROR, "/srv/skills/broken/SKILL.md", "description is missing"),
)
# Only skills that are never routed: any message gives an empty catalog.
UNROUTABLE: tuple[Skill, ...] = tuple(s for s in SKILLS if not s.routable)
FILTERED = frozenset(s.name for s in UNROUTABLE)

# --- the skills tree ---------------------------------------------------------------------------

SECRET = "TOP SECRET: outside every skill directory"
TREE_PDF_BODY = "# PDF tools\n\nUse pdfplumber to extract tables. Run `scripts/extract.py FILE`."
MEETING_SCHEMA = {
    "type": "object",
    "properties": {
        "date": {"type": "string", "format": "date", "description": "Day of the meeting."},
        "attendees": {"type": "integer", "minimum": 1},
        "room": {"type": "string", "enum": ["small", "large"]},
        "minutes": {"type": "integer", "default": 30},
    },
    "required": ["date", "attendees"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Tree:
    """Where the pieces of the tree are."""

    root: Path  # the skills root
    secret: Path  # a file outside every skill directory
    index: Path


def _tree_skill(root: Path, name: str, description: str, body: str, extra: str = "") -> Path:
    return write_skill(root / name, name, description, body=f"\n{body}\n", extra=extra).parent


def write_tree(base: Path) -> Tree:
    """Write the skills tree under ``base`` and return its paths (index not built yet)."""
    root, secret = base / "skills", base / "secret.txt"
    secret.write_text(SECRET, encoding="utf-8")
    (base / "outside").mkdir()
    (base / "outside" / "notes.md").write_text(SECRET, encoding="utf-8")
    pdf = _tree_skill(root, "pdf-tools", "Extracts text and tables from PDF files and merges "
                      "PDF documents. Use when working with PDF files.", TREE_PDF_BODY)
    (pdf / "scripts").mkdir()
    (pdf / "scripts" / "extract.py").write_text("print('tables')\n", encoding="utf-8")
    (pdf / "references").mkdir()
    (pdf / "references" / "guide.md").write_text("# Guide\n", encoding="utf-8")
    _tree_skill(root, "git-helper", "Writes git commit messages and explains git history.",
                "# Git\n\nWrite the subject in the imperative.")
    _tree_skill(root, "user-only", "Deploys to production on explicit request only.",
                "# Deploy\n\nAsk before deploying.", "disable-model-invocation: true\n")
    _tree_skill(root, "model-only", "Formats tables of release statistics for reports.",
                "# Stats\n\nAlign numbers right.", "user-invocable: false\n")
    _tree_skill(root, "switched-off", "Analyses CSV spreadsheets.", "# CSV", "enabled: false\n")
    escape = _tree_skill(root, "escape-links", "Summarises meeting notes into action items.",
                         "# Notes\n\nList owners and dates.")
    (escape / "leak.txt").symlink_to(secret)
    (escape / "linked").symlink_to(base / "outside", target_is_directory=True)
    big = _tree_skill(root, "big-data", "Loads very large data exports.", "# Big")
    with open(big / "data.bin", "wb") as fh:
        fh.truncate(RESOURCE_MAX_BYTES + 1)  # sparse: one byte over the cap, nothing written
    meeting = root / "book-meeting"
    meeting.mkdir()
    (meeting / "manifest.json").write_text(json.dumps({
        "name": "book-meeting",
        "description": "Books a meeting room for a date and a number of attendees.",
        "parameters": MEETING_SCHEMA}), encoding="utf-8")
    return Tree(root=root, secret=secret, index=base / "index")
