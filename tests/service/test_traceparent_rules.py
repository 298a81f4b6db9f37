"""Through a real server with an audit log: a traceparent W3C calls invalid (version ``ff``,
zero ids) is ignored, the call gets a trace id of its own; a valid one is continued."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from router.engine import Engine
from router.v1 import router_pb2 as pb
from tests.support.servers import serving

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"


@pytest.mark.parametrize(("traceparent", "continued"), [
    (f"ff-{TRACE}-{PARENT}-01", False),
    (f"00-{TRACE}-{'0' * 16}-01", False),
    (f"00-{TRACE}-{PARENT}-01", True),
])
def test_an_invalid_traceparent_is_not_continued(tree_engine: Engine, tmp_path: Path,
                                                 traceparent: str, continued: bool) -> None:
    log = tmp_path / "audit.jsonl"
    with serving(tree_engine, audit_log=str(log)) as served:
        served.stub.ListSkills(pb.ListSkillsRequest(), timeout=30,
                               metadata=[("traceparent", traceparent)])
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) == 1
    assert (lines[0]["trace_id"] == TRACE) is continued
