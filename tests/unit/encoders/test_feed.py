"""Tokenizer worker processes (router.encoders.feed, ``index.tokenize_workers``): they plan
chunks exactly as one thread does and hand them back in order, never hold more than ``ahead``
chunks, never load torch; an error in a worker reaches the build, and a worker that dies stops
it with a clear message instead of a hang."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from router.builder.plan import BuildPlan
from router.cli import main
from router.config import DiscoveryConfig, load_config
from router.encoders import feed
from router.encoders.feed import TokenizerPool, TokenizerStopped
from router.encoders.token_batches import TokenizerSpec, plan_chunk
from router.errors import InvalidRequest
from tests.support.indexes import index_argv
from tests.support.skills import write_catalog

WORDS = ["deploy", "the", "weekly", "report", "to", "staging", "and", "audit", "it"]
NO_HANG = 120.0  # seconds: a guard only; the tests wait for the feed to answer


def _spec(max_length: int = 6) -> TokenizerSpec:
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"[PAD]": 0, "[UNK]": 1, **{w: i + 2 for i, w in enumerate(WORDS)}}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()  # type: ignore[assignment]
    return TokenizerSpec(json=tokenizer.to_str(), max_length=max_length)


def _texts(count: int) -> list[str]:
    rng = np.random.default_rng(3)
    return [" ".join(WORDS[int(j)] for j in rng.integers(0, len(WORDS), int(n)))
            for n in rng.integers(0, 10, count)]


def _spans(count: int, size: int) -> list[tuple[int, int]]:
    return [(start, min(count, start + size)) for start in range(0, count, size)]


def _raises(texts: Sequence[str], batch_size: int) -> list[object]:
    raise ValueError(f"cannot tokenize {texts[0]!r}")


def _dies(texts: Sequence[str], batch_size: int) -> list[object]:
    os._exit(3)


def _pid(texts: Sequence[str], batch_size: int) -> list[object]:
    return [os.getpid()]


def _what_is_loaded(texts: Sequence[str], batch_size: int) -> list[object]:
    from router.encoders import token_batches

    loaded = {name: name in sys.modules for name in ("torch", "transformers")}
    return [loaded, token_batches._worker is not None]


def test_workers_plan_each_chunk_as_one_thread_does_in_order() -> None:
    spec, texts = _spec(), _texts(50)
    spans = _spans(len(texts), 7)
    with TokenizerPool(spec, 2) as pool:
        got = list(pool.planned(texts, spans, 3))
    tokenizer = spec.load()
    assert len(got) == len(spans)
    for (start, end), chunk in zip(spans, got, strict=True):
        want = plan_chunk(tokenizer, spec, texts[start:end], 3)
        assert len(chunk) == len(want)
        for ours, theirs in zip(chunk, want, strict=True):
            assert ours.rows.tolist() == theirs.rows.tolist()
            assert ours.ids.tolist() == theirs.ids.tolist()
            assert ours.mask.tolist() == theirs.mask.tolist()
    widest = max(batch.ids.shape[1] for chunk in got for batch in chunk)
    assert widest == 6  # nine-word texts cut at max_length


def test_no_more_than_ahead_chunks_are_in_flight() -> None:
    texts = _texts(40)
    seen = []
    with TokenizerPool(_spec(), 2, ahead=3) as pool:
        for _ in pool.planned(texts, _spans(len(texts), 4), 2):
            seen.append(pool.submitted - pool.taken + 1)  # still pending, and the one held here
    assert len(seen) == 10 and max(seen) == 3  # filled up to ahead, never past it
    assert seen[-1] == 1  # drained: only the last one, held here


def test_a_worker_error_reaches_the_build() -> None:
    texts = _texts(20)
    with TokenizerPool(_spec(), 2, work=_raises) as pool, pytest.raises(
            ValueError, match="cannot tokenize"):
        list(pool.planned(texts, _spans(len(texts), 5), 2))


def test_a_worker_that_dies_stops_the_build_with_a_clear_error() -> None:
    texts = _texts(20)
    outcome: list[BaseException] = []
    done = threading.Event()

    def build() -> None:
        try:
            with TokenizerPool(_spec(), 2, work=_dies) as pool:
                list(pool.planned(texts, _spans(len(texts), 5), 2))
        except BaseException as exc:  # handed to the test's thread
            outcome.append(exc)
        finally:
            done.set()

    threading.Thread(target=build, daemon=True).start()
    assert done.wait(NO_HANG), "the feed hung after its worker died"
    assert len(outcome) == 1 and isinstance(outcome[0], TokenizerStopped)
    assert "tokenizer worker process stopped" in str(outcome[0])
    assert "index.tokenize_workers 1" in str(outcome[0])


def test_an_error_in_the_build_ends_the_workers() -> None:
    texts = _texts(40)
    pids: list[int] = []
    with pytest.raises(KeyError, match="the model failed"), TokenizerPool(
            _spec(), 2, work=_pid) as pool:
        for (pid,) in pool.planned(texts, _spans(len(texts), 4), 2):
            pids.append(int(pid))  # type: ignore[call-overload]
            raise KeyError("the model failed")
    assert len(pids) == 1
    with pytest.raises(ProcessLookupError):
        os.kill(pids[0], 0)  # ended and reaped when the block ended


def test_a_tokenizer_worker_loads_neither_torch_nor_transformers() -> None:
    import torch  # noqa: F401 - the build process has it; the spawned worker must not

    with TokenizerPool(_spec(), 1, work=_what_is_loaded) as pool:
        (answer,) = list(pool.planned(["deploy it"], [(0, 1)], 1))
    assert answer == [{"torch": False, "transformers": False}, True]


def test_a_pool_is_used_inside_its_block_only() -> None:
    with pytest.raises(RuntimeError, match="with block"):
        next(TokenizerPool(_spec(), 1).planned(["x"], [(0, 1)], 1))
    with pytest.raises(ValueError, match="workers"):
        TokenizerPool(_spec(), 0)


def test_the_count_follows_the_device(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(feed, "usable_cpus", lambda: 16)
    assert feed.worker_count(0, on_cuda=True) == 15
    assert feed.worker_count(0, on_cuda=False) == 1  # the model takes the cores
    assert feed.worker_count(4, on_cuda=False) == 4
    monkeypatch.setattr(feed, "usable_cpus", lambda: 1)
    assert feed.worker_count(0, on_cuda=True) == 1


def test_the_setting_reaches_the_build_encoder_and_refuses_bad_values() -> None:
    assert load_config(env={}).index.tokenize_workers == 0
    config = load_config(env={"SKILL_ROUTER_INDEX_TOKENIZE_WORKERS": "3"})
    assert config.index.tokenize_workers == 3
    plan = BuildPlan.from_config(config, DiscoveryConfig(), model="hash", device="cpu")
    assert plan.encoder.tokenize_workers == 3
    with pytest.raises(InvalidRequest, match=r"index\.tokenize_workers: -1 is not a number"):
        load_config(env={"SKILL_ROUTER_INDEX_TOKENIZE_WORKERS": "-1"})


def test_the_cli_refuses_a_bad_count_before_touching_the_index(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    skills, out = write_catalog(tmp_path / "skills", 2), tmp_path / "index"
    assert main([*index_argv(skills, out), "--tokenize-workers", "two"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --tokenize-workers: ") and "not a number of processes" in err
    assert not out.exists()
