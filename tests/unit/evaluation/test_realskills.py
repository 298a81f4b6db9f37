"""The real-skill set: the committed archive, its labels, and the builder's pure parts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from router.skills.fields import NAME_PATTERN
from router.skills.model import Scope
from router.skills.parse import parse_skill_md
from scripts.realskills.catalog import entries, read_archive, shared_span, unpack, write_archive
from scripts.realskills.sources import RawSkill, Source

HERE = Path(__file__).resolve().parents[3] / "eval" / "realskills"


@pytest.fixture(scope="module")
def catalog() -> dict[str, dict[str, object]]:
    return {str(r["name"]): r for r in read_archive(HERE / "catalog.jsonl.gz")}


@pytest.fixture(scope="module")
def requests() -> list[dict[str, object]]:
    lines = (HERE / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_every_label_names_a_skill_of_the_archive(catalog, requests) -> None:
    missing = {(r["id"], n) for r in requests for n in r["expected"] if n not in catalog}
    assert not missing
    assert len({r["id"] for r in requests}) == len(requests)
    assert sum(not r["expected"] for r in requests) >= 10  # off-topic requests


def test_archive_names_are_unique_and_valid(catalog) -> None:
    assert len(catalog) > 2000
    assert all(NAME_PATTERN.match(name) and len(name) <= 64 for name in catalog)


def test_labelled_skills_unpack_and_load_under_their_names(catalog, requests,
                                                           tmp_path: Path) -> None:
    labelled = sorted({n for r in requests for n in r["expected"]})
    write_archive((catalog[n] for n in labelled), tmp_path / "part.jsonl.gz")
    assert unpack(tmp_path / "part.jsonl.gz", tmp_path / "skills") == len(labelled)
    for name in labelled:
        path = tmp_path / "skills" / name / "SKILL.md"
        skill, _ = parse_skill_md(path.read_bytes(), location=str(path),
                                  base_dir=str(path.parent), scope=Scope.BUNDLED)
        assert skill.name == name
        assert skill.description


def test_no_request_copies_8_words_from_its_labelled_skills(catalog, requests) -> None:
    copied = []
    for r in requests:
        for name in r["expected"]:
            row = catalog[name]
            indexed = " ".join([name, str(row["skill_md"]), *row["files"].values()])
            span = shared_span(str(r["query"]), indexed)
            if span:
                copied.append((r["id"], name, span))
    assert not copied


def test_shared_span_finds_a_copied_run_of_words() -> None:
    text = "Use this skill to convert spreadsheets into charts for the weekly report."
    assert shared_span("please CONVERT spreadsheets into charts, for the weekly report!", text)
    assert shared_span("convert spreadsheets into charts for a weekly report", text) is None


def _raw(folder: str, md: str, source: Source, licence: str = "") -> RawSkill:
    return RawSkill(source, folder, md, {}, licence)


def test_entries_rename_clashes_drop_copies_and_unlicensed_skills() -> None:
    repo = Source("a/b", "0" * 40, "MIT")
    mirror = Source("c/d", "1" * 40, "per skill", per_skill_licence=True)
    md = "---\nname: PDF Tools\ndescription: {d}\n{extra}---\nbody {d}\n"
    rows = list(entries([
        _raw("x/pdf", md.format(d="one", extra=""), repo),
        _raw("y/pdf", md.format(d="two", extra=""), repo),
        _raw("z/pdf", md.format(d="one", extra=""), repo),  # a byte-identical copy
        _raw("m/pdf", md.format(d="three", extra="license: Proprietary\n"), mirror),
        _raw("n/pdf", md.format(d="four", extra="license: MIT\n"), mirror,
             licence="All rights reserved."),
        _raw("o/pdf", md.format(d="five", extra="license: Apache-2.0\n"), mirror),
        _raw("p/bad", "no frontmatter here", repo),
    ]))
    assert [r["name"] for r in rows] == ["pdf-tools", "pdf-tools-2", "pdf-tools-3"]
    assert rows[2]["source"] == "c/d"
    assert rows[1]["skill_md"].startswith('---\nname: "pdf-tools-2"\ndescription: "two"\n')


def test_fields_read_the_description_as_yaml_not_as_a_line() -> None:
    from scripts.realskills.measure import document, fields

    row = {"name": "pdf-tools", "skill_md": "---\nname: pdf-tools\ndescription: >\n  Split "
           "and merge\n  PDF files.\n---\n# PDF tools\nUse pypdf.\n"}
    assert fields(row) == ("pdf-tools", "Split and merge PDF files.", "# PDF tools\nUse pypdf.")
    assert document(row, 5) == "pdf tools Split and merge PDF files. # PDF"


def test_dense_body_takes_each_skills_best_passage() -> None:
    import numpy as np

    from scripts.realskills.dense_body import _passage_max

    vectors = {"pass": np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]]),
               "pass_owner": np.array([2, 0, 2])}
    best = _passage_max(vectors, np.array([[1.0, 0.0], [0.0, 1.0]]), skills=3)
    assert best.tolist() == [[0.0, -1.0, 1.0], [1.0, -1.0, 0.8]]
