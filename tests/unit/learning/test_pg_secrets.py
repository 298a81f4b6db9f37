"""A store URL whose password holds ``/``, ``@``, ``+`` or ``=``: the user info is taken off up
to the last ``@`` before anything parses it, so no log line, message or location shows the
password or a piece of it, and the URL still reaches the right server (a real PostgreSQL)."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from router.config import FeedbackConfig
from router.config.store_url import masked, split_userinfo
from router.learning.pg_rows import safe_location
from router.learning.pg_store import PgStore
from tests.support.postgres import postgres_dsn  # noqa: F401  (the fixture)

PASSWORDS = ["Base64/Pw+Q==", "sec@retPW", "a/b@c+d=e0Zq", "pl+us=eq/sl@at@x"]


def pieces(password: str) -> list[str]:
    """The password and every piece of it a parser splitting at / @ : could show."""
    return [password, *(p for p in re.split(r"[/@:]", password) if len(p) >= 3)]


@pytest.mark.parametrize("password", PASSWORDS)
def test_the_user_info_runs_to_the_last_at(password: str) -> None:
    url = f"postgresql://someone:{password}@127.0.0.1:1/nowhere"
    assert split_userinfo(url).password == password
    assert safe_location(url) == "postgresql://someone@127.0.0.1:1/nowhere"
    assert masked(url) == "postgresql://someone:***@127.0.0.1:1/nowhere"


@pytest.mark.parametrize("password", PASSWORDS)
def test_no_log_line_nor_message_shows_the_password(password: str, tmp_path: Path,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    url = f"postgresql://someone:{password}@127.0.0.1:1/nowhere"
    store = PgStore(url, FeedbackConfig(spool_dir=str(tmp_path)))
    with pytest.raises(OSError) as caught:
        store.read_rows()
    store.close()
    shown = caplog.text + str(caught.value) + store.location
    assert "127.0.0.1:1" in shown
    assert not [p for p in pieces(password) if p in shown], shown


def test_a_password_with_those_characters_reaches_the_server(postgres_dsn: str,  # noqa: F811
                                                             tmp_path: Path) -> None:
    host = postgres_dsn.split("@", 1)[1]  # the throwaway cluster trusts loopback
    store = PgStore(f"postgresql://postgres:{PASSWORDS[3]}@{host}postgres",
                    FeedbackConfig(spool_dir=str(tmp_path)))
    assert store.schema_version() > 0 and not store.backlog().unreachable
    assert store.location == f"postgresql://postgres@{host}postgres"
    store.close()
