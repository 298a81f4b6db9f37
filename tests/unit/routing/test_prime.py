"""``Engine.prime`` (what ``serve`` runs while the model loads) renders the whole catalog's
size ahead, so the first Route of a caller of every catalog finds it and renders only its own
catalog."""

from __future__ import annotations

from pathlib import Path

import pytest

from router.routing import catalog
from router.routing.model import RouteQuery
from tests.support.indexes import index_catalog, open_engine


def test_the_first_route_after_prime_renders_only_its_own_catalog(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, index = index_catalog(tmp_path, 12)
    engine = open_engine(index)
    rendered: list[int] = []
    real = catalog.render

    def counting(entries, *args, **kwargs):  # type: ignore[no-untyped-def]
        rendered.append(len(entries))
        return real(entries, *args, **kwargs)

    monkeypatch.setattr(catalog, "render", counting)
    engine.prime()
    assert rendered == [12]  # the whole catalog, once
    result = engine.route(RouteQuery(message="merge PDF files and tables"))
    assert 0 < len(result.skills) < 12
    assert set(rendered[1:]) == {len(result.skills)}  # its own catalog only, not the whole
    assert result.full_catalog_chars > result.catalog_chars > 0
    engine.close()
