"""Calling the Skills extension's methods with the SDK client (it has no typed methods for
them): a raw request, the result as the wire carries it."""

from __future__ import annotations

from typing import Any

from mcp import Client
from mcp_types import PaginatedRequestParams, Request
from pydantic import BaseModel, ConfigDict


class _Result(BaseModel):
    """Any result: every field kept as the wire named it."""

    model_config = ConfigDict(extra="allow")


class _Params(PaginatedRequestParams):
    uri: str | None = None


async def call(client: Client, method: str, **params: Any) -> dict[str, Any]:
    """``method`` (``skills/list``, ``skills/get``, ``resources/directory/read``) with
    ``params`` (``uri``, ``cursor``)."""
    request: Request[Any, str] = Request(method=method, params=_Params(**params))
    result = await client.session.send_request(request, _Result)
    return result.model_dump()
