"""Synthetic skill catalogs and user requests for the benchmark (deterministic for a seed).

Descriptions are composed from verbs × objects × contexts × triggers, so 100,000 skills all
read differently (no duplicates) yet look like real "what it does; when to use it" text.
"""

from __future__ import annotations

import hashlib
import random
import re

from router.skills.model import Skill

VERBS = (
    "analyse", "archive", "audit", "benchmark", "classify", "clean", "compare", "compress",
    "convert", "deduplicate", "deploy", "diagnose", "document", "draft", "encrypt", "estimate",
    "export", "extract", "forecast", "format", "generate", "geocode", "import", "index",
    "inspect", "label", "lint", "merge", "migrate", "monitor", "normalise", "optimise", "parse",
    "plan", "plot", "profile", "publish", "query", "reconcile", "refactor", "render", "repair",
    "resize", "review", "rotate", "sanitise", "scan", "schedule", "score", "search", "sign",
    "simulate", "sort", "split", "summarise", "sync", "tag", "test", "transcribe", "translate",
    "validate", "visualise",
)
OBJECTS = (
    "invoices", "purchase orders", "bank statements", "payroll records", "tax returns",
    "sales leads", "support tickets", "customer reviews", "survey responses", "contracts",
    "meeting notes", "calendar events", "email threads", "chat transcripts", "slide decks",
    "spreadsheets", "CSV exports", "JSON logs", "server metrics", "access logs", "SQL schemas",
    "database backups", "Docker images", "Kubernetes manifests", "Terraform plans",
    "CI pipelines", "pull requests", "unit tests", "API specifications", "GraphQL queries",
    "protobuf definitions", "Python notebooks", "machine learning models", "training datasets",
    "feature flags", "release notes", "changelogs", "user stories", "design mockups",
    "SVG icons", "product photos", "podcast audio", "video subtitles", "PDF reports",
    "scanned receipts", "legal filings", "patent abstracts", "research papers", "citations",
    "lab results", "clinical notes", "shipping labels", "inventory counts", "warehouse routes",
    "fleet telemetry", "energy readings", "weather forecasts", "satellite images", "GPS tracks",
    "floor plans", "recipes", "travel itineraries", "hotel bookings", "flight schedules",
    "job postings", "candidate resumes", "interview feedback", "course syllabi", "exam papers",
    "grant proposals", "press releases", "social media posts", "ad campaigns", "SEO keywords",
    "web pages", "sitemaps", "DNS records", "TLS certificates", "firewall rules",
    "vulnerability reports", "incident timelines", "on-call rotas", "budget forecasts",
)
CONTEXTS = (
    "for a monthly close", "across several regions", "in a shared drive", "from a data lake",
    "before a release", "after an outage", "for an audit trail", "in a staging environment",
    "for a board meeting", "with strict privacy rules", "on a nightly schedule",
    "for a small business", "in a regulated industry", "for a mobile app", "at scale",
    "for a research team", "in multiple languages", "for accessibility checks",
    "with a fixed budget", "during onboarding", "for a quarterly review", "in a monorepo",
    "for a marketplace", "from legacy systems", "for a compliance report", "in real time",
    "for field engineers", "for a classroom", "for a newsroom", "for a hospital ward",
)
TRIGGERS = (
    "the user mentions {obj} or asks to {verb} them",
    "a request involves {obj} that someone needs to {verb}",
    "someone wants {obj} handled {ctx}",
    "the task is to {verb} {obj}, even if they do not name this skill",
    "working with {obj} and the goal is to {verb}",
)
ROUNDS = (  # the sentence added to every skill of the 2nd, 3rd, ... pass over the combinations
    "Works from the command line", "Reports progress in a chat thread",
    "Keeps a dry-run mode for reviewers", "Writes its results to a shared folder",
    "Asks before overwriting anything", "Logs each step for later replay",
    "Runs inside a container", "Sends a summary by email",
)
REQUESTS = (
    "Can you {verb} the {obj} {ctx}?",
    "I need to {verb} our {obj} {ctx}, please.",
    "Please {verb} these {obj}. It is {ctx}.",
    "Help me {verb} {obj} {ctx}",
    "We have a pile of {obj}; {verb} them {ctx}.",
)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _combos(rng: random.Random) -> list[tuple[str, str, str, int]]:
    combos = [(v, o, c, t) for v in VERBS for o in OBJECTS for c in CONTEXTS
              for t in range(len(TRIGGERS))]
    rng.shuffle(combos)
    return combos


def catalog(size: int, seed: int = 7) -> list[Skill]:
    """``size`` distinct skills, the same for the same seed. The first ``len(combos)``
    (771,900) use each verb x object x context x trigger once; each further round goes through
    them again with one more sentence (``ROUNDS``), so a catalog of up to ~6.9M skills still
    has no two descriptions alike, and its first skills are those of a smaller one."""
    rng = random.Random(seed)
    combos = _combos(rng)
    limit = len(combos) * (1 + len(ROUNDS))
    if size > limit:
        raise ValueError(f"at most {limit} synthetic skills; asked for {size}")
    skills = []
    for n in range(size):
        lap = n // len(combos)
        verb, obj, ctx, trig = combos[n % len(combos)]
        when = TRIGGERS[trig].format(obj=obj, verb=verb, ctx=ctx)
        extra = f" {ROUNDS[lap - 1]}." if lap else ""
        description = (f"{verb.capitalize()} {obj} {ctx}. Use when {when}. "
                       f"Handles edge cases #{n % 97}.{extra}")
        name = f"{_slug(verb)}-{_slug(obj)}-{n}"
        skills.append(synthetic_skill(name, description))
    return skills


def synthetic_skill(name: str, description: str) -> Skill:
    """A Skill record that exists only in memory (no SKILL.md on disk)."""
    digest = hashlib.sha256(f"{name}\n{description}".encode()).hexdigest()
    return Skill(name=name, description=description, location=f"/synthetic/{name}/SKILL.md",
                 base_dir=f"/synthetic/{name}", content_hash=digest)


def requests(count: int, seed: int = 11) -> list[str]:
    """``count`` distinct user messages about the same vocabulary (none repeats, so no
    request is answered from a query-embedding cache)."""
    rng = random.Random(seed)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < count:
        text = rng.choice(REQUESTS).format(verb=rng.choice(VERBS), obj=rng.choice(OBJECTS),
                                           ctx=rng.choice(CONTEXTS))
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out
