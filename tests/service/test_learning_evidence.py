"""Learning takes evidence only from the model's choices, and its caps cannot be used to evict
(a real server on port 0, the hash embedder): a typed ``/name`` teaches nothing, nor does a
later activation from a forced Route; a flood of new requests displaces none already kept, on
disk after compaction too; what one principal teaches one skill is capped; a burst of distinct
sessions still teaches at once."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from router.config import FeedbackConfig
from router.learning.file_store import FileStore
from router.learning.traffic import learned_examples
from router.v1 import router_pb2 as pb
from router.v1 import router_pb2_grpc as pb_grpc
from tests.support.learning import PDF, activate, make_index, open_engine, positives, route
from tests.support.servers import serving

WEATHER = "what is the weather like in Paris tomorrow"
TOKENS = ("genuine-team-token", "flooding-token")


@pytest.fixture()
def index(tmp_path: Path) -> Path:
    return make_index(tmp_path)


def test_typed_names_teach_nothing_even_through_a_reindex(index: Path) -> None:
    with serving(open_engine(index)) as served:
        for session in ("inv-1", "inv-2", "inv-3"):
            turn = served.stub.Route(pb.RouteRequest(message=f"/skill-1 {WEATHER}",
                                                     session_id=session))
            assert turn.explicit_content
        assert served.stub.Reindex(pb.ReindexRequest()).index_version
        after = route(served.stub, WEATHER, "someone")
    assert positives(index) == set() and learned_examples(index, FeedbackConfig()) == []
    assert "skill-1" not in [s.name for s in after.skills]


def test_an_activation_from_a_forced_route_teaches_nothing(index: Path) -> None:
    with serving(open_engine(index)) as served:
        for session in ("s1", "s2", "s3"):
            turn = served.stub.Route(pb.RouteRequest(message=f"/skill-4 {PDF}",
                                                     session_id=session, top_k=3))
            assert "skill-0" in [s.name for s in turn.skills
                                 if s.reason == pb.ROUTE_REASON_RETRIEVED]
            activate(served.stub, "skill-0", session, turn.route_id)
            activate(served.stub, "skill-0", session)  # the session's window: the same Route
    assert positives(index) == set()


def _teach(stub: pb_grpc.SkillRouterStub, prefix: str, count: int,
           token: str | None = None) -> None:
    """``count`` distinct PDF requests, each routed and activated in two fresh sessions."""
    metadata = (("authorization", f"Bearer {token}"),) if token else None
    for i in range(count):
        for copy in ("a", "b"):
            session = f"{prefix}-{i}-{copy}"
            turn = stub.Route(pb.RouteRequest(message=f"{PDF} {prefix} {i}", session_id=session,
                                              top_k=1), metadata=metadata)
            assert [s.name for s in turn.skills] == ["skill-0"]
            stub.Activate(pb.ActivateRequest(name="skill-0", session_id=session,
                                             route_id=turn.route_id), metadata=metadata)


def _learned(index: Path, policy: FeedbackConfig) -> list[str]:
    return sorted(e.query for e in learned_examples(index, policy))


def test_a_flood_evicts_none_of_the_earlier_examples_on_disk_either(index: Path) -> None:
    caps = {"max_rows_per_skill": 12, "max_per_principal": 12}
    engine = open_engine(index, **caps)
    with serving(engine) as served:
        _teach(served.stub, "genuine", 5)
        burst = _learned(index, FeedbackConfig(**caps))  # type: ignore[arg-type]
        assert len(burst) == 5  # a burst of distinct sessions teaches at once
        _teach(served.stub, "planted", 20)
    engine.recorder.close()  # as when the process ends: its segment can be compacted
    policy = FeedbackConfig(**caps)  # type: ignore[arg-type]
    assert FileStore(index, policy).compact()
    learned = _learned(index, policy)
    assert [q for q in learned if "genuine" in q] == [f"{PDF} genuine {i}" for i in range(5)]
    assert len(learned) == 12
    assert {q for _, q, _ in positives(index)} == set(learned)  # compaction kept these rows


def test_what_one_principal_teaches_one_skill_is_capped(index: Path, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("\n".join(TOKENS) + "\n")
    caps = {"max_rows_per_skill": 20, "max_per_principal": 6}
    with serving(open_engine(index, **caps), auth_token_file=str(tokens)) as served:
        _teach(served.stub, "planted", 15, TOKENS[1])
        _teach(served.stub, "genuine", 4, TOKENS[0])
        with pytest.raises(grpc.RpcError) as refused:  # a token is still required
            served.stub.Route(pb.RouteRequest(message=PDF))
    assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED
    learned = _learned(index, FeedbackConfig(**caps))  # type: ignore[arg-type]
    assert [q for q in learned if "planted" in q] == [f"{PDF} planted {i}" for i in range(6)]
    assert [q for q in learned if "genuine" in q] == [f"{PDF} genuine {i}" for i in range(4)]
