"""The HTTP door's callers as principals: ``mcp --transport http --principals FILE``
(``mcp.principals_file``), the same file ``serve --principals`` reads.

A caller's bearer token names its principal (``router.access.principals``); the door's accepted
tokens (``--accept-token-file`` / ``--accept-token-env``) act as principals with the roles
route, ops and admin on every catalog, as on ``serve``: one principal table, built by
``router.access.callers.load_table`` as every door builds its own. ``BearerGate`` answers 401
to an HTTP request without a known token (``router.mcp.auth``), and ``acting_for_caller``, an
MCP server middleware, serves each request as its caller: it refuses a principal without
``route`` (``router.access.roles.require``) and sets ``ACTING`` for the handlers to a
principal of the file, whose backend then passes it on (in-process: to the Engine; with
``--target``: ``x-skill-router-principal``, so the service serves the caller within the door's
own roles and catalogs); a caller of the door's token file is served as the door itself, as
without a principals file. ``reload`` reads the sources again (on SIGHUP); a file that no
longer loads keeps the principals in use and logs why.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_REQUEST

from router.access.callers import LiveTable, load_table
from router.access.model import ROUTE
from router.access.roles import RoleMissing, require
from router.access.table import Entry, PrincipalTable
from router.bearer import bearer_token
from router.config import McpConfig
from router.door.api import Call, mcp_code
from router.door.context import ACTING

log = logging.getLogger(__name__)

OPEN_METHODS = frozenset({"initialize", "ping"})


def door_table(config: McpConfig, env: Mapping[str, str] | None = None) -> PrincipalTable:
    """The door's principals: those of ``config.principals_file`` plus its accepted tokens."""
    return load_table(config.principals_file, config.accept_token_file,
                      config.accept_token_env, env=env, env_setting="mcp.accept_token_env")


def door_principals(config: McpConfig, env: Mapping[str, str] | None = None) -> LiveTable:
    """The door's principal table, read again on ``reload``."""
    return LiveTable(lambda: door_table(config, env), "door's principals")


def caller_entry(principals: LiveTable, headers: Mapping[str, str] | None) -> Entry | None:
    """The principal whose token ``headers`` carry, or None."""
    if headers is None:
        return None
    return principals.table.by_token(bearer_token(headers.get("authorization")))


def acting_for_caller(principals: LiveTable) -> Any:
    """The MCP server middleware serving each request as its caller's principal."""

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        entry = caller_entry(principals, getattr(ctx.request, "headers", None))
        if entry is None:  # the HTTP gate let it through: a token just rotated away
            raise MCPError(code=INVALID_REQUEST, message="the caller's token is no longer "
                                                         "accepted")
        if ctx.method not in OPEN_METHODS and not ctx.method.startswith("notifications/"):
            try:
                require(entry.principal, ROUTE, ctx.method)
            except RoleMissing as exc:
                raise MCPError(code=mcp_code(exc, Call.GATE), message=str(exc)) from None
        # an accepted token of the door's token file: the door calls as itself
        token = ACTING.set(entry.principal if entry.from_file else None)
        try:
            return await call_next(ctx)
        finally:
            ACTING.reset(token)

    return middleware
