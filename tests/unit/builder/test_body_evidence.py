"""A skill's body is evidence: the start of its instructions (``index.body_chars``) is indexed
by BM25 beside its name and description, so a request naming what only the body says finds
the skill; 0 indexes name and description alone, and a change of the setting is a new input
(a Reindex builds again)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from router.builder.bodies import bodies_for
from router.builder.inputs import BODY_CHARS_KEY, Stages
from router.builder.pipeline import Served, build, recorded_settings
from router.builder.plan import BuildPlan, EncoderPlan
from router.config import DiscoveryConfig, IndexConfig
from router.encoders.hashing import HashEmbedder
from router.errors import InvalidRequest
from router.index.body import body_excerpt
from router.index.lexical import skill_document
from router.index.store import load_index
from router.skills.sources.base import create_source
from tests.support.skills import write_catalog, write_skill

BODY = ("# Invoices\n\nOpen the scan with pdfplumber, read each line item, then reconcile the "
        "totals against the ledger.\n")


def _catalog(root: Path) -> Path:
    write_catalog(root)
    write_skill(root / "ledger-helper", description="Helps with bookkeeping chores.", body=BODY)
    return root


def _plan(root: Path, body_chars: int) -> BuildPlan:
    return BuildPlan(DiscoveryConfig(project_dir=None, home_dir=None,
                                     bundled_roots=(str(root),)),
                     EncoderPlan("hash"), stages=Stages(body_chars=body_chars))


def _lexical_top(out: Path, text: str) -> str:
    snap = load_index(out)
    ids, _ = snap.lexical.search(text, 3, None)
    return snap.skills[int(ids[0])].name if len(ids) else ""


@pytest.mark.parametrize(("body_chars", "found"), [(2000, "ledger-helper"), (0, "")])
def test_a_word_only_the_body_says_finds_the_skill_unless_bodies_are_off(
        tmp_path: Path, body_chars: int, found: str) -> None:
    out = tmp_path / "index"
    build(_plan(_catalog(tmp_path / "skills"), body_chars), out, embedder=HashEmbedder())
    assert _lexical_top(out, "pdfplumber") == found
    assert recorded_settings(load_index(out).info.path)[BODY_CHARS_KEY] == body_chars


def test_another_body_setting_is_a_new_input_so_a_reindex_builds_again(tmp_path: Path) -> None:
    root, out = _catalog(tmp_path / "skills"), tmp_path / "index"
    build(_plan(root, 0), out, embedder=HashEmbedder())
    snap = load_index(out)
    served = Served(snap.info.version, snap.skills, recorded_settings(snap.info.path))
    assert build(_plan(root, 0), out, served=served, embedder=HashEmbedder()).info is None
    again = build(_plan(root, 2000), out, served=served, embedder=HashEmbedder())
    assert again.info is not None and _lexical_top(out, "pdfplumber") == "ledger-helper"


def test_only_the_start_of_a_long_body_is_read() -> None:
    body = "intro " * 10 + "\n\n" + "filler " * 1000 + "needle"
    excerpt = body_excerpt(body, 200)
    assert len(excerpt) <= 200 and excerpt.startswith("intro intro")
    assert "needle" not in excerpt and "\n" not in excerpt and not excerpt.endswith(" ")
    assert body_excerpt(body, 0) == "" and body_excerpt("", 50) == ""
    assert body_excerpt("short body", 50) == "short body"
    document = skill_document("pdf-tools", "Reads PDFs.", excerpt)
    assert document.startswith("pdf tools Reads PDFs. intro")
    assert skill_document("pdf-tools", "Reads PDFs.") == "pdf tools Reads PDFs."


def test_a_negative_body_setting_is_refused_with_the_key() -> None:
    with pytest.raises(InvalidRequest, match=r"index\.body_chars"):
        replace(IndexConfig(), body_chars=-1)


def test_a_body_admission_did_not_read_is_read_for_the_index(tmp_path: Path) -> None:
    root = _catalog(tmp_path / "skills")
    found = create_source().discover(DiscoveryConfig(project_dir=None, home_dir=None,
                                                     bundled_roots=(str(root),)))
    ledger = next(s for s in found.skills if s.name == "ledger-helper")
    read = bodies_for(found.skills, {"skill-0": "as admission read it"}, None)
    assert read["skill-0"] == "as admission read it"
    assert "pdfplumber" in read[ledger.key] and len(read) == len(found.skills)
    (root / "ledger-helper" / "SKILL.md").unlink()  # unreadable now: no body, a log line
    assert ledger.key not in bodies_for(found.skills, {}, None)
