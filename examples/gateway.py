"""A minimal agent gateway driving one conversation through skill-router, end to end.

The "model" here is scripted so the example runs offline and deterministically; a real gateway
would send the system prompt and messages to its LLM and act on the tool call it returns.

The turn:
  1. Route the user's message; put ``stable_text`` in the system prompt (the same bytes on every
     turn, so the model API's prompt cache holds) and ``reveal_text`` right after the user's
     message (kept in the history); keep ``route_id``.
  2. The model picks a skill from the routed names and calls ``activate_skill``.
  3. Activate it, passing ``route_id`` back (the router learns from shown-then-activated skills,
     whichever replica answers); the ``<skill_content>`` result goes into the conversation.
  4. Compaction drops old messages but keeps every skill-content message; the next Route says
     so (``context_reset``), and what that turn needs is revealed again.
  5. ReadResource fetches a bundled file the instructions refer to.
  6. Activating the same skill again in the session returns ``already_active`` (no second copy).
  7. A user typing ``/name`` gets the skill's content straight from Route (``explicit_content``).
  8. Feedback reports how the skill worked out (here: success) with the same ``route_id``.

Usage: .venv/bin/python examples/gateway.py [--target HOST:PORT] [--message TEXT]
       [--timeout SECONDS]  (the virtualenv's Python: it imports the ``router`` package)
Exit status: 0 on success, 1 when the server cannot be reached or the turn cannot complete.
"""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from router.client import SkillRouterClient
from router.errors import RouterError
from router.routing.activation import is_skill_content
from router.v1 import router_pb2 as pb

DEFAULT_MESSAGE = "Please extract the tables from this PDF report."
SYSTEM_PROMPT = "You are a helpful agent."


@dataclass
class Message:
    """One message of the conversation a gateway keeps for its model."""

    role: str  # "system", "user", "assistant" or "tool"
    content: str


class GatewayError(Exception):
    """The turn cannot continue (nothing routed, ...)."""


def scripted_model(route: pb.RouteResponse) -> str:
    """A stand-in for the LLM: picks the first retrieved skill, else the first routed one."""
    retrieved = [s.name for s in route.skills if s.reason == pb.ROUTE_REASON_RETRIEVED]
    names = retrieved or [s.name for s in route.skills]
    if not names:
        raise GatewayError("no skill was routed for this message; nothing to activate")
    return names[0]


def compact(messages: Sequence[Message], keep_last: int) -> list[Message]:
    """Drop old messages to save context, but keep the system prompt, the last ``keep_last``
    messages, and every activated skill's ``<skill_content>`` (lasting instructions)."""
    cut = len(messages) - keep_last
    return [m for i, m in enumerate(messages)
            if i >= cut or m.role == "system" or is_skill_content(m.content)]


def step(number: int, title: str) -> None:
    print(f"\n== {number}. {title}")


def preview(text: str, lines: int = 4) -> str:
    shown = text.strip().splitlines()
    more = f"\n   ... ({len(shown) - lines} more lines)" if len(shown) > lines else ""
    return "\n".join("   " + line for line in shown[:lines]) + more


def route_and_activate(client: SkillRouterClient, message: str,
                       session: str) -> tuple[list[Message], str, pb.ActivateResponse, str]:
    """Steps 1-3: route, inject the catalog, let the model pick, activate."""
    step(1, "Route the user's message")
    route = client.route(message, session_id=session)
    print(f"   routed: {[s.name for s in route.skills]} "
          f"({route.catalog_chars} of {route.full_catalog_chars} catalog characters), "
          f"route_id {route.route_id or '(feedback off)'}")
    # The system prompt never changes: the prompt cache keeps it and everything after it.
    conversation = [Message("system", f"{SYSTEM_PROMPT}\n\n{route.stable_text}"),
                    Message("user", message)]
    if route.reveal_text:  # the skills new to the conversation, kept in the history
        conversation.append(Message("user", route.reveal_text))
    print(f"   revealed: {[s.name for s in route.skills if s.first_shown]}")
    step(2, "The model picks a skill")
    name = scripted_model(route)
    print(f"   model calls activate_skill(name={name!r})")
    step(3, "Activate it")
    activation = client.activate(name, session_id=session, route_id=route.route_id)
    print(f"   skill_dir: {activation.skill_dir}\n   resources: {list(activation.resources)}")
    print(preview(activation.content))
    conversation.append(Message("tool", activation.content))
    return conversation, name, activation, route.route_id


def protect_and_read(client: SkillRouterClient, conversation: list[Message], name: str,
                     activation: pb.ActivateResponse, session: str) -> None:
    """Steps 4-5: compaction keeps the skill content and the next Route says it happened;
    read the first bundled file."""
    step(4, "Compact the conversation; skill content is protected")
    conversation += [Message("assistant", "Working on it."), Message("user", "Thanks!"),
                     Message("assistant", "Done.")]
    compacted = compact(conversation, keep_last=1)
    kept = sum(is_skill_content(m.content) for m in compacted)
    print(f"   {len(conversation)} messages -> {len(compacted)}; skill content kept: {kept}")
    if kept != 1:
        raise GatewayError("compaction lost the skill content")
    first = conversation[1].content
    again = client.route(first, session_id=session)
    print(f"   the same request again: revealed {[s.name for s in again.skills if s.first_shown]}")
    reset = client.route(first, session_id=session, context_reset=True)
    active = [s.name for s in reset.skills if s.reason == pb.ROUTE_REASON_ACTIVE]
    print(f"   after compaction (context_reset): revealed "
          f"{[s.name for s in reset.skills if s.first_shown]}, active {active} (its content "
          "was kept)")
    step(5, "Read a bundled file")
    if not activation.resources:
        print("   (the skill bundles no files)")
        return
    resource = client.read_resource(name, activation.resources[0])
    print(f"   {activation.resources[0]}: {resource.size} bytes, {resource.media_type}")
    print(preview(resource.content.decode("utf-8", errors="replace"), 3))


def dedup_and_explicit(client: SkillRouterClient, name: str, session: str) -> None:
    """Steps 6-7: a repeat activation is de-duplicated; a typed ``/name`` returns content."""
    step(6, "Activate the same skill again in this session")
    again = client.activate(name, session_id=session)
    print(f"   already_active={again.already_active}, content: {len(again.content)} characters")
    step(7, f"A user types /{name} in a new conversation")
    fresh = session + "-explicit"
    route = client.route(f"/{name} help me with this", session_id=fresh)
    if not route.explicit_content:
        raise GatewayError(f"/{name} returned no explicit_content")
    print(preview(route.explicit_content, 2))
    later = client.activate(name, session_id=fresh)
    print(f"   a later activate_skill({name!r}) there: already_active={later.already_active}")


def run(client: SkillRouterClient, message: str) -> None:
    """One conversation, every step printed."""
    session = f"gateway-{uuid.uuid4().hex[:8]}"
    print(f"skill-router at {client.target}, session {session}")
    conversation, name, activation, route_id = route_and_activate(client, message, session)
    protect_and_read(client, conversation, name, activation, session)
    dedup_and_explicit(client, name, session)
    step(8, "Report how the skill worked out")
    reply = client.feedback(name, "success", session_id=session, route_id=route_id)
    print(f"   feedback success for {name}: recorded={reply.recorded}")
    print("\nturn complete")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default="127.0.0.1:50051", help="server host:port")
    parser.add_argument("--message", default=DEFAULT_MESSAGE, help="the user's message")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds per call")
    args = parser.parse_args(argv)
    with SkillRouterClient(args.target, timeout=args.timeout) as client:
        try:
            client.health()
        except RouterError as exc:
            status = exc.code.name if exc.code is not None else str(exc)
            print(f"error: cannot reach skill-router at {args.target} ({status}); "
                  "start it with `make run` or pass --target", file=sys.stderr)
            return 1
        try:
            run(client, args.message)
        except (GatewayError, RouterError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
