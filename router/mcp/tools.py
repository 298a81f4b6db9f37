"""The three tools as the model sees them: descriptions, result text and structured output.

``SkillTools`` turns backend answers into MCP tool results and refusals into ``ToolError``
(the SDK returns those as ``isError`` results). It knows nothing of transports: the server
hands it the MCP session key of each call.

The model calls these tools, so they never hand it a user-only skill (``disable-model-invocation``:
only the user may start it): ``activate_skill`` refuses it (the activator's rule), a ``/name`` of
one in a ``search_skills`` query is read as a plain word (the model wrote the query, not the
user: nothing is activated or marked active), and ``read_skill_resource`` refuses its SKILL.md
(or manifest.json) and any bundled file with the same bytes. The host-facing reads
(``resources/read``, ``skills/get``) keep serving it with its frontmatter, for the host to start
it when its user asks (docs/mcp.md).
"""

from __future__ import annotations

import base64
import logging
import posixpath
import re

import anyio.to_thread
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import BlobResourceContents, CallToolResult, EmbeddedResource, TextContent
from pydantic import BaseModel

from router.activation.activator import Resource
from router.errors import RouterError
from router.mcp.backend import Backend
from router.mcp.resources import resource_uri
from router.mcp.sessions import DoorSessions
from router.routing.query_text import explicit_names

log = logging.getLogger(__name__)

SEARCH_DESCRIPTION = (
    "Find the skills (expert instructions for specific kinds of task) that fit the user's "
    "request. Call this at the start of every new task, before you start working, with the "
    "user's request as the query (verbatim or in your own words). The result lists the skills "
    "that fit, with their descriptions. When one matches the task, call activate_skill with its "
    "name and follow the instructions it returns. When the result says no skill fits, continue "
    "without one. Skills already activated in this conversation are listed as active: you "
    "already have their instructions.")
ACTIVATE_DESCRIPTION = (
    "Load the full instructions of a skill that search_skills listed, by its exact name. Call it "
    "when a listed skill's description matches the task, then follow the instructions. The "
    "result is a <skill_content> block with the instructions, the skill's directory and its "
    "bundled files (<skill_resources>); read a bundled file with read_skill_resource. A skill "
    "already activated in this conversation is not sent again: keep using the instructions you "
    "already have.")
READ_DESCRIPTION = (
    "Read one file bundled with a skill: a script, reference or template listed in "
    "<skill_resources> of activate_skill's result. Give the skill's name and the path exactly as "
    "listed (relative to the skill directory). Text files come back as text, other files as a "
    "binary blob. Paths that leave the skill directory are refused.")
USER_ONLY = ("skill {name!r} can only be started by the user (type /{name} in the host); the "
             "model may not load its instructions")
NO_SKILL_FITS = ("No skill fits this request: continue without one. Call search_skills again "
                 "when the task changes.")


class SkillHit(BaseModel):
    """One skill in search_skills' structured output."""

    name: str
    description: str
    score: float
    reason: str


class SearchOutput(BaseModel):
    """search_skills' structured output: the narrowed catalog, in catalog order."""

    skills: list[SkillHit]
    index_version: str


class ActivateOutput(BaseModel):
    """activate_skill's structured output."""

    name: str
    already_active: bool
    resources: list[str]
    resources_truncated: bool


def plain_word(query: str, name: str) -> str:
    """``query`` with ``/name`` and ``$name`` mentions of ``name`` left as the bare word."""
    mention = re.compile(rf"(?:^|(?<=\s))[/$]({re.escape(name)})(?=$|[\s.,:;!?)])", re.IGNORECASE)
    return mention.sub(lambda m: m.group(1), query)


def already_active_text(name: str) -> str:
    return (f"Skill {name!r} is already active in this conversation: its instructions were "
            "sent earlier, so they are not repeated. Keep following them.")


def as_text(resource: Resource) -> str | None:
    """The file as text when it is UTF-8 without NUL bytes; None for a binary file."""
    try:
        text = resource.content.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if "\x00" in text else text


def resource_result(resource: Resource) -> CallToolResult:
    """A text file as text; anything else as a base64 blob."""
    text = as_text(resource)
    if text is not None:
        return CallToolResult(content=[TextContent(type="text", text=text)])
    blob = BlobResourceContents(uri=resource_uri(resource.name, resource.path),
                                mime_type=resource.media_type,
                                blob=base64.b64encode(resource.content).decode("ascii"))
    return CallToolResult(content=[EmbeddedResource(type="resource", resource=blob)])


class SkillTools:
    """The tools' behaviour over one backend, with the door's per-session state."""

    def __init__(self, backend: Backend, sessions: DoorSessions) -> None:
        self.backend = backend
        self.sessions = sessions

    def _user_only(self) -> dict[str, str]:
        """Lower-cased name -> the defining file of every user-only skill (blocking)."""
        return {f.name.lower(): f.skill_file for f in self.backend.skills()
                if not f.model_invocable}

    def _model_query(self, query: str) -> str:
        """``query`` with its mentions of user-only skills made plain words (blocking)."""
        names = {name.lower() for name in explicit_names(query)[0]}
        if not names:
            return query  # no mention: no ListSkills call on the turn's path
        for name in names & self._user_only().keys():
            query = plain_word(query, name)
        return query

    def _model_read(self, name: str, path: str) -> Resource:
        """``read_resource`` for the model: never a user-only skill's instructions."""
        found = self.backend.read_resource(name, path)
        skill_file = self._user_only().get(found.name.lower())
        if skill_file is None:
            return found
        if (posixpath.normpath(path).casefold() == skill_file.casefold()
                or found.content == self.backend.read_resource(found.name, skill_file).content):
            raise ToolError(USER_ONLY.format(name=found.name))
        return found

    async def search(self, key: str, query: str, top_k: int) -> CallToolResult:
        state = self.sessions.state(key)
        try:
            query = await anyio.to_thread.run_sync(self._model_query, query)
            found = await anyio.to_thread.run_sync(self.backend.search, query, top_k, state)
        except RouterError as exc:
            raise ToolError(str(exc)) from exc
        self.sessions.routed(key, found.route_id)
        output = SearchOutput(skills=[SkillHit(name=h.name, description=h.description,
                                               score=h.score, reason=h.reason)
                                      for h in found.hits], index_version=found.index_version)
        text = found.catalog_text or NO_SKILL_FITS
        if found.explicit_content:  # the query began with /name: Route activated that skill
            named = next((h.name for h in found.hits if h.reason == "explicit"), "")
            self.sessions.mark_active(state, named)
            text = f"{text}\n\n{found.explicit_content}"
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content=output.model_dump(mode="json"))

    async def activate(self, key: str, name: str) -> CallToolResult:
        state = self.sessions.state(key)
        try:
            done = await anyio.to_thread.run_sync(self.backend.activate, name, state)
        except RouterError as exc:
            raise ToolError(str(exc)) from exc
        if not done.already_active:
            self.sessions.mark_active(state, done.name)
        text = already_active_text(done.name) if done.already_active else done.content
        output = ActivateOutput(name=done.name, already_active=done.already_active,
                                resources=list(done.resources),
                                resources_truncated=done.resources_truncated)
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content=output.model_dump(mode="json"))

    async def read(self, name: str, path: str) -> CallToolResult:
        try:
            found = await anyio.to_thread.run_sync(self._model_read, name, path)
        except RouterError as exc:
            raise ToolError(str(exc)) from exc
        return resource_result(found)
