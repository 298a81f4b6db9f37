"""The BM25 keyword index: tokenisation, ranking, edge cases, persistence, concurrency."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import bm25s
import numpy as np
import pytest

from router.index.lexical import (
    LexicalIndex,
    english_stopwords,
    skill_document,
    tokenize,
)
from tests.support.processes import python_stdout

SKILLS = {
    "pdf-extract": "Extracts text and tables from PDF files.",
    "csv-to-json": "Converts CSV spreadsheets into JSON documents.",
    "send-email": "Sends an email message to one or more recipients.",
    "invoice-builder": "Creates an invoice for a customer order.",
    "weather-forecast": "Gets the weather forecast for a city.",
    "git-commit-helper": "Writes commit messages from staged changes.",
}
NAMES = list(SKILLS)


@pytest.fixture(scope="module")
def index() -> LexicalIndex:
    return LexicalIndex.build([skill_document(n, d) for n, d in SKILLS.items()])


def top_name(index: LexicalIndex, query: str) -> str:
    ids, _ = index.search(query, 3)
    assert len(ids) > 0, query
    return NAMES[int(ids[0])]


def test_skill_document_splits_the_name_on_hyphens() -> None:
    assert skill_document("csv-to-json", "Converts CSV.") == "csv to json Converts CSV."


def test_tokenize_drops_stopwords_splits_identifiers_and_adds_marked_stems() -> None:
    tokens = tokenize("The getWeather tool, for cities and snake_case", english_stopwords())
    words = [t for t in tokens if not t.startswith("~")]
    assert words == ["get", "weather", "tool", "cities", "snake", "case"]
    assert "~citi" in tokens
    assert "the" not in tokens and "for" not in tokens


def test_exact_name_mention_ranks_first(index: LexicalIndex) -> None:
    assert top_name(index, "please run csv to json on this upload") == "csv-to-json"
    assert top_name(index, "use the git commit helper") == "git-commit-helper"


def test_morphological_variants_match_through_stems(index: LexicalIndex) -> None:
    assert top_name(index, "build invoices for my customers") == "invoice-builder"
    assert top_name(index, "extracting tables") == "pdf-extract"


def test_results_are_sorted_positive_and_typed(index: LexicalIndex) -> None:
    ids, scores = index.search("send the weather forecast by email", 10)
    assert ids.dtype == np.int64 and scores.dtype == np.float32
    assert len(ids) == len(scores) >= 2
    assert np.all(scores > 0)
    assert np.all(np.diff(scores) <= 0)
    assert {NAMES[int(i)] for i in ids[:2]} == {"send-email", "weather-forecast"}


@pytest.mark.parametrize("query", ["", "   ", "the and of", "zzqx unknownword"])
def test_queries_without_indexed_words_return_nothing(index: LexicalIndex, query: str) -> None:
    ids, scores = index.search(query, 5)
    assert len(ids) == 0 and len(scores) == 0


def test_k_larger_than_the_corpus_and_k_zero(index: LexicalIndex) -> None:
    ids, _ = index.search("email weather invoice pdf csv commit", 1000)
    assert len(ids) == len(SKILLS)
    assert len(index.search("email", 0)[0]) == 0
    assert len(index.search("email weather", 1)[0]) == 1


def test_scores_for_matches_search(index: LexicalIndex) -> None:
    ids, scores = index.search("email forecast", 5)
    np.testing.assert_allclose(index.scores_for("email forecast", ids), scores)
    assert index.scores_for("email", [NAMES.index("pdf-extract")]).tolist() == [0.0]
    assert index.scores_for("", [0, 1]).tolist() == [0.0, 0.0]


def test_save_load_round_trip_gives_identical_results(index: LexicalIndex, tmp_path: Path) -> None:
    index.save(tmp_path / "lexical")
    loaded = LexicalIndex.load(tmp_path / "lexical")
    assert len(loaded) == len(index)
    for query in ["convert csv", "weather in Paris", "commit my changes", "nothing here"]:
        a_ids, a_scores = index.search(query, 4)
        b_ids, b_scores = loaded.search(query, 4)
        assert a_ids.tolist() == b_ids.tolist()
        np.testing.assert_array_equal(a_scores, b_scores)


def test_scores_are_the_ones_bm25s_computes(index: LexicalIndex) -> None:
    stop = english_stopwords()
    reference = bm25s.BM25()
    reference.index([tokenize(skill_document(n, d), stop) for n, d in SKILLS.items()],
                    show_progress=False)
    for query in ["convert csv to json", "weather in Paris", "invoices invoices", "emails"]:
        expected = reference.get_scores(tokenize(query, stop))
        np.testing.assert_array_equal(index.scores_for(query, range(len(SKILLS))), expected)


def test_loading_and_searching_never_import_bm25s_or_scipy(index: LexicalIndex,
                                                           tmp_path: Path) -> None:
    index.save(tmp_path)
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from router.index.lexical import LexicalIndex\n"
        f"ids, _ = LexicalIndex.load(Path({str(tmp_path)!r})).search('weather forecast', 3)\n"
        "assert ids.tolist() == [4], ids\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('bm25s', 'scipy')))\n"
    )
    assert python_stdout(script).strip() == "[]"


def test_load_rejects_an_older_format_and_arrays_that_do_not_fit(index: LexicalIndex,
                                                                  tmp_path: Path) -> None:
    index.save(tmp_path)
    settings = json.loads((tmp_path / "lexical.json").read_text())
    (tmp_path / "lexical.json").write_text(json.dumps({**settings, "format": 1}))
    with pytest.raises(ValueError, match="rebuild the index"):
        LexicalIndex.load(tmp_path)
    (tmp_path / "lexical.json").write_text(json.dumps({**settings, "documents": 3}))
    with pytest.raises(ValueError, match="inconsistent"):
        LexicalIndex.load(tmp_path)


def test_load_rejects_another_tokenizer_version(index: LexicalIndex, tmp_path: Path) -> None:
    index.save(tmp_path)
    (tmp_path / "lexical.json").write_text(json.dumps({"tokenizer_version": 99, "documents": 6}))
    with pytest.raises(ValueError, match="tokenizer version"):
        LexicalIndex.load(tmp_path)


def test_empty_catalog_builds_searches_and_round_trips(tmp_path: Path) -> None:
    empty = LexicalIndex.build([])
    assert len(empty) == 0
    assert len(empty.search("anything", 5)[0]) == 0
    empty.save(tmp_path)
    assert len(LexicalIndex.load(tmp_path).search("anything", 5)[0]) == 0


def test_documents_without_words_are_never_returned() -> None:
    idx = LexicalIndex.build(["the of and", "convert images"])
    ids, _ = idx.search("convert the images", 5)
    assert ids.tolist() == [1]


def test_concurrent_searches_agree_with_sequential_ones(index: LexicalIndex) -> None:
    queries = ["send email", "csv json", "weather city", "invoices", "pdf tables", "commits"] * 30
    expected = [index.search(q, 3)[0].tolist() for q in queries]
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(lambda q: index.search(q, 3)[0].tolist(), queries))
    assert got == expected


def test_the_same_documents_make_the_same_files_in_any_process(tmp_path: Path) -> None:
    # String hashing differs between processes; the files must not.
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from router.index.lexical import LexicalIndex, skill_document\n"
        f"skills = {SKILLS!r}\n"
        "docs = [skill_document(n, d) for n, d in skills.items()]\n"
        "LexicalIndex.build(docs).save(Path(sys.argv[1]))\n"
    )
    made = []
    for seed in ("1", "2", "3"):
        out = tmp_path / seed
        subprocess.run([sys.executable, "-c", script, str(out)], check=True,
                       env={**os.environ, "PYTHONHASHSEED": seed})
        made.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert made[0] and made[0] == made[1] == made[2]


def test_a_search_within_documents_ignores_better_ones_outside() -> None:
    docs = [f"deploy service number {i}" for i in range(50)] + ["refund a payment", "refund"]
    lexical = LexicalIndex.build(docs)
    within = np.array([3, 50], dtype=np.int64)
    ids, scores = lexical.search("deploy refund", 10, within)
    assert sorted(ids.tolist()) == [3, 50] and (scores > 0).all()
    assert lexical.search("deploy", 10, np.array([50, 51], dtype=np.int64))[0].size == 0


def test_a_terms_documents_are_distinct_so_its_scores_add_in_one_step() -> None:
    docs = ["deploy deploy deploy the service", "Deploy a service; deploying services",
            "rotate keys and rotate logs", "deploy keys", "nothing alike here"] * 3
    index = LexicalIndex.build(docs)
    indptr, indices, data = index._indptr, index._indices, index._data
    for term in range(len(indptr) - 1):
        rows = indices[indptr[term]:indptr[term + 1]]
        assert len(np.unique(rows)) == len(rows)
    for query in ("deploy deploy service", "rotate the keys", "services deploying"):
        got = index._all_scores(query)
        expected = np.zeros(len(docs), dtype=np.float32)
        for term in [index._vocab[t] for t in tokenize(query, index._stopwords)
                     if t in index._vocab]:
            np.add.at(expected, indices[indptr[term]:indptr[term + 1]],
                      data[indptr[term]:indptr[term + 1]])
        assert got is not None and got.tobytes() == expected.tobytes()


def test_project_documents_take_the_term_statistics_of_the_view_only() -> None:
    index = LexicalIndex.build(["audit the ledgers", "deploy the service", "write git commits"])
    ask, sent = "ledgers zyzzyva", ["ledgers", "zyzzyva"]  # one word held by row 0, one by none
    hidden, absent = index.score_texts(ask, sent, np.array([1, 2], dtype=np.int64))
    assert hidden == absent > 0  # row 0 is outside the view: its word is as rare as no word
    seen, unseen = index.score_texts(ask, sent)
    assert seen < unseen  # with every row, the indexed word is the commoner one
    assert index.score_texts(ask, sent, np.arange(3, dtype=np.int64)).tolist() == [seen, unseen]
