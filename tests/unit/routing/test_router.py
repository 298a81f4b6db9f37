"""Routing logic over a small in-memory index and the deterministic hash embedder; a built
index routes the same way, and serves the same results across a reload."""

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from router.builder.version import build_index
from router.config import Config, RoutingConfig
from router.encoders.hashing import HashEmbedder
from router.engine import Engine
from router.errors import InvalidRequest
from router.routing.fusion import FusionConfig, history_text, mix_history, pool, query_views
from router.routing.model import CatalogFormat, DropReason, Reason, RouteQuery
from router.routing.query_text import encode_turn, explicit_names
from router.routing.result import filter_reason
from router.skills.model import Skill
from tests.support.indexes import build_hash_index, open_engine
from tests.support.skills import skill_record
from tests.support.snapshots import snapshot_of


def skill(name: str, description: str, **flags: object) -> Skill:
    return skill_record(name, description, root="/s", **flags)


SKILLS = [
    skill("style-guide", "Applies the house style to answers.", always_on=True),
    skill("pdf-tools", "Extracts text and tables from PDF files and invoices."),
    skill("csv-analyst", "Analyses CSV spreadsheets with pivots and charts by department."),
    skill("git-helper", "Writes git commit messages and explains git history."),
    skill("pdf-old", "Extracts text and tables from PDF files.", deprecated=True),
    skill("pdf-off", "Extracts text and tables from PDF files.", enabled=False),
    skill("deploy-prod", "Deploys the release to production.", model_invocable=False),
]


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(snapshot_of(SKILLS), Config(), HashEmbedder())


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return open_engine(build_hash_index(SKILLS, tmp_path_factory.mktemp("idx")))


def names(engine: Engine, **kw: object) -> list[tuple[str, Reason]]:
    result = engine.route(RouteQuery(**kw))  # type: ignore[arg-type]
    return [(s.name, s.reason) for s in result.skills]


def test_always_on_first_then_retrieved_without_filtered(engine: Engine) -> None:
    routed = names(engine, message="extract the tables from this PDF invoice")
    assert routed[0] == ("style-guide", Reason.ALWAYS_ON)
    assert ("pdf-tools", Reason.RETRIEVED) in routed
    assert not {"pdf-old", "pdf-off", "deploy-prod"} & {n for n, _ in routed}


def test_explicit_invocation_goes_first_even_when_not_model_invocable(engine: Engine) -> None:
    result = engine.route(RouteQuery(message="/deploy-prod v1.2 please"))
    assert (result.skills[0].name, result.skills[0].reason) == ("deploy-prod", Reason.EXPLICIT)
    assert result.unknown_explicit == ()


def test_unknown_leading_name_is_reported_but_paths_are_not(engine: Engine) -> None:
    assert engine.route(RouteQuery(message="/nope do it")).unknown_explicit == ("nope",)
    assert engine.route(RouteQuery(message="open /usr/bin/python")).unknown_explicit == ()
    assert explicit_names("use $git-helper and /pdf-tools.")[0] == ["git-helper", "pdf-tools"]


def test_active_skills_are_kept_with_their_reason(engine: Engine) -> None:
    routed = names(engine, message="extract the tables from this PDF",
                   active_skills=("git-helper",))
    assert ("git-helper", Reason.ACTIVE) in routed


def test_history_steers_a_vague_follow_up(engine: Engine) -> None:
    alone = names(engine, message="now compare it by department")
    follow = names(engine, message="now compare it by department",
                   history=("load the sales CSV spreadsheets",))
    assert ("csv-analyst", Reason.RETRIEVED) in follow
    assert len(follow) >= len(alone)


def test_top_k_limits_retrieved_only(engine: Engine) -> None:
    routed = names(engine, message="PDF tables git commit CSV pivots", top_k=1)
    assert [r for _, r in routed].count(Reason.RETRIEVED) == 1
    assert routed[0][1] is Reason.ALWAYS_ON


def test_budget_keeps_whole_entries_and_reports_counts(engine: Engine) -> None:
    full = engine.route(RouteQuery(message="extract PDF tables"))
    cut = engine.route(RouteQuery(message="extract PDF tables",
                                  max_catalog_chars=full.catalog_chars - 1))
    assert cut.routed_count == full.routed_count
    assert len(cut.skills) == len(full.skills) - 1
    assert cut.catalog_chars <= full.catalog_chars - 1
    tiny = engine.route(RouteQuery(message="extract PDF tables", max_catalog_chars=10))
    assert tiny.skills == () and tiny.catalog_text == "" and tiny.activate_tool_json == ""


def test_formats_and_savings(engine: Engine) -> None:
    for fmt in (f for f in CatalogFormat if not f.tools_only):  # the others: tools only
        result = engine.route(RouteQuery(message="extract PDF tables", format=fmt, top_k=2))
        assert "pdf-tools" in result.catalog_text
        assert 0 < result.catalog_chars < result.full_catalog_chars


def test_explain_gives_every_candidate_a_reason(engine: Engine) -> None:
    result = engine.explain(RouteQuery(message="extract the tables from PDF files", top_k=1))
    reasons = {c.name: c.reason for c in result.candidates}
    assert reasons["pdf-old"] is DropReason.DEPRECATED
    assert reasons["pdf-off"] is DropReason.DISABLED
    assert reasons["pdf-tools"] is DropReason.KEPT
    others = {r for n, r in reasons.items() if n not in {"pdf-old", "pdf-off", "pdf-tools",
                                                         "deploy-prod", "style-guide"}}
    assert others and others <= {DropReason.OUTSIDE_TOP_K, DropReason.SCORE_GAP,
                                 DropReason.BELOW_THRESHOLD}
    # top_k=1 keeps the best routable candidate: none dropped for rank scores above it
    best = next(c for c in result.candidates if c.reason is DropReason.KEPT)
    ranked_out = [c.fused_score for c in result.candidates if c.reason in others]
    assert best.name == "pdf-tools" and best.fused_score > 0
    assert best.fused_score >= max(ranked_out)
    assert [c.fused_score for c in result.candidates] == sorted(
        (c.fused_score for c in result.candidates), reverse=True)


def test_off_topic_message_gets_no_retrieved_skill(engine: Engine) -> None:
    strict = Engine(engine.snapshot, replace(Config(), routing=RoutingConfig()),
                    HashEmbedder())
    routed = names(strict, message="zebra quantum banana")
    assert routed == [("style-guide", Reason.ALWAYS_ON)]


@pytest.mark.parametrize("query, fragment", [
    (RouteQuery(message="   "), "message is empty"),
    (RouteQuery(message="x", top_k=-1), "top_k"),
    (RouteQuery(message="x", top_k=51), "top_k"),
    (RouteQuery(message="x", max_catalog_chars=-5), "max_catalog_chars"),
    (RouteQuery(message="x" * 40_000), "limit"),
    (RouteQuery(message="x", history=("h",) * 60), "history"),
])
def test_bad_requests_say_what_to_fix(engine: Engine, query: RouteQuery, fragment: str) -> None:
    with pytest.raises(InvalidRequest, match=fragment):
        engine.route(query)


def test_results_are_stable_across_a_reload(built: Engine) -> None:
    query = RouteQuery(message="git commit message for the PDF fix", history=("csv",))
    again = Engine.open(Path(built.snapshot.info.path).parents[1], Config(), HashEmbedder())
    assert again.route(query) == built.route(query)


@pytest.mark.parametrize("message", [
    "extract the tables from this PDF invoice", "zebra quantum banana",
    "git commit message for the PDF fix", "/deploy-prod v1.2 please",
])
def test_the_in_memory_snapshot_routes_as_the_built_index(engine: Engine, built: Engine,
                                                          message: str) -> None:
    assert engine.snapshot.calibration == built.snapshot.calibration
    assert engine.snapshot.calibration is not None
    query = RouteQuery(message=message, history=("load the sales CSV",))
    assert replace(engine.explain(query), index_version="") == replace(
        built.explain(query), index_version="")


def test_the_served_hnsw_breadth_comes_from_the_config(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from router.index import dense

    monkeypatch.setattr(dense, "HNSW_MIN_VECTORS", 1)
    build_index(SKILLS, [], HashEmbedder(), tmp_path)
    config = Config()
    config = replace(config, index=replace(config.index, hnsw_ef_search=77))
    opened = Engine.open(tmp_path, config, HashEmbedder())
    assert dense.kind_of(opened.snapshot.dense) == dense.HNSW
    assert opened.snapshot.dense.hnsw.efSearch == 77
    build_index(SKILLS[:3], [], HashEmbedder(), tmp_path)
    assert opened.reload()
    assert opened.snapshot.dense.hnsw.efSearch == 77


def test_a_turn_is_encoded_in_one_call() -> None:
    """The sentences of a message and its history go to the encoder together, and make the
    vectors they made one at a time."""
    embedder = HashEmbedder(64)
    calls: list[list[str]] = []

    def encode(texts: Sequence[str]) -> np.ndarray:
        calls.append(list(texts))
        return embedder.encode(texts)

    config = FusionConfig()
    message = "Convert the invoice PDF into markdown. Then email the result to the finance team."
    history = ["we talked about invoices", "and about the finance team"]
    vectors = encode_turn(encode, message, history, config)
    views = query_views(message, config)
    assert len(views) > 2 and len(calls) == 1
    assert calls[0] == [*views[1:], history_text(history, config)]
    parts = embedder.encode(views[1:])
    whole = mix_history(pool(parts), embedder.encode([history_text(history, config)])[0],
                        config.history_weight)
    assert np.allclose(vectors.matrix, np.vstack([whole[None, :], parts]), atol=1e-6)
    calls.clear()
    single = encode_turn(encode, "convert a pdf", (), config)
    assert calls == [["convert a pdf"]] and single.matrix.shape == (1, 64)


@pytest.mark.parametrize("enabled", [True, False])
@pytest.mark.parametrize("deprecated", [True, False])
@pytest.mark.parametrize("model_invocable", [True, False])
def test_a_skill_gets_a_drop_reason_exactly_when_it_is_not_routable(
        enabled: bool, deprecated: bool, model_invocable: bool) -> None:
    """Ranking drops the snapshot's ``unroutable`` rows (``Skill.routable``) and Explain
    names why with ``filter_reason``: the two must agree, and the first failing flag wins."""
    skill = Skill(name="s", description="d", location="/s/SKILL.md", base_dir="/s",
                  enabled=enabled, deprecated=deprecated, model_invocable=model_invocable)
    want = (DropReason.DISABLED if not enabled else DropReason.DEPRECATED if deprecated
            else None if model_invocable else DropReason.NOT_MODEL_INVOCABLE)
    assert filter_reason(skill) == want
    assert (want is None) == skill.routable
