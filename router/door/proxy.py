"""A door's backend as a thin proxy to a running skill-router gRPC service.

Each call carries the MCP session's generated ``session_id`` and its ``active_skills``, so any
replica behind a round-robin balancer answers the same. A gRPC status comes back as the
``router.errors`` class the servicer mapped to it (the client raises it), with the server's
message.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from router.activation.activator import Activation, Resource, ResourceList
from router.door.api import described
from router.door.backend import Hit, Search, SkillFile
from router.door.context import ACTING, CallSession
from router.door.entries import SkillEntry, entry_from_proto
from router.errors import IndexUnavailable, ServiceError, Unauthenticated
from router.skills.model import DEFAULT_CATALOG
from router.v1 import router_pb2 as pb

T = TypeVar("T")


class RouterClient(Protocol):
    """The calls the proxy makes on a ``router.client.SkillRouterClient`` (the door's command
    opens the client; the door layer sits below it and names only what it calls)."""

    target: str

    def acting_for(self, principal_name: str, within: str = "") -> RouterClient: ...

    def route(self, message: str, history: Sequence[str] = (), session_id: str = "",
              top_k: int = 0, format: str = "xml", active_skills: Sequence[str] = (),
              max_catalog_chars: int = 0, project_skills: Sequence[pb.InlineSkill] = (),
              ) -> pb.RouteResponse: ...

    def activate(self, name: str, session_id: str = "", active_skills: Sequence[str] = (),
                 include_frontmatter: bool = False, route_id: str = "") -> pb.ActivateResponse:
        ...

    def list_resources(self, name: str) -> pb.ListResourcesResponse: ...

    def read_resource(self, name: str, path: str) -> pb.ReadResourceResponse: ...

    def list_skills(self, include_files: bool = False,
                    all_catalogs: bool = False) -> pb.ListSkillsResponse: ...

    def close(self) -> None: ...

_REASONS = {pb.ROUTE_REASON_ALWAYS_ON: "always_on", pb.ROUTE_REASON_RETRIEVED: "retrieved",
            pb.ROUTE_REASON_EXPLICIT: "explicit", pb.ROUTE_REASON_ACTIVE: "active"}


def _call(target: str, call: Callable[[], T]) -> T:
    """Run one RPC. A refused request comes back as the ``router.errors`` class of its status
    (``router.client``), with the server's message; a refusal of the door's own credentials, or
    a service that did not answer, is the door's trouble: IndexUnavailable naming ``target``."""
    try:
        return call()
    except Unauthenticated as exc:
        raise IndexUnavailable(f"the skill-router service at {target} refused the door's "
                               f"credentials ({exc.details}); start the door with --token-file "
                               "or SKILL_ROUTER_TOKEN (and --tls/--ca-file for TLS)") from exc
    except ServiceError as exc:
        raise IndexUnavailable(f"the skill-router service at {target} did not answer "
                               f"({described(exc)}); try again shortly") from exc


class GrpcBackend:
    """The door over a SkillRouterClient."""

    def __init__(self, client: RouterClient) -> None:
        self.client = client

    def _for_caller(self) -> RouterClient:
        """The client acting for the door's caller (``x-skill-router-principal``), when the
        door serves it as a principal of its file; else the door's own."""
        principal = ACTING.get()
        return self.client if principal is None else self.client.acting_for(principal.name)

    def search(self, query: str, top_k: int, session: CallSession) -> Search:
        reply = _call(self.client.target, lambda: self._for_caller().route(
            query, session_id=session.session_id, top_k=top_k,
            active_skills=session.active_skills))
        hits = tuple(Hit(s.name, s.description, s.score, _REASONS.get(s.reason, "retrieved"))
                     for s in reply.skills)
        return Search(hits, reply.catalog_text, reply.index_version, reply.explicit_content,
                      reply.route_id)

    def activate(self, name: str, session: CallSession) -> Activation:
        reply = _call(self.client.target, lambda: self._for_caller().activate(
            name, session_id=session.session_id, active_skills=session.active_skills,
            route_id=session.route_id))
        return Activation(name, reply.content, tuple(reply.resources),
                          reply.resources_truncated, reply.skill_dir, reply.already_active,
                          reply.catalog or DEFAULT_CATALOG)

    def list_resources(self, name: str) -> ResourceList:
        reply = _call(self.client.target, lambda: self._for_caller().list_resources(name))
        return ResourceList(name, tuple(reply.resources), reply.resources_truncated,
                            reply.skill_dir)

    def read_resource(self, name: str, path: str) -> Resource:
        reply = _call(self.client.target, lambda: self._for_caller().read_resource(name, path))
        return Resource(name, path, reply.content, reply.size, reply.media_type)

    def skills(self) -> tuple[SkillFile, ...]:
        reply = _call(self.client.target, self._for_caller().list_skills)
        return tuple(SkillFile(s.name, s.description, os.path.basename(s.location),
                               s.model_invocable) for s in reply.skills if _served_as_skill(s))

    def skill_entries(self) -> tuple[SkillEntry, ...]:
        reply = _call(self.client.target,
                      lambda: self._for_caller().list_skills(include_files=True))
        return tuple(entry_from_proto(s) for s in reply.skills if _served_as_skill(s))

    def close(self) -> None:
        self.client.close()


def _served_as_skill(info: pb.SkillInfo) -> bool:
    """As ``router.door.backend``: no skill:// entry for a skill switched off, nor for an MCP
    server's tool."""
    return info.enabled and info.kind != pb.SKILL_KIND_MCP_TOOL
