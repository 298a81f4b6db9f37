"""The Python client speaks the tenancy fields: a turn's project skills and the operators'
listing of every catalog, over a real gRPC server."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from router.client import SkillRouterClient
from tests.service.test_project_skills import LINT, PREVIEW
from tests.support.catalogs import three_catalogs
from tests.support.indexes import open_engine
from tests.support.servers import serving


def test_the_client_sends_project_skills_and_asks_for_every_catalog(tmp_path: Path) -> None:
    engine = open_engine(three_catalogs(tmp_path))
    try:
        with serving(engine) as served, SkillRouterClient(
                f"127.0.0.1:{served.running.port}", timeout=10) as client:
            routed = client.route("deploy the preview environment", top_k=5,
                                  project_skills=[PREVIEW, LINT])
            explained = client.explain("deploy the preview environment", top_k=5,
                                       project_skills=[PREVIEW])
            plain = client.route("deploy the preview environment", top_k=5)
            view = client.list_skills()
            every = client.list_skills(all_catalogs=True)
    finally:
        engine.close()
    assert {s.name: s.catalog for s in routed.skills}["deploy"] == "project"
    assert PREVIEW.location in routed.catalog_text
    assert ("deploy", "project") in {(s.name, s.catalog) for s in explained.route.skills}
    assert "deploy" in {c.name for c in explained.candidates if c.kept}
    assert "project" not in {s.catalog for s in plain.skills}
    per_name = Counter(s.name for s in every.skills)
    assert per_name["deploy"] > 1  # the same name in several catalogs, each listed
    assert Counter(s.name for s in view.skills)["deploy"] == 1  # one per name in a view
    assert len({s.catalog for s in every.skills}) == 3
