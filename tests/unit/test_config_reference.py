"""docs/configuration.md names every key the configuration has, with its environment variable,
and its defaults are the configuration's; a value a key does not take is refused."""

from __future__ import annotations

import re
from dataclasses import fields

import pytest

from router.config import Config, load_config
from router.errors import InvalidRequest
from tests.support import REPO

REFERENCE = REPO / "docs" / "configuration.md"


def _keys() -> list[tuple[str, str]]:
    config = Config()
    return [(section.name, key.name) for section in fields(config)
            for key in fields(getattr(config, section.name))]


def _rows() -> dict[str, list[str]]:
    """The reference's table rows by key: ``| `section.key` | default | env | flag | ... |``."""
    rows = {}
    for line in REFERENCE.read_text(encoding="utf-8").splitlines():
        match = re.match(r"\| `([a-z_]+\.[a-z_0-9]+)` \|", line)
        if match:
            rows[match.group(1)] = [cell.strip() for cell in line.strip("|").split("|")]
    return rows


def test_every_key_has_a_row_with_its_environment_variable() -> None:
    rows = _rows()
    keys = _keys()
    assert len(keys) > 70
    missing = [f"{s}.{k}" for s, k in keys if f"{s}.{k}" not in rows]
    assert missing == []
    for section, key in keys:
        env = f"`SKILL_ROUTER_{section.upper()}_{key.upper()}`"
        assert rows[f"{section}.{key}"][2] == env, f"{section}.{key}"
    assert set(rows) == {f"{s}.{k}" for s, k in keys}  # no row for a key that is gone


def test_the_defaults_written_are_the_configuration_s() -> None:
    config = Config()
    for name, row in _rows().items():
        section, key = name.split(".")
        value = getattr(getattr(config, section), key)
        written = row[1]
        if isinstance(value, bool):
            assert written.startswith(f"`{str(value).lower()}`"), name
        elif isinstance(value, int | float) or (isinstance(value, str) and value):
            assert written.startswith(f"`{value}`"), name
        elif isinstance(value, str):
            assert written == '`""`', name
        elif isinstance(value, tuple) and value:
            assert all(item in written for item in value), name
        else:  # an empty list, or no value (None)
            assert written.startswith(("`[]`", "none")), name


def test_the_row_checker_can_fail() -> None:
    assert "routing.top_k" in _rows()
    assert "routing.no_such_key" not in _rows()


@pytest.mark.parametrize("mode", ["tool", "file"])
def test_an_activation_mode_is_taken(mode: str) -> None:
    assert load_config(env={"SKILL_ROUTER_ROUTING_ACTIVATION_MODE": mode}) \
        .routing.activation_mode == mode


def test_a_misspelt_activation_mode_is_refused() -> None:
    with pytest.raises(InvalidRequest, match=r"routing.activation_mode: 'tools' is not one of "
                                             r"tool, file"):
        load_config(env={"SKILL_ROUTER_ROUTING_ACTIVATION_MODE": "tools"})
