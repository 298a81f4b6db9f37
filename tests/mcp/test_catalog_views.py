"""The MCP door acting for a caller: skills/list, skill:// resources and the Skills
extension's entries hold only its view; a skill outside it reads as a missing one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from router.door.backend import EngineBackend
from router.door.context import CallSession
from router.engine import Engine
from router.errors import NotFound
from router.mcp.resources import list_skill_resources
from tests.support.catalogs import PRINCIPALS, three_catalogs
from tests.support.indexes import open_engine


@pytest.fixture
def door(tmp_path: Path) -> Iterator[EngineBackend]:
    engine: Engine = open_engine(three_catalogs(tmp_path))
    yield EngineBackend(engine)
    engine.close()


def test_resources_and_entries_hold_the_callers_view(door: EngineBackend) -> None:
    pay = door.for_caller(PRINCIPALS["pay"])
    assert sorted(s.name for s in pay.skills()) == ["deploy", "git-commit", "refund-payment"]
    uris = {r.uri for r in list_skill_resources(pay)}
    assert "skill://deploy/SKILL.md" in uris
    assert not any("internal-audit" in uri for uri in uris)
    entries = {e.name: e for e in pay.skill_entries()}
    assert set(entries) == {"deploy", "git-commit", "refund-payment"}
    assert b"Deploy the payments service" in pay.read_resource("deploy", "SKILL.md").content
    org = door.for_caller(PRINCIPALS["org"])
    assert b"Deploy the org service" in org.read_resource("deploy", "SKILL.md").content


def test_a_skill_outside_the_view_is_not_found(door: EngineBackend) -> None:
    pay = door.for_caller(PRINCIPALS["pay"])
    with pytest.raises(NotFound, match="no skill named 'internal-audit'"):
        pay.read_resource("internal-audit", "SKILL.md")
    with pytest.raises(NotFound):
        pay.activate("internal-audit", CallSession("s"))
    mine = door.for_caller(PRINCIPALS["int"])
    assert b"internal ledgers" in mine.read_resource("internal-audit", "SKILL.md").content


def test_search_routes_within_the_view(door: EngineBackend) -> None:
    org = door.for_caller(PRINCIPALS["org"])
    found = org.search("audit internal ledgers for compliance", 5, CallSession("s"))
    assert "internal-audit" not in {h.name for h in found.hits}
    assert "internal-audit" not in found.catalog_text
