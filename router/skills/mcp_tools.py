"""MCP servers' tools as callable skills (pure: no I/O; the listing is ``mcp_servers``).

``--mcp-server NAME=COMMAND`` (``discovery.mcp_servers``) names a server: COMMAND is a command
line split as a shell would (``shlex``) and run over stdio, or an ``http://`` / ``https://``
URL of a streamable-HTTP server. NAME is a catalog name (``router.skills.catalogs``) and every
tool the server lists becomes one callable skill of that catalog (``SkillKind.MCP_TOOL``):
the tool's description, its ``inputSchema`` as the parameters, its annotations kept.

Names. A skill's name is the tool's name in skill-name form: lowercase, every run of other
characters than ``a-z`` and ``0-9`` one ``-``, at most 64 characters (``git_log`` is the skill
``git-log``). The model APIs see the tool's own name (``Skill.tool_name``, ``api_name``) when it
is a valid API tool name (``[A-Za-z0-9_-]{1,64}``); other characters become ``_``. When two
servers list tools of one skill name (or a skill of another source holds it), each such tool
is told apart by its server: skill ``NAME-tool`` and tool name ``NAME__tool`` (``fs-read-file``
and ``fs__read_file``). A tool whose names still clash, or with no description or an unusable
schema, is left out with a diagnostic.

A tool skill has no folder: its location is ``mcp://NAME/TOOL``, and its one file, the record
a build digests and Activate reads, is ``tool_document``: the listed tool as canonical JSON.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import quote

from router.common.json_text import compact
from router.errors import InvalidRequest, SkillParseError
from router.skills.catalogs import check_name
from router.skills.limits import NAME_LINT_CHARS
from router.skills.manifest import check_parameters
from router.skills.model import Diagnostic, Level, Scope, Skill, SkillKind

TOOL_FILE = "tool.json"  # the name a tool skill's one recorded file goes by
SCHEME = "mcp://"
API_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_NOT_API = re.compile(r"[^A-Za-z0-9_-]")
_NOT_SKILL = re.compile(r"[^a-z0-9]+")
KEPT_ANNOTATIONS = ("title", "readOnlyHint", "destructiveHint", "idempotentHint",
                    "openWorldHint")


@dataclass(frozen=True)
class ServerSpec:
    """One configured server: its catalog name and either a command line or a URL."""

    name: str
    command: tuple[str, ...] = ()
    url: str = ""

    @property
    def shown(self) -> str:
        """The server as a diagnostic names it (the executable or the URL, no arguments)."""
        return self.url or self.command[0]


def parse_spec(spec: str) -> ServerSpec:
    """``NAME=COMMAND`` or ``NAME=URL`` as a ``ServerSpec``; InvalidRequest when malformed."""
    name, sep, rest = spec.partition("=")
    rest = rest.strip()
    if not sep or not rest:
        raise InvalidRequest(f"--mcp-server {spec!r}: expected NAME=COMMAND or NAME=URL")
    name = check_name(name.strip())
    if re.match(r"https?://", rest):
        return ServerSpec(name, url=rest)
    try:
        command = tuple(shlex.split(rest))
    except ValueError as exc:
        raise InvalidRequest(f"--mcp-server {name}: cannot split the command ({exc})") from exc
    if not command:
        raise InvalidRequest(f"--mcp-server {name}: the command is empty")
    return ServerSpec(name, command=command)


def parse_specs(specs: Iterable[str]) -> tuple[ServerSpec, ...]:
    """Every spec parsed; InvalidRequest for a malformed one or a NAME given twice."""
    parsed = tuple(parse_spec(s) for s in specs)
    names = [s.name for s in parsed]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InvalidRequest(f"--mcp-server: {', '.join(twice)} named more than once")
    return parsed


def skill_name_for(text: str) -> str:
    """``text`` in skill-name form (``git_log`` -> ``git-log``; "" when nothing is left)."""
    return _NOT_SKILL.sub("-", text.lower()).strip("-")[:NAME_LINT_CHARS].strip("-")


def api_name_for(text: str) -> str:
    """``text`` as a model API tool name: other characters than ``[A-Za-z0-9_-]`` as ``_``,
    at most 64."""
    return _NOT_API.sub("_", text)[:64]


def location_of(server: str, tool: str) -> str:
    return f"{SCHEME}{server}/{quote(tool, safe='')}"


def tool_document(skill: Skill) -> bytes:
    """The tool skill's one file: what the server listed, as canonical JSON (the bytes a build
    digests and an activation reads)."""
    record = {"server": skill.catalog, "tool": str(skill.metadata.get("mcp-tool", "")),
              "name": skill.api_name, "description": skill.description,
              "inputSchema": dict(skill.parameters or {}),
              "annotations": dict(skill.annotations)}
    return compact(record, sort_keys=True).encode("utf-8")


@dataclass(frozen=True)
class _Tool:
    server: str
    name: str  # as the server lists it
    description: str
    schema: Mapping[str, Any]
    annotations: Mapping[str, Any]


def _read_tool(server: str, raw: Mapping[str, Any]) -> _Tool | Diagnostic:
    name = raw.get("name")
    where = location_of(server, str(name))
    if not isinstance(name, str) or not name:
        return Diagnostic(Level.ERROR, location_of(server, ""), "a tool without a name; skipped",
                          server)
    description = raw.get("description") or raw.get("title") or ""
    if not isinstance(description, str) or not description.strip():
        return Diagnostic(Level.ERROR, where, "the tool has no description; skipped", server)
    try:
        schema = check_parameters(raw.get("inputSchema") or {"type": "object"}, path=where)
    except SkillParseError as exc:
        return Diagnostic(Level.ERROR, where, f"{exc.reason}; skipped", server)
    found = raw.get("annotations")
    notes: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    kept = {k: notes[k] for k in KEPT_ANNOTATIONS if isinstance(notes.get(k), bool | str)}
    return _Tool(server, name, description.strip(), schema, kept)


def tool_skills(listed: Mapping[str, Sequence[Mapping[str, Any]]],
                taken: Collection[str] = ()) -> tuple[list[Skill], list[Diagnostic]]:
    """The skills of every server's listed tools (``listed``: server name -> tools as the
    server sent them, camelCase keys), named as the module notes say; ``taken``: the skill
    names other sources hold."""
    tools: list[_Tool] = []
    diagnostics: list[Diagnostic] = []
    for server in listed:
        for raw in listed[server]:
            read = _read_tool(server, raw)
            if isinstance(read, Diagnostic):
                diagnostics.append(read)
            else:
                tools.append(read)
    holders: dict[str, set[str]] = {}
    for tool in tools:
        holders.setdefault(skill_name_for(tool.name), set()).add(tool.server)
    skills: list[Skill] = []
    used: set[tuple[str, str]] = set()
    api_used: set[str] = set()
    for tool in tools:
        plain = skill_name_for(tool.name)
        shared = len(holders[plain]) > 1 or plain in taken
        name = skill_name_for(f"{tool.server}-{tool.name}") if shared else plain
        api = api_name_for(f"{tool.server}__{tool.name}" if shared else tool.name)
        where = location_of(tool.server, tool.name)
        if not name or (tool.server, name) in used or api in api_used:
            diagnostics.append(Diagnostic(Level.ERROR, where, f"tool {tool.name!r} has a name "
                                          "another tool of the index holds; skipped",
                                          tool.server))
            continue
        used.add((tool.server, name))
        api_used.add(api)
        skills.append(_skill(tool, name, api))
    return skills, diagnostics


def _skill(tool: _Tool, name: str, api: str) -> Skill:
    where = location_of(tool.server, tool.name)
    skill = Skill(name=name, description=tool.description, location=where, base_dir=where,
                  scope=Scope.ORG, kind=SkillKind.MCP_TOOL,
                  metadata={"mcp-server": tool.server, "mcp-tool": tool.name},
                  parameters=dict(tool.schema), catalog=tool.server, tool_name=api,
                  annotations=dict(tool.annotations))
    return replace(skill, content_hash=hashlib.sha256(tool_document(skill)).hexdigest())
