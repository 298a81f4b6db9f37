"""SkillStats, ListExamples and PurgeExamples over a real server on port 0 (the hash embedder):
the same figures as ``skill-router stats`` and ``examples list``, purges that hide examples on
the spot, bad input refused with INVALID_ARGUMENT, a purge refused without a token, and a
server that records no traffic saying so."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from router.cli import main
from router.client import SkillRouterClient
from router.config import FeedbackConfig
from router.errors import RouterError
from router.learning.traffic import learned_examples
from router.service.server import RouterServer
from router.v1 import router_pb2 as pb
from tests.support.learning import DOCKER, GIT, PDF, make_index, open_engine, teach
from tests.support.servers import start_server

TOKEN = "learning-token"


@pytest.fixture()
def index(tmp_path: Path) -> Path:
    return make_index(tmp_path)


@pytest.fixture()
def running(index: Path) -> Iterator[RouterServer]:
    server = start_server(open_engine(index))
    yield server
    server.stop(0)


@pytest.fixture()
def client(running: RouterServer) -> Iterator[SkillRouterClient]:
    with SkillRouterClient(f"127.0.0.1:{running.port}", timeout=10.0) as caller:
        yield caller


def refused(call: object, *args: object, **kwargs: object) -> RouterError:
    with pytest.raises(RouterError) as caught:
        call(*args, **kwargs)  # type: ignore[operator]
    return caught.value


def test_skill_stats_match_the_cli(client: SkillRouterClient, index: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    pdf = teach(client, ["a", "b"], PDF)
    for session in ("a", "b", "c"):
        client.route(DOCKER, session_id=session, top_k=1)  # routed, never activated
    stats = client.skill_stats(min_routed=3)
    assert stats.feedback_enabled and stats.min_routed == 3
    by_skill = {s.skill: s for s in stats.skills}
    # shown 4: retrieved twice, then active in sessions a and b when DOCKER was routed there
    assert (by_skill[pdf].routed, by_skill[pdf].shown, by_skill[pdf].activated) == (2, 4, 2)
    assert by_skill[pdf].hit_rate == 1.0
    assert by_skill["skill-3"].hit_rate == 0.0 and by_skill["skill-3"].routed == 3
    assert list(stats.never_activated) == ["skill-3"]
    assert main(["stats", "--index", str(index), "--min-routed", "3", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["never_activated"] == list(stats.never_activated)
    assert [(s["skill"], s["routed"], s["shown"], s["activated"]) for s in printed["skills"]] == \
        [(s.skill, s.routed, s.shown, s.activated) for s in stats.skills]
    assert client.skill_stats().min_routed == 10  # 0: the default


def test_examples_are_listed_and_marked_learned_once_two_sessions_agree(
        client: SkillRouterClient) -> None:
    pdf = teach(client, ["a"], PDF)
    alone = client.list_examples(skill=pdf)
    assert [(e.query, e.session_id, e.positive, e.learned) for e in alone.examples] == \
        [(PDF, "", True, False)]  # one session cannot teach alone; no session id is shown
    teach(client, ["b"], PDF)
    teach(client, ["a", "b"], GIT)
    both = client.list_examples(skill=pdf)
    assert both.total == 2 and all(e.learned and e.skill == pdf for e in both.examples)
    assert both.examples[0].recorded_at <= both.examples[1].recorded_at
    everyone = client.list_examples()
    assert everyone.total == 4 and len(client.list_examples(limit=1).examples) == 1
    assert client.list_examples(older_than_days=1).total == 0  # all recorded just now
    assert client.list_examples(skill="no-such-skill").total == 0


def test_a_purge_hides_a_skills_examples_at_once(client: SkillRouterClient, index: Path) -> None:
    pdf = teach(client, ["a", "b"], PDF)
    git = teach(client, ["a", "b"], GIT)
    done = client.purge_examples(skill=pdf)
    assert done.purged == 2
    assert client.list_examples(skill=pdf).total == 0
    assert {e.skill for e in client.list_examples().examples} == {git}
    assert {e.skills for e in learned_examples(index, FeedbackConfig())} == {(git,)}
    assert client.purge_examples(skill=pdf, older_than_days=0).purged == 0
    teach(client, ["c", "d"], PDF)  # new traffic is learned again
    assert client.list_examples(skill=pdf).total == 2
    assert client.purge_examples(older_than_days=0).purged == 4  # every skill's
    assert client.list_examples().total == 0


def test_bad_input_is_invalid_argument_with_a_way_out(client: SkillRouterClient) -> None:
    for call, kwargs, hint in ((client.purge_examples, {}, "say what to purge"),
                               (client.purge_examples, {"skill": "x", "older_than_days": -1},
                                "0 or more days"),
                               (client.purge_examples, {"older_than_days": float("nan")},
                                "0 or more days"),
                               (client.list_examples, {"older_than_days": -2}, "0 or more"),
                               (client.list_examples, {"limit": -1}, "limit"),
                               (client.skill_stats, {"min_routed": -1}, "min_routed")):
        error = refused(call, **kwargs)
        assert error.code is grpc.StatusCode.INVALID_ARGUMENT, kwargs
        assert hint in error.details


def test_a_purge_needs_a_token_where_the_server_asks_for_one(index: Path,
                                                             tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(TOKEN + "\n")
    server = start_server(open_engine(index), auth_token_file=str(tokens))
    target = f"127.0.0.1:{server.port}"
    try:
        with SkillRouterClient(target, timeout=10.0) as anonymous:
            for call in (anonymous.purge_examples, anonymous.list_examples):
                kwargs = {"skill": "skill-0"}
                assert refused(call, **kwargs).code is grpc.StatusCode.UNAUTHENTICATED
        with SkillRouterClient(target, timeout=10.0, token=TOKEN) as caller:
            assert caller.purge_examples(skill="skill-0").purged == 0
            assert caller.skill_stats().feedback_enabled
    finally:
        server.stop(0)


def test_a_server_recording_nothing_says_so(index: Path) -> None:
    server = start_server(open_engine(index, enabled=False))
    try:
        with SkillRouterClient(f"127.0.0.1:{server.port}", timeout=10.0) as caller:
            caller.route(PDF, session_id="a")
            stats = caller.skill_stats()
            listed = caller.list_examples()
        assert not stats.feedback_enabled and list(stats.skills) == []
        assert not listed.feedback_enabled and listed.total == 0
    finally:
        server.stop(0)


def test_the_messages_carry_every_counter() -> None:
    fields = {f.name for f in pb.SkillCounters.DESCRIPTOR.fields}
    assert {"routed", "shown", "activated", "succeeded", "failed", "wrong", "not_used",
            "hit_rate"} <= fields


def test_the_cli_asks_a_running_server_with_target(
        client: SkillRouterClient, running: RouterServer, index: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    pdf = teach(client, ["a", "b"], PDF)
    target = ["--target", f"127.0.0.1:{running.port}"]
    assert main(["stats", "--index", str(index), "--min-routed", "1", "--json"]) == 0
    local = capsys.readouterr().out
    assert main(["stats", *target, "--min-routed", "1", "--json"]) == 0
    assert capsys.readouterr().out == local
    assert main(["examples", "list", *target, "--skill", pdf]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert len(listed) == 2 and all(line.startswith(f"{pdf}\tpositive") for line in listed)
    assert main(["examples", "purge", *target, "--skill", pdf]) == 0
    assert "purged 2 examples" in capsys.readouterr().out
    assert client.list_examples(skill=pdf).total == 0
    assert main(["examples", "purge", *target, "--older-than", "-1"]) == 2
    assert main(["examples", "list", *target, "--index", str(index)]) == 2
    assert "not both" in capsys.readouterr().err


def test_the_cli_purge_with_target_needs_the_servers_token(index: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str],
                                                           ) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(TOKEN + "\n")
    server = start_server(open_engine(index), auth_token_file=str(tokens))
    target = ["--target", f"127.0.0.1:{server.port}"]
    try:
        assert main(["examples", "purge", *target, "--skill", "skill-0"]) == 1
        assert "UNAUTHENTICATED" in capsys.readouterr().err
        assert main(["examples", "purge", *target, "--skill", "skill-0",
                     "--token-file", str(tokens)]) == 0
    finally:
        server.stop(0)
