"""A Reindex whose scan is cut short by a directory cap fails and keeps serving what it had."""

from __future__ import annotations

from pathlib import Path

import pytest

from router.cli import main
from router.index.versions.layout import current_version
from router.skills.scan_plan import IncompleteScan
from tests.support.indexes import index_argv, open_engine
from tests.support.skills import add_skill, write_catalog


def test_a_cut_short_reindex_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    skills, out = write_catalog(tmp_path / "skills", 3), tmp_path / "index"
    monkeypatch.setenv("SKILL_ROUTER_DISCOVERY_CATALOG_MAX_DIRS", "8")  # recorded in the index
    assert main(index_argv(skills, out)) == 0
    monkeypatch.delenv("SKILL_ROUTER_DISCOVERY_CATALOG_MAX_DIRS")
    engine = open_engine(out)
    served = engine.info().version
    for i in range(10):
        add_skill(skills, f"skill-new-{i}", "Handles more work.")
    with pytest.raises(IncompleteScan, match="scan was cut short"):
        engine.reindex()
    assert engine.info().version == served == current_version(out)
