"""Activate skills, serve their bundled files, and check callable skills' arguments.

``Activator`` is the application-level half of activation; the gRPC servicer and the CLI call it
through the Engine and know nothing of files. Every file is read through the skill source
handed in (``router.skills.sources.base``; the disk unless another is given), never opened here: a
skill's instructions from its ``SKILL.md`` at activation time, its bundled files on request.
A callable (``manifest.json``) skill's content is generated from its indexed record, so the
schema the model sees is the one its arguments are validated against; an MCP server's tool's
too, once its recorded ``tool.json`` passes the digest check (``router.skills.sources.mcp``).

Rules, in order: an unknown name is ``NotFound`` (with close names suggested); a disabled skill is
``PermissionDenied``; a user's explicit ``/name`` needs a user-invocable skill, and activation by
the model needs a model-invocable one (``PermissionDenied`` otherwise). A skill already active in
the session, or named by the caller as already in context, comes back with
``already_active=True`` and no content, so the same instructions never enter a conversation twice.
Deprecated skills are no longer routed but can still be activated by name.

Integrity: when the index recorded per-file digests (``router.skills.digests``), the SKILL.md an
activation reads and every file ReadResource serves are checked against them after the read
(by the source's checked reads, whatever the source);
a file changed since the build (or never recorded) is ``StaleFile``, never served, until a
Reindex records it. So an edit to SKILL.md reaches the model only through a Reindex.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from router.access.ownership import check_session_fields
from router.activation.content import manifest_body, render_content
from router.activation.sessions import SessionStore
from router.common.textsafe import is_unicode
from router.errors import InvalidRequest, NotFound, PermissionDenied, SkillParseError
from router.skills import digests
from router.skills.digests import SkillDigests
from router.skills.files import skill_text
from router.skills.limits import REQUEST_NAME_CHARS, RESOURCE_LIST_CAP, RESOURCE_MAX_BYTES
from router.skills.model import DEFAULT_CATALOG, Skill, SkillKind
from router.skills.sources.base import SkillSource, create_source

if TYPE_CHECKING:
    from router.activation.arguments import ValidationResult

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Activation:
    """The result of activating a skill. ``content`` is empty when ``already_active``."""

    name: str
    content: str
    resources: tuple[str, ...]
    resources_truncated: bool
    skill_dir: str
    already_active: bool
    catalog: str = DEFAULT_CATALOG  # the catalog of the skill activated


@dataclass(frozen=True)
class Resource:
    """One bundled file of a skill, read on request."""

    name: str
    path: str
    content: bytes
    size: int
    media_type: str


@dataclass(frozen=True)
class ResourceList:
    """A skill's bundled files as Activate lists them, for a caller that has not activated it."""

    name: str
    files: tuple[str, ...]
    truncated: bool
    skill_dir: str


class SkillLookup(Protocol):
    """The skills a caller may see (its view): each name's skill, and every name held."""

    def skill(self, name: str) -> Skill | None: ...

    def names(self) -> Sequence[str]: ...


class Activator:
    """Activation, resource reads and argument checks against a skill lookup; each call may
    look names up ``within`` a caller's view instead (a skill outside it is not found, with
    suggestions from the view only). Every file is read through ``source`` (the disk source
    unless another is given)."""

    def __init__(self, lookup: Callable[[str], Skill | None], names: Callable[[], Sequence[str]],
                 sessions: SessionStore | None = None, *,
                 resource_list_cap: int = RESOURCE_LIST_CAP,
                 resource_max_bytes: int = RESOURCE_MAX_BYTES,
                 digests: Callable[[], Mapping[str, SkillDigests] | None] | None = None,
                 source: SkillSource | None = None) -> None:
        self.source = source if source is not None else create_source()
        self._lookup = lookup
        self._digests = digests or (lambda: None)
        self._names = names
        self.sessions = sessions if sessions is not None else SessionStore()
        self._list_cap = resource_list_cap
        self._max_bytes = resource_max_bytes

    def find(self, name: str, within: SkillLookup | None = None) -> Skill:
        """The enabled skill called ``name``; ``NotFound`` (with suggestions) or
        ``PermissionDenied`` (disabled)."""
        if not name or not name.strip():
            raise InvalidRequest("skill name is empty: give a name from the catalog")
        if len(name) > REQUEST_NAME_CHARS or "\x00" in name:
            raise InvalidRequest("skill name is not valid: give a name from the catalog")
        skill = self._lookup(name) if within is None else within.skill(name)
        if skill is None:
            raise NotFound(self._unknown_message(
                name, self._names() if within is None else within.names()))
        if not skill.enabled:
            raise PermissionDenied(f"skill {name!r} is disabled")
        return skill

    def _unknown_message(self, name: str, names: Sequence[str]) -> str:
        close = difflib.get_close_matches(name, list(names), n=5, cutoff=0.6)
        if close:
            return f"no skill named {name!r}; did you mean: {', '.join(close)}?"
        return f"no skill named {name!r}; route a message to see the available skills"

    def activate(self, name: str, session_id: str = "", active_skills: Collection[str] = (),
                 include_frontmatter: bool = False, explicit: bool = False,
                 within: SkillLookup | None = None) -> Activation:
        """Activate ``name`` for the model (or, with ``explicit``, for the user's ``/name``)."""
        check_session_fields(session_id, active_skills)
        skill = self.find(name, within)
        _check_invocation(skill, explicit)
        listing = self.source.list_files(skill, self._list_cap)
        files = self._servable(skill.key, listing.files)
        if listing.skipped:
            log.warning("skill %s: %d bundled file name(s) not listed (not UTF-8 or control "
                        "characters): %s", skill.name, len(listing.skipped),
                        ", ".join(listing.skipped[:5]))

        def result(content: str, already: bool) -> Activation:
            return Activation(skill.name, content, files, listing.truncated, skill.base_dir,
                              already, skill.catalog)

        if skill.name in active_skills or self.sessions.is_active(session_id, skill.name):
            return result("", True)
        body = self._body(skill, include_frontmatter)
        content = render_content(skill.name, body, skill.base_dir, files, listing.truncated,
                                 omitted=listing.omitted, complete=listing.complete)
        _check_deliverable(skill.name, content)  # before the session remembers it as given
        if not self.sessions.mark_active(session_id, skill.name):
            return result("", True)  # a concurrent activation in this session won
        log.info("activated skill %s (%s)", skill.name, "user" if explicit else "model")
        return result(content, False)

    def _body(self, skill: Skill, include_frontmatter: bool) -> str:
        if skill.kind is SkillKind.MANIFEST:
            return manifest_body(skill.name, skill.description, skill.parameters)
        if skill.kind is SkillKind.MCP_TOOL:  # its recorded tool.json, checked, then rendered
            self.source.read_skill_file(skill, recorded=self._recorded(skill.key))
            server = f"\n\nThe tool is served by the MCP server `{skill.catalog}`."
            return manifest_body(skill.api_name, skill.description, skill.parameters) + server
        try:
            data = self.source.read_skill_file(skill, recorded=self._recorded(skill.key))
            return skill_text(data, skill.location, body_only=not include_frontmatter)
        except SkillParseError as exc:
            raise NotFound(f"skill {skill.name!r} can no longer be loaded ({exc.reason}); "
                           "fix it and reindex") from exc

    def list_resources(self, name: str, within: SkillLookup | None = None) -> ResourceList:
        """The files ``name`` bundles, listed with Activate's cap; nothing is marked active."""
        skill = self.find(name, within)
        listing = self.source.list_files(skill, self._list_cap)
        return ResourceList(skill.name, self._servable(skill.key, listing.files),
                            listing.truncated, skill.base_dir)

    def _recorded(self, key: str) -> SkillDigests | None:
        return digests.recorded_for(self._digests(), key)

    def _servable(self, key: str, files: tuple[str, ...]) -> tuple[str, ...]:
        """``files`` the index recorded for the skill ``key`` (only those are served); all of
        them when it has no record (an index built before digests)."""
        recorded = self._recorded(key)
        if recorded is None:
            return files
        return tuple(f for f in files if recorded.get(f) is not None)

    def read_resource(self, name: str, path: str,
                      within: SkillLookup | None = None) -> Resource:
        """A bundled file of ``name`` by its path relative to the skill directory."""
        skill = self.find(name, within)
        found = self.source.read_resource(skill, path, recorded=self._recorded(skill.key),
                                          max_bytes=self._max_bytes)
        log.debug("served %s of skill %s (%d bytes)", path, skill.name, len(found.content))
        return Resource(skill.name, path, found.content, len(found.content), found.media_type)

    def validate_arguments(self, name: str, arguments_json: str,
                           within: SkillLookup | None = None) -> ValidationResult:
        """Check a callable skill's arguments; defaults are filled in the result."""
        skill = self.find(name, within)
        if skill.parameters is None:
            raise InvalidRequest(f"skill {name!r} takes no arguments: it is not a callable "
                                 "skill (no manifest.json parameters)")
        from router.activation import arguments  # jsonschema loads on first use, not at start-up

        return arguments.validate_arguments(skill.parameters,
                                            arguments.parse_arguments_json(arguments_json))


def _check_deliverable(name: str, content: str) -> None:
    """Refuse content a reply could not carry (text that is not valid Unicode)."""
    if not is_unicode(content):
        raise NotFound(f"skill {name!r} cannot be delivered: its content holds text that is not "
                       "valid Unicode; fix the skill folder and reindex")


def _check_invocation(skill: Skill, explicit: bool) -> None:
    if explicit and not skill.user_invocable:
        raise PermissionDenied(f"skill {skill.name!r} can only be activated by the model, "
                               "not with /name")
    if not explicit and not skill.model_invocable:
        raise PermissionDenied(f"skill {skill.name!r} can only be activated by the user "
                               f"(type /{skill.name}); the model may not activate it")
