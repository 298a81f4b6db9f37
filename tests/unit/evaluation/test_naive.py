"""The naive baselines of ``skill-router eval``: scores by hand on tiny catalogs, then the CLI."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from router.cli import main
from router.evaluation import naive
from router.evaluation.metrics import Labelled
from router.examples.model import Example
from router.index.lexical import LexicalIndex
from tests.support.skills import add_skill, skill_record

# Four dimensions; the request q is halfway between axes 0 and 1.
Q = np.array([[1.0, 1.0, 0.0, 0.0]], dtype=np.float32) / np.sqrt(2.0)
A = np.array([1.0, 1.0, 1.0, 0.0]) / np.sqrt(3.0)  # close by description alone (0.816)
B = np.array([0.0, 0.0, 0.0, 1.0])  # orthogonal description; its example is q itself
C = np.array([1.0, 0.0, 0.0, 0.0])  # half way; its example is the other half (axis 1)
DESC = np.stack([A, B, C]).astype(np.float32)
EXAMPLES = np.stack([Q[0], [0.0, 1.0, 0.0, 0.0]]).astype(np.float32)
OWNER = np.array([1, 2], dtype=np.int64)  # example 0 teaches B, example 1 teaches C


def test_without_examples_both_are_the_description_cosine() -> None:
    none = np.zeros((0, 4), dtype=np.float32)
    empty = np.zeros(0, dtype=np.int64)
    expected = [[2 / np.sqrt(6), 0.0, 1 / np.sqrt(2)]]
    assert np.allclose(Q @ naive.centroid_vectors(DESC, none, empty).T, expected, atol=1e-6)
    assert np.allclose(naive.max_sim_scores(Q, DESC, none, empty), expected, atol=1e-6)


def test_centroid_lifts_the_skill_whose_examples_complete_its_description() -> None:
    views = naive.centroid_vectors(DESC, EXAMPLES, OWNER)
    scores = Q @ views.T
    # A untaught: its description; B: normalise(B + q); C: normalise(axis 0 + axis 1) = q.
    assert np.allclose(scores, [[2 / np.sqrt(6), 1 / np.sqrt(2), 1.0]], atol=1e-6)
    assert naive.top_ranked(scores).tolist() == [[2, 0, 1]]


def test_centroid_adds_the_mean_of_several_examples_not_their_sum() -> None:
    desc = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], dtype=np.float32)
    examples = np.array([[0.0, 1.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.6, 0.8]], dtype=np.float32)
    owner = np.array([0, 0, 1], dtype=np.int64)
    views = naive.centroid_vectors(desc, examples, owner)
    # skill 0: (1, 0, 0) + (0.3, 0.9, 0) = (1.3, 0.9, 0); skill 1: (0, 0.6, 1.8).
    expected = np.array([[1.3, 0.9, 0.0], [0.0, 0.6, 1.8]])
    assert np.allclose(views, expected / np.linalg.norm(expected, axis=1, keepdims=True))


def test_max_sim_reaches_a_skill_only_through_its_example() -> None:
    scores = naive.max_sim_scores(Q, DESC, EXAMPLES, OWNER)
    assert np.allclose(scores, [[2 / np.sqrt(6), 1.0, 1 / np.sqrt(2)]], atol=1e-6)
    assert naive.top_ranked(scores).tolist() == [[1, 0, 2]]


def test_max_sim_takes_each_skills_closest_example_in_any_row_order() -> None:
    desc = np.eye(3, dtype=np.float32)
    examples = np.array([[0, 0.6, 0.8], [0.6, 0.8, 0], [0.8, 0, 0.6], [0, 0.8, 0.6]],
                        dtype=np.float32)
    owner = np.array([2, 0, 2, 0], dtype=np.int64)
    query = np.array([[0.0, 1.0, 0.0]], dtype=np.float32)
    # skill 0: max(0, 0.8, 0.8); skill 1: its description, 1; skill 2: max(0, 0.6, 0).
    assert np.allclose(naive.max_sim_scores(query, desc, examples, owner), [[0.8, 1.0, 0.6]])


def test_fusion_divides_each_part_by_the_turns_maximum() -> None:
    dense = np.array([[0.5, 0.25, 0.0], [-0.2, -0.1, -0.3]], dtype=np.float32)
    bm25 = np.array([[0.0, 4.0, 2.0], [0.0, 0.0, 0.0]], dtype=np.float32)
    fused = naive.fuse(dense, bm25)
    # Row 0: 0.7 * (1, 0.5, 0) + 0.3 * (0, 1, 0.5). Row 1: no positive maximum, both parts 0.
    assert np.allclose(fused, [[0.7, 0.65, 0.15], [0.0, 0.0, 0.0]])
    assert naive.top_ranked(fused, depth=2).tolist() == [[0, 1], [0, 1]]  # ties: lower row


def test_positive_rows_skip_unknown_skills_negatives_and_repeats() -> None:
    examples = [Example("Merge these PDFs", ("pdf", "files")),
                Example("merge  these pdfs", ("pdf",)),  # the same request again
                Example("Undo my commit", ("git", "gone")),
                Example("Not for git", (), ("git",)),
                Example("hello there", ())]
    taught = naive.positive_rows(examples, ["files", "git", "pdf"])
    assert taught.texts == ("Merge these PDFs", "Merge these PDFs", "Undo my commit")
    assert taught.skill.tolist() == [2, 0, 1]


def test_bm25_documents_gain_the_examples_text() -> None:
    skills = [skill_record("pdf-tools", "Extracts tables from PDF files."),
              skill_record("git-helper", "Writes commit messages.")]
    taught = naive.positive_rows([Example("rewind the repository", ("git-helper",))],
                                 [s.name for s in skills])
    docs = naive.skill_documents(skills, taught)
    assert docs == ["pdf tools Extracts tables from PDF files.",
                    "git helper Writes commit messages. rewind the repository"]
    scores = naive.lexical_scores(LexicalIndex.build(docs), ["rewind", "tables", "zebra"])
    assert scores.shape == (3, 2)
    assert scores[0, 0] == 0 and scores[0, 1] > 0
    assert scores[1, 0] > 0 and scores[1, 1] == 0
    assert not scores[2].any()


def _encoder(table: dict[str, Sequence[float]]) -> naive.Encode:
    def encode(texts: Sequence[str]) -> np.ndarray:
        return np.array([table[t] for t in texts], dtype=np.float32)
    return encode


def test_outcomes_rank_with_the_fused_scores() -> None:
    skills = [skill_record("alpha", "alpha words"), skill_record("beta", "beta words"),
              skill_record("gamma", "gamma words")]
    encode = _encoder({"find it": Q[0], "it is q": Q[0], "axis one": [0, 1, 0, 0]})
    examples = [Example("it is q", ("beta",)), Example("axis one", ("gamma", "missing"))]
    requests = [Labelled("r1", "find it", ("beta",)), Labelled("r2", "find it", ())]
    found = naive.outcomes(skills, DESC, encode, requests, examples)
    assert set(found) == {"centroid", "max_sim"}
    # No BM25 overlap ("find"/"it" are in no document), so the dense order decides.
    assert found["centroid"][0].ranked == ("gamma", "alpha", "beta")
    assert found["max_sim"][0].ranked == ("beta", "alpha", "gamma")
    assert found["max_sim"][1].ranked  # never refuses an off-topic request
    zero_shot = naive.outcomes(skills, DESC, encode, requests, [])
    assert zero_shot["centroid"][0].ranked == zero_shot["max_sim"][0].ranked == (
        "alpha", "gamma", "beta")


# --- through the CLI, with the hash test embedder ---------------------------------------------

CATALOG = {"alpha-pdf": "Extracts tables from PDF documents.",
           "beta-git": "Writes git commit messages.",
           "delta-docker": "Builds Docker images and containers.",
           "gamma-sql": "Tunes SQL queries and database schemas."}
QUERIES = [{"id": "q1", "query": "extract the tables from this PDF", "expected": ["alpha-pdf"]},
           {"id": "q2", "query": "zebra quagga okapi", "expected": ["gamma-sql"]},
           {"id": "q3", "query": "banana bread recipe", "expected": []}]


@pytest.fixture
def eval_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SKILL_ROUTER_INDEX_MODEL", "hash")
    for name, description in CATALOG.items():
        add_skill(tmp_path / "skills", name, description)
    (tmp_path / "queries.jsonl").write_text(
        "".join(json.dumps(q) + "\n" for q in QUERIES), encoding="utf-8")
    (tmp_path / "examples.jsonl").write_text(
        json.dumps({"query": "zebra quagga okapi please", "skills": ["gamma-sql"]}) + "\n"
        + json.dumps({"query": "ignored", "skills": ["no-such-skill"]}) + "\n",
        encoding="utf-8")
    return tmp_path


def _eval(base: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    code = main(["eval", "--queries", str(base / "queries.jsonl"), "--root",
                 str(base / "skills"), "--cache", str(base / "cache"), *extra])
    assert code == 0
    return capsys.readouterr().out


def test_eval_json_has_both_baselines(eval_files: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    few = json.loads(_eval(eval_files, capsys, "--format", "json", "--examples",
                           str(eval_files / "examples.jsonl")))
    assert set(few["naive"]) == {"centroid", "max_sim"}
    for method in ("centroid", "max_sim"):
        row = few["naive"][method]["all"]
        # Both requests found first: q1 by its words, q2 only through its example.
        assert (row["n"], row["off-topic n"]) == (3, 1)
        assert (row["R@1"], row["R@5"], row["MRR@10"], row["nothing"]) == (1.0, 1.0, 1.0, 0.0)
        assert "p50 ms" not in row and "chars" not in row
        assert few["naive"][method]["all, taught skills"]["n"] == 1
    zero = json.loads(_eval(eval_files, capsys, "--format", "json"))
    for method in ("centroid", "max_sim"):
        row = zero["naive"][method]["all"]
        # q2 shares no word with any skill: every score 0, catalog order puts gamma-sql 4th.
        assert (row["R@1"], row["R@5"], row["MRR@10"]) == (0.5, 1.0, 0.625)
    assert zero["scores"]["all"]["n"] == 3  # the product's own figures are still there


def test_eval_table_prints_the_baselines_unless_told_not_to(
        eval_files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _eval(eval_files, capsys, "--split")
    lines = out.splitlines()
    title = next(i for i, line in enumerate(lines) if line.startswith("naive baselines"))
    assert lines[title + 1].split()[:6] == ["split", "n", "R@1", "R@3", "R@5", "MRR@10"]
    rows = [line.split() for line in lines[title + 2:]]
    rows = rows[:next((i for i, r in enumerate(rows) if r[0] not in ("centroid", "max-sim")),
                      len(rows))]
    splits = {r[1] for r in rows}
    assert "all" in splits and splits <= {"train", "validation", "all"}
    assert sorted(r[0] for r in rows) == ["centroid"] * len(splits) + ["max-sim"] * len(splits)
    assert "naive" not in _eval(eval_files, capsys, "--split", "--no-naive")
