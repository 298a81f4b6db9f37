"""The one constructor of a door's principal table, and the table a door reloads."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from router.access.callers import LiveTable, load_table
from router.access.model import ROUTE
from router.errors import InvalidRequest
from tests.support.principals import entry, write_principals


def principals_file(path: Path, token: str, roles: tuple[str, ...] = ("route",)) -> str:
    return str(write_principals(path, entry("team", token, roles, ["payments"])))


def test_no_file_and_no_token_is_an_empty_table() -> None:
    assert len(load_table()) == 0


def test_the_file_and_every_token_source_make_one_table(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("# accepted\nfrom-file\n")
    table = load_table(principals_file(tmp_path / "p.yaml", "tok-team"), str(tokens), "VAR",
                       tokens=(b"given",), env={"VAR": "from-env"})
    team = table.by_token(b"tok-team")
    assert team is not None and team.from_file and team.principal.roles == {ROUTE}
    for token in (b"from-file", b"from-env", b"given"):
        entry = table.by_token(token)
        assert entry is not None and not entry.from_file
    assert len(table) == 4 and table.source == str(tmp_path / "p.yaml")


def test_tokens_alone_make_a_table_of_token_principals() -> None:
    table = load_table(token_env="VAR", env={"VAR": "a,b"})
    assert len(table) == 2 and table.has_tokens and table.accepts(b"a")


def test_a_source_that_does_not_load_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidRequest, match=r"mcp\.accept_token_env names 'NOPE'"):
        load_table(token_env="NOPE", env={}, env_setting="mcp.accept_token_env")
    with pytest.raises(InvalidRequest, match="cannot read the principals file"):
        load_table(str(tmp_path / "missing.yaml"))
    path = principals_file(tmp_path / "p.yaml", "tok-team")
    with pytest.raises(InvalidRequest, match="also the token of principal 'team'"):
        load_table(path, tokens=(b"tok-team",))


def test_a_live_table_reloads_and_keeps_the_old_one_when_the_new_does_not_load(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = principals_file(tmp_path / "p.yaml", "old")
    live = LiveTable(lambda: load_table(path), "door's principals")
    assert live.accepts(b"old")
    principals_file(tmp_path / "p.yaml", "new")
    assert live.reload() and live.accepts(b"new") and not live.accepts(b"old")
    principals_file(tmp_path / "p.yaml", "newer", roles=("boss",))
    with caplog.at_level(logging.ERROR):
        assert not live.reload()
    assert live.accepts(b"new")  # the table in use is kept
    assert "kept the door's principals in use" in caplog.text
