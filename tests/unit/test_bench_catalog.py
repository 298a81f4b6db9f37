"""The benchmark's synthetic catalog: past one pass over its combinations (771,900 skills) each
further pass adds a sentence, so a million skills are all different and a smaller catalog is
the start of a larger one; ``write_catalog --workers`` writes the same folders as one process."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from benchmarks import catalog as bench_catalog
from benchmarks import write_catalog


@pytest.fixture
def three_combos(monkeypatch: pytest.MonkeyPatch) -> None:
    combos = [("parse", "invoices", "at scale", 0), ("sign", "contracts", "in real time", 1),
              ("plot", "GPS tracks", "for a classroom", 2)]
    monkeypatch.setattr(bench_catalog, "_combos", lambda rng: list(combos))


@pytest.mark.usefixtures("three_combos")
def test_each_further_pass_adds_a_sentence_and_no_description_repeats() -> None:
    limit = 3 * (1 + len(bench_catalog.ROUNDS))
    skills = bench_catalog.catalog(limit)
    assert len({s.description for s in skills}) == limit == len({s.name for s in skills})
    assert skills[3].description.endswith(f"#3. {bench_catalog.ROUNDS[0]}.")
    assert skills[0].description.endswith("#0.")  # the first pass is as it always was
    assert [s.description for s in bench_catalog.catalog(4)] == \
        [s.description for s in skills[:4]]
    with pytest.raises(ValueError, match=f"at most {limit}"):
        bench_catalog.catalog(limit + 1)


def test_the_first_pass_is_unchanged() -> None:
    combos = bench_catalog._combos(random.Random(7))
    assert len(combos) == 771_900
    first = bench_catalog.catalog(2)[1]
    verb, obj, ctx, _ = combos[1]
    assert first.name == f"{bench_catalog._slug(verb)}-{bench_catalog._slug(obj)}-1"
    assert first.description.startswith(f"{verb.capitalize()} {obj} {ctx}. Use when ")
    assert first.description.endswith("Handles edge cases #1.")


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text(encoding="utf-8")
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_workers_write_the_same_folders_as_one_process(tmp_path: Path) -> None:
    write_catalog.write(tmp_path / "one", 60)
    write_catalog.write(tmp_path / "four", 60, workers=4)
    one = _tree(tmp_path / "one")
    assert len(one) == 60 and one == _tree(tmp_path / "four")
