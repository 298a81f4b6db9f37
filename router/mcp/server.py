"""The MCP server: ``MCPServer`` from the official SDK with the three tools and ``skill://``
resources, over one backend.

The de-duplication key of a call is its MCP session: the ``Mcp-Session-Id`` header on streamable
HTTP (checked by the SDK's session manager before a handler runs), and the process itself on
stdio, where one host talks to one server process. A request without a session (stateless HTTP)
has no memory: every activation returns the instructions.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from typing import Annotated, Any

import anyio.to_thread
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, ToolAnnotations
from mcp_types import Resource as MCPResource
from mcp_types import ResourceTemplate as MCPResourceTemplate
from pydantic import AnyUrl, Field

from router.access.callers import LiveTable
from router.door.api import mcp_code
from router.door.backend import Backend
from router.errors import RouterError
from router.mcp import tools
from router.mcp.principals import acting_for_caller
from router.mcp.resources import URI_TEMPLATE, list_skill_resources, parse_uri
from router.mcp.sessions import DoorSessions
from router.mcp.skills_ext import SkillsExtension, declare_on_legacy_handshake
from router.mcp.strings import refuse_nul
from router.mcp.trace_context import carry_traceparent

log = logging.getLogger(__name__)

SESSION_HEADER = "mcp-session-id"
INSTRUCTIONS = ("Skills are expert instructions for specific kinds of task. At the start of "
                "every new task call search_skills with the user's request; activate a listed "
                "skill that fits with activate_skill and follow its instructions.")
_READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


class SkillDoor(MCPServer[Any]):
    """skill-router's MCP server over ``backend``; with ``principals`` each request is served
    as its caller's principal (``router.mcp.principals``)."""

    def __init__(self, backend: Backend, sessions: DoorSessions | None = None,
                 principals: LiveTable | None = None) -> None:
        acting = [acting_for_caller(principals)] if principals is not None else []
        super().__init__(name="skill-router", instructions=INSTRUCTIONS, log_level="WARNING",
                         extensions=[SkillsExtension(backend)],
                         middleware=[refuse_nul, carry_traceparent, *acting,
                                     declare_on_legacy_handshake])
        self.backend = backend
        self.tools = tools.SkillTools(backend, sessions or DoorSessions())
        self._process_key = f"stdio-{uuid.uuid4().hex}"
        self._add_tools()

    def session_key(self, ctx: Context[Any, Any]) -> str:
        """The MCP session a call belongs to ("" when it has none)."""
        headers = ctx.headers
        if headers is None:
            return self._process_key
        return str(headers.get(SESSION_HEADER, ""))

    def _add_tools(self) -> None:
        door = self

        async def search_skills(
            query: Annotated[str, Field(description="The user's request or the task at hand.")],
            ctx: Context[Any, Any],
            top_k: Annotated[int, Field(description="How many skills to retrieve at most.",
                                        ge=1, le=50)] = 5,
        ) -> Annotated[CallToolResult, tools.SearchOutput]:
            return await door.tools.search(door.session_key(ctx), query, top_k)

        async def activate_skill(
            name: Annotated[str, Field(description="The skill's name, exactly as listed.")],
            ctx: Context[Any, Any],
        ) -> Annotated[CallToolResult, tools.ActivateOutput]:
            return await door.tools.activate(door.session_key(ctx), name)

        async def read_skill_resource(
            name: Annotated[str, Field(description="The skill's name.")],
            path: Annotated[str, Field(description="The file's path relative to the skill "
                                                   "directory, as listed in <skill_resources>.")],
        ) -> CallToolResult:
            return await door.tools.read(name, path)

        self.add_tool(search_skills, description=tools.SEARCH_DESCRIPTION,
                      annotations=_READ_ONLY)
        self.add_tool(activate_skill, description=tools.ACTIVATE_DESCRIPTION,
                      annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True,
                                                  open_world_hint=False))
        self.add_tool(read_skill_resource, description=tools.READ_DESCRIPTION,
                      annotations=_READ_ONLY)

    async def list_resources(self) -> list[MCPResource]:
        found = await anyio.to_thread.run_sync(list_skill_resources, self.backend)
        return [MCPResource(uri=r.uri, name=r.name, description=r.description,
                            mime_type=r.mime_type) for r in found]

    async def list_resource_templates(self) -> list[MCPResourceTemplate]:
        return [MCPResourceTemplate(
            uri_template=URI_TEMPLATE, name="skill-file",
            description="A skill's SKILL.md (or manifest.json) or one of its bundled files.")]

    async def read_resource(self, uri: AnyUrl | str,
                            context: Context[Any, Any] | None = None
                            ) -> Iterable[ReadResourceContents]:
        where = str(uri)
        try:
            name, path = parse_uri(where)
            found = await anyio.to_thread.run_sync(self.backend.read_resource, name, path)
        except RouterError as exc:
            raise MCPError(code=mcp_code(exc), message=str(exc), data={"uri": where}) from exc
        text_content = tools.as_text(found)
        content = found.content if text_content is None else text_content
        return [ReadResourceContents(content=content, mime_type=found.media_type)]
