"""``server.expose_paths``: off, no answer of any RPC (nor an error message) carries an absolute
path of the server's disk, while activation and bundled files still work; on (the default), the
answers are today's."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from google.protobuf.message import Message

from router.config import load_config
from router.routing.model import RouteQuery
from router.service.codec.index import info_to_proto, skills_to_proto
from router.service.codec.routing import route_to_proto
from router.v1 import router_pb2 as pb
from router.v1 import router_pb2_grpc as pb_grpc
from tests.support.indexes import cli_index, open_engine
from tests.support.servers import Served, serving
from tests.support.skills import Tree, add_skill, write_skill, write_tree

FORMATS = (pb.CATALOG_FORMAT_XML, pb.CATALOG_FORMAT_JSON, pb.CATALOG_FORMAT_MARKDOWN)
PDF_QUERY = "extract the tables from this PDF file"


@dataclass(frozen=True)
class Site:
    base: Path  # every file of the test lives under it: the skills, the index, the secret
    tree: Tree


def strings(message: Message) -> Iterator[str]:
    """Every string field of ``message``, nested and repeated ones too."""
    for descriptor, value in message.ListFields():
        items = value if descriptor.is_repeated else [value]
        for item in items:
            if isinstance(item, Message):
                yield from strings(item)
            elif isinstance(item, str):
                yield item


def leaks(base: Path, *answers: Message | str) -> list[str]:
    """The strings of ``answers`` that name ``base`` (as given or resolved)."""
    spelled = {str(base), os.path.realpath(base)}
    found = []
    for answer in answers:
        texts = [answer] if isinstance(answer, str) else list(strings(answer))
        found.extend(t for t in texts if any(s in t for s in spelled))
    return found


@pytest.fixture()
def site(tmp_path: Path) -> Site:
    tree = write_tree(tmp_path)
    (tree.root / "broken").mkdir()
    (tree.root / "broken" / "SKILL.md").write_text("---\nname: broken\n---\nno description\n")
    add_skill(tree.root, "vanishing", "Translates release notes into French.")
    cli_index(tree.root, tree.index)  # records the discovery settings (Reindex repeats them)
    return Site(tmp_path, tree)


@pytest.fixture()
def hidden(site: Site) -> Iterator[Served]:
    with serving(open_engine(site.tree.index), expose_paths=False) as served:
        yield served


def every_answer(stub: pb_grpc.SkillRouterStub) -> list[Message]:
    """One answer of every RPC that could name a path (Reindex last: it changes the version)."""
    routes = [stub.Route(pb.RouteRequest(message=PDF_QUERY, format=f), timeout=30)
              for f in FORMATS]
    answers: list[Message] = [
        *routes,
        stub.Route(pb.RouteRequest(message="/pdf-tools merge these", session_id="s1"),
                   timeout=30),
        stub.Explain(pb.RouteRequest(message=PDF_QUERY), timeout=30),
        stub.ListSkills(pb.ListSkillsRequest(include_files=True), timeout=30),
        stub.ListSkills(pb.ListSkillsRequest(), timeout=30),
        stub.GetIndexInfo(pb.GetIndexInfoRequest(), timeout=30),
        stub.Activate(pb.ActivateRequest(name="pdf-tools", session_id="s2",
                                         include_frontmatter=True), timeout=30),
        stub.ListResources(pb.ListResourcesRequest(name="pdf-tools"), timeout=30),
        stub.ReadResource(pb.ReadResourceRequest(name="pdf-tools", path="SKILL.md"),
                          timeout=30),
        stub.ValidateArguments(pb.ValidateArgumentsRequest(
            name="book-meeting", arguments_json='{"date": 3}'), timeout=30),
        stub.SkillStats(pb.SkillStatsRequest(), timeout=30),
        stub.ListExamples(pb.ListExamplesRequest(), timeout=30),
    ]
    return answers


def test_hidden_paths_reach_no_caller_and_activation_still_works(site: Site,
                                                                 hidden: Served) -> None:
    stub, root = hidden.stub, site.tree.root
    answers = every_answer(stub)
    write_skill(root / "git-helper", "git-helper", "Writes git commit messages and explains "
                "git history and rebases.")  # changed: the Reindex builds and swaps
    reindexed = stub.Reindex(pb.ReindexRequest(), timeout=60)
    after = stub.GetIndexInfo(pb.GetIndexInfoRequest(), timeout=30)
    assert reindexed.swapped and reindexed.diagnostics  # the broken skill is reported
    assert leaks(site.base, *answers, reindexed, after) == []

    listed = {s.name: s.location for s in answers[5].skills}  # type: ignore[attr-defined]
    assert listed["pdf-tools"] == "pdf-tools/SKILL.md"
    assert listed["book-meeting"] == "book-meeting/manifest.json"
    assert answers[7].path == answers[7].version  # type: ignore[attr-defined]
    assert after.path == after.version == reindexed.index_version
    assert "<location>pdf-tools/SKILL.md</location>" in answers[0].catalog_text  # type: ignore
    for route in answers[:3]:
        assert route.catalog_chars == len(route.catalog_text)  # type: ignore[attr-defined]
    assert any(d.path == "broken/SKILL.md" for d in reindexed.diagnostics)

    activated = answers[8]
    assert activated.skill_dir == "pdf-tools"  # type: ignore[attr-defined]
    assert "tables" in activated.content  # type: ignore[attr-defined]
    assert "scripts/extract.py" in activated.resources  # type: ignore[attr-defined]
    assert "<skill_content" in answers[3].explicit_content  # type: ignore[attr-defined]
    read = answers[10]
    assert read.content == (root / "pdf-tools" / "SKILL.md").read_bytes()  # type: ignore
    script = stub.ReadResource(pb.ReadResourceRequest(name="pdf-tools",
                                                      path="scripts/extract.py"), timeout=30)
    assert script.content == b"print('tables')\n"


def test_an_error_message_names_no_path_either(site: Site, hidden: Served) -> None:
    (site.tree.root / "vanishing" / "SKILL.md").unlink()
    with pytest.raises(grpc.RpcError) as failed:
        hidden.stub.Activate(pb.ActivateRequest(name="vanishing"), timeout=30)
    assert failed.value.code() is grpc.StatusCode.NOT_FOUND
    assert "vanishing/SKILL.md" in (failed.value.details() or "")
    assert leaks(site.base, failed.value.details() or "") == []


def test_by_default_the_answers_are_unchanged(site: Site) -> None:
    engine = open_engine(site.tree.index)
    with serving(engine) as served:
        stub = served.stub
        listed = stub.ListSkills(pb.ListSkillsRequest(include_files=True), timeout=30)
        info = stub.GetIndexInfo(pb.GetIndexInfoRequest(), timeout=30)
        activated = stub.Activate(pb.ActivateRequest(name="pdf-tools"), timeout=30)
        routed = stub.Route(pb.RouteRequest(message=PDF_QUERY), timeout=30)
    snapshot = engine.snapshot
    assert listed == skills_to_proto(snapshot, snapshot.skills, True, engine.diagnostics(),
                                     info.version)
    assert info == info_to_proto(engine.info())
    assert info.path == snapshot.info.path and os.path.isabs(info.path)
    assert activated.skill_dir == str(site.tree.root / "pdf-tools")
    expected = route_to_proto(engine.route(RouteQuery(message=PDF_QUERY)))
    assert routed.catalog_text == expected.catalog_text
    assert str(site.tree.root / "pdf-tools" / "SKILL.md") in routed.catalog_text
    assert leaks(site.base, listed, info, activated, routed)  # today's absolute paths


def test_an_index_given_as_a_relative_folder_is_named_by_its_version(
        site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(site.base)
    with serving(open_engine(Path(site.tree.index.name)), expose_paths=False) as served:
        info = served.stub.GetIndexInfo(pb.GetIndexInfoRequest(), timeout=30)
    assert info.path == info.version and info.version


def test_the_setting_comes_from_the_flag_the_file_or_the_environment(tmp_path: Path) -> None:
    from router.cli import build_parser
    from router.cli.service import _server_config

    default, flagged = (build_parser().parse_args(argv) for argv in (["serve"],
                                                                      ["serve", "--hide-paths"]))
    assert _server_config(default, load_config(env={})).expose_paths is True
    assert _server_config(flagged, load_config(env={})).expose_paths is False
    file = tmp_path / "router.yaml"
    file.write_text("server:\n  expose_paths: false\n")
    assert _server_config(default, load_config(file, env={})).expose_paths is False
    env = {"SKILL_ROUTER_SERVER_EXPOSE_PATHS": "false"}
    assert _server_config(default, load_config(env=env)).expose_paths is False
