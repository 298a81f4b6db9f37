"""The MCP Skills extension (SEP-2640, ``io.modelcontextprotocol/skills`` with
``directoryRead: true``): ``skills/list``, ``skills/get`` and ``resources/directory/read``, over
the door's backend. Implemented against the extension's stable specification text,
modelcontextprotocol/ext-skills ``specification/stable/skills.mdx`` at commit 0682b7b (2026-09).

Entries come from the index (``router.mcp.entries``): every file with the size and digest the
build recorded, which are exactly the bytes ``resources/read`` serves (a file changed since the
build is refused, never served). Directory listings are the recorded files too, so a directory
read never shows a file the manifest would not let a host read.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote

import anyio.to_thread
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, PaginatedRequestParams

from router.door.api import Call, mcp_code
from router.door.backend import Backend
from router.door.entries import SkillEntry
from router.errors import RouterError
from router.mcp.entries import SKILL_FILE, listed, refusal, to_wire
from router.mcp.uris import SCHEME, parse_uri, resource_uri
from router.skills.resources import check_resource_path, media_type

IDENTIFIER = "io.modelcontextprotocol/skills"
PAGE_SIZE = 100  # skills per skills/list page, children per directory page
TTL_MS = 60_000  # a listing may change with every Reindex
CACHE_SCOPE = "private"
DIRECTORY = "inode/directory"


class GetSkillParams(PaginatedRequestParams):
    uri: str


class DirectoryParams(PaginatedRequestParams):
    uri: str


def _invalid(message: str, uri: str = "") -> MCPError:
    return MCPError(code=INVALID_PARAMS, message=message, data={"uri": uri} if uri else None)


def _refused(exc: RouterError, message: str, uri: str = "") -> MCPError:
    """The answer for ``exc`` a call raised (its code from ``router.door.api``'s table)."""
    return MCPError(code=mcp_code(exc), message=message, data={"uri": uri} if uri else None)


def _offset(cursor: str | None) -> int:
    if not cursor:
        return 0
    try:
        value = int(base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii"))
    except (ValueError, binascii.Error, UnicodeError) as exc:
        raise _invalid(f"invalid cursor {cursor!r}: pass back a nextCursor unchanged") from exc
    if value < 0:
        raise _invalid(f"invalid cursor {cursor!r}")
    return value


def _page(items: Sequence[dict[str, Any]], cursor: str | None) -> tuple[list[dict[str, Any]],
                                                                        dict[str, Any]]:
    start = _offset(cursor)
    end = start + PAGE_SIZE
    more = {"nextCursor": base64.urlsafe_b64encode(str(end).encode()).decode()} if (
        end < len(items)) else {}
    return list(items[start:end]), more


def served_entry(entries: Sequence[SkillEntry], uri: str) -> SkillEntry:
    """The served skill whose SKILL.md is at ``uri``; INVALID_PARAMS otherwise."""
    try:
        name, path = parse_uri(uri)
    except RouterError as exc:
        raise _refused(exc, f"no skill is served at {uri}: {exc}", uri) from exc
    entry = next((e for e in entries if e.name == name), None)
    if entry is None or path != SKILL_FILE:
        raise _invalid(f"no skill is served at {uri}", uri)
    refused = refusal(entry)
    if refused:
        raise _invalid(f"no skill is served at {uri}: {refused}", uri)
    return entry


def directory_children(entry: SkillEntry, paths: Sequence[str], folder: str,
                       uri: str) -> list[dict[str, Any]]:
    """The direct children of ``folder`` ("" for the skill root) among ``paths``."""
    prefix = f"{folder}/" if folder else ""
    files: dict[str, dict[str, Any]] = {}
    for path in paths:
        if not path.startswith(prefix):
            continue
        head, sep, _ = path[len(prefix):].partition("/")
        child = prefix + head
        kind = DIRECTORY if sep else media_type(child)
        files.setdefault(child, {"uri": resource_uri(entry.name, child), "name": head,
                                 "mimeType": kind})
    if not files:
        raise _invalid(f"{uri} is not a directory resource", uri)
    return [files[k] for k in sorted(files)]


async def declare_on_legacy_handshake(ctx: ServerRequestContext[Any, Any],
                                      call_next: CallNext) -> HandlerResult:
    """Keep ``capabilities.extensions`` in a 2025-11-25 ``initialize`` result.

    The SDK advertises extensions through ``ServerCapabilities.extensions``, a 2026-07-28 field
    that its 2025-11-25 serializer drops; hosts on the handshake era (the Inspector's default)
    read the declaration from the same place, so it is put back after serialization."""
    result = await call_next(ctx)
    if ctx.method != "initialize" or not isinstance(result, dict):
        return result
    capabilities = result.get("capabilities")
    if isinstance(capabilities, dict):
        declared = capabilities.setdefault("extensions", {})
        if isinstance(declared, dict):
            declared.setdefault(IDENTIFIER, {"directoryRead": True})
    return result


class SkillsExtension(Extension):
    """The extension over ``backend`` (blocking calls run in a worker thread)."""

    identifier = IDENTIFIER

    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    def settings(self) -> dict[str, Any]:
        return {"directoryRead": True}

    def methods(self) -> Sequence[MethodBinding]:
        return (MethodBinding("skills/list", PaginatedRequestParams, self.list_skills),
                MethodBinding("skills/get", GetSkillParams, self.get_skill),
                MethodBinding("resources/directory/read", DirectoryParams, self.read_directory))

    async def _entries(self) -> tuple[SkillEntry, ...]:
        try:
            return await anyio.to_thread.run_sync(self.backend.skill_entries)
        except RouterError as exc:
            raise MCPError(code=mcp_code(exc, Call.LISTING), message=str(exc)) from exc

    async def list_skills(self, ctx: ServerRequestContext[Any, Any],
                          params: PaginatedRequestParams) -> dict[str, Any]:
        shown = [to_wire(e) for e in await self._entries() if listed(e)]
        page, more = _page(shown, params.cursor)
        return {"resultType": "complete", "skills": page, **more, "ttlMs": TTL_MS,
                "cacheScope": CACHE_SCOPE}

    async def get_skill(self, ctx: ServerRequestContext[Any, Any],
                        params: GetSkillParams) -> dict[str, Any]:
        entry = served_entry(await self._entries(), params.uri)
        return {"resultType": "complete", "skill": to_wire(entry), "ttlMs": TTL_MS,
                "cacheScope": CACHE_SCOPE}

    async def read_directory(self, ctx: ServerRequestContext[Any, Any],
                             params: DirectoryParams) -> dict[str, Any]:
        uri = params.uri
        if not uri.startswith(SCHEME):
            raise _invalid(f"{uri} is not a directory resource", uri)
        raw_name, _, raw_folder = uri[len(SCHEME):].partition("/")
        name, folder = unquote(raw_name), unquote(raw_folder)
        if not name or raw_folder.endswith("/"):
            raise _invalid(f"{uri} is not a directory resource (directory URIs have no "
                           "trailing slash)", uri)
        if folder:
            try:
                check_resource_path(folder)
            except RouterError as exc:
                raise _refused(exc, f"{uri} is not a directory resource: {exc}", uri) from exc
        entry = served_entry(await self._entries(), resource_uri(name, SKILL_FILE))
        paths = entry.file_paths()
        if paths is None:  # an index without digests: the live listing
            paths = await self._live_paths(entry)
        children = directory_children(entry, paths, folder, uri)
        page, more = _page(children, params.cursor)
        return {"resultType": "complete", "resources": page, **more}

    async def _live_paths(self, entry: SkillEntry) -> tuple[str, ...]:
        try:
            listing = await anyio.to_thread.run_sync(self.backend.list_resources, entry.name)
        except RouterError as exc:
            raise _refused(exc, str(exc)) from exc
        return (entry.skill_file, *listing.files)
