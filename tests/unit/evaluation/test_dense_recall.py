"""An encoder alone on a labelled catalog: requests rank every skill by cosine; requests that
expect a skill the catalog lacks, or none, are left out; figures per split."""

from __future__ import annotations

from pathlib import Path

import pytest

from router.encoders.hashing import HashEmbedder
from router.evaluation import dense_recall
from router.evaluation.metrics import Labelled, split_of
from tests.support.skills import write_skill


def test_each_request_ranks_the_catalog_by_the_encoder_alone(tmp_path: Path) -> None:
    for name, text in (("weather-now", "current weather for a city"),
                       ("send-email", "send an email message to a person"),
                       ("book-flight", "book a flight between two airports")):
        write_skill(tmp_path / name, name, text)
    skills = dense_recall.catalog(tmp_path)
    assert [s.name for s in skills] == ["book-flight", "send-email", "weather-now"]
    requests = [Labelled(f"r{i}", q, e) for i, (q, e) in enumerate([
        ("weather now for a city", ("weather-now",)),
        ("send an email message", ("send-email",)),
        ("book a flight", ("book-flight", "send-email")),
        ("anything", ()),  # expects nothing: left out
        ("order pizza", ("order-pizza",)),  # a skill the catalog lacks: left out
    ])]
    figures = dense_recall.measure(skills, requests, HashEmbedder(256))
    assert figures["all"].requests == 3 and figures["all"].tools == 3
    assert figures["all"].recall[5] == pytest.approx(1.0)  # three skills: all in every top 5
    assert 0.0 < figures["all"].recall[1] <= 1.0
    splits = {split_of(r.id) for r in requests[:3]}
    assert set(figures) == {"all", *splits}
    assert sum(figures[s].requests for s in splits) == 3
    assert dense_recall.measure(skills, requests[3:], HashEmbedder(256)) == {}
