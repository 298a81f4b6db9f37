"""The one constructor of a door's principal table, and the table a door serves with.

Every door (``serve``, the MCP door over HTTP, the ops console) builds its table with
``load_table``: the principals of its principals file (``router.access.principals``) plus its
accepted tokens (a token file, one token per line, and/or a variable of comma-separated tokens,
read by ``router.bearer``; or tokens already read), each token a principal named by its sha256
with the roles route, ops and admin on every catalog. No file and no token: an empty table, a
door that authenticates nobody. ``LiveTable`` holds the table in use and reads it again on
``reload`` (a door's SIGHUP); a table that no longer loads keeps the one in use.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

from router.access.principals import load_principals
from router.access.table import PrincipalTable
from router.bearer import read_tokens
from router.errors import InvalidRequest

log = logging.getLogger(__name__)


def load_table(principals_file: str = "", token_file: str = "", token_env: str = "", *,
               tokens: Sequence[bytes] = (), env: Mapping[str, str] | None = None,
               env_setting: str = "the token variable") -> PrincipalTable:
    """The principals of ``principals_file`` ("" = none) with the tokens of ``token_file``,
    of the variable ``token_env`` (looked up in ``env``, default the process environment;
    ``env_setting`` names it in errors) and ``tokens``. InvalidRequest naming the file and
    line of a problem, or a token source that cannot be read or holds no token."""
    accepted = (*read_tokens(token_file, token_env, env, env_setting=env_setting), *tokens)
    table = load_principals(principals_file) if principals_file else PrincipalTable()
    return table.with_tokens(accepted)


class LiveTable:
    """The principal table ``load`` builds, built again on ``reload``; a table that no longer
    loads keeps the one in use (``reload`` logs why and returns False). The table is swapped
    whole, so readers on other threads see the old one or the new one."""

    def __init__(self, load: Callable[[], PrincipalTable], what: str = "principals") -> None:
        self._load, self._what = load, what
        self.table = load()

    def reload(self) -> bool:
        try:
            table = self._load()
        except InvalidRequest as exc:
            log.error("kept the %s in use: the new ones do not load: %s", self._what, exc)
            return False
        self.table = table
        log.info("reloaded the %s: %d", self._what, len(table))
        return True

    def accepts(self, token: bytes | None) -> bool:
        """Whether ``token`` is a principal's of the table in use."""
        return self.table.accepts(token)
