"""Named catalogs: their names, their order, and discovery keeping every catalog's variant."""

from __future__ import annotations

from pathlib import Path

import pytest

from router.config import DiscoveryConfig
from router.errors import InvalidRequest
from router.skills.catalogs import catalog_order, check_name, parse_spec, parse_specs
from router.skills.discovery import discover
from router.skills.model import DEFAULT_CATALOG, Skill
from tests.support.skills import add_skill


@pytest.mark.parametrize("name", ["", "Payments", "-x", "a" * 64, "a_b", "a/b"])
def test_bad_catalog_names_are_refused(name: str) -> None:
    with pytest.raises(InvalidRequest, match="catalog name"):
        check_name(name)


def test_project_is_reserved() -> None:
    with pytest.raises(InvalidRequest, match="reserved"):
        parse_spec("project=/tmp")


def test_a_spec_needs_a_folder() -> None:
    with pytest.raises(InvalidRequest, match="NAME=DIR"):
        parse_spec("payments")


def test_order_is_the_flags_then_default() -> None:
    specs = parse_specs(["b=/x", "a=/y", "b=/z"])
    assert catalog_order(specs) == ("b", "a", DEFAULT_CATALOG)
    assert catalog_order(parse_specs(["default=/x", "a=/y"])) == (DEFAULT_CATALOG, "a")


def _by(skills: tuple[Skill, ...]) -> dict[tuple[str, str], Skill]:
    return {(s.catalog, s.name): s for s in skills}


def test_discovery_keeps_one_name_in_every_catalog(tmp_path: Path) -> None:
    for catalog in ("one", "two", "three"):
        add_skill(tmp_path / catalog, "deploy", f"Deploy the {catalog} service.")
    add_skill(tmp_path / "bundled", "deploy", "Deploy from the default catalog.")
    config = DiscoveryConfig(bundled_roots=(str(tmp_path / "bundled"),), catalogs=parse_specs(
        [f"{c}={tmp_path / c}" for c in ("one", "two", "three")]))
    found = discover(config)
    by = _by(found.skills)
    assert set(by) == {(c, "deploy") for c in ("one", "two", "three", DEFAULT_CATALOG)}
    assert by[("two", "deploy")].description == "Deploy the two service."
    assert by[("two", "deploy")].key == "two/deploy"
    assert by[(DEFAULT_CATALOG, "deploy")].key == "deploy"
    assert not found.shadowed


def test_within_one_catalog_the_first_found_wins(tmp_path: Path) -> None:
    add_skill(tmp_path / "a", "deploy", "First deploy.")
    add_skill(tmp_path / "b", "deploy", "Second deploy.")
    config = DiscoveryConfig(catalogs=parse_specs([f"ops={tmp_path / 'a'}",
                                                   f"ops={tmp_path / 'b'}"]))
    found = discover(config)
    assert [(s.catalog, s.description) for s in found.skills] == [("ops", "First deploy.")]
    assert len(found.shadowed) == 1 and "shadowed" in found.diagnostics[-1].message


def test_a_missing_catalog_root_is_a_warning(tmp_path: Path) -> None:
    found = discover(DiscoveryConfig(catalogs=(f"gone={tmp_path / 'nope'}",)))
    assert not found.skills
    assert any("catalog 'gone' root not found" in d.message for d in found.diagnostics)


def test_the_catalog_survives_the_index_record() -> None:
    skill = Skill("x", "d", "/l/SKILL.md", "/l", catalog="ops")
    assert Skill.from_dict(skill.to_dict()) == skill
    legacy = {k: v for k, v in skill.to_dict().items() if k != "catalog"}
    assert Skill.from_dict(legacy).catalog == DEFAULT_CATALOG
