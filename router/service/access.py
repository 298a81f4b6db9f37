"""Who each gRPC call comes from, and whether its roles allow the method.

``Gate`` holds the server's principal table (``router.access.callers.load_table``): the
principals of ``server.principals_file`` (``--principals``) plus the accepted tokens of
``server.auth_token_file`` / ``server.auth_token_env``, each token a principal named by its
sha256 with the roles route, ops and admin on every catalog. A server with neither has one
anonymous principal with those roles. ``reload`` reads the sources again (``serve`` calls it
on SIGHUP); a source that no longer reads or parses keeps the table in use and logs why.

``AccessInterceptor`` resolves every call except ``grpc.health.v1`` (open for probes):
- the caller: the principal of its bearer token, else of its client certificate's subject
  (``client_cert_subject`` matched against the peer certificate's ``x509_subject`` in the auth
  context); neither, on a server with principals or tokens: ``UNAUTHENTICATED``;
- delegation: ``x-skill-router-principal: NAME`` from a caller with ``delegate`` serves NAME as
  ``router.access.delegation`` limits it, ``x-skill-router-within: NAME`` bounds what is
  served by NAME's view too (the console's "route as"); from any other caller, or naming no
  principal of the file: ``PERMISSION_DENIED``;
- roles: a SkillRouter method outside the caller's roles is ``PERMISSION_DENIED``
  (``requires role ...``; ``router.access.roles.require``).
- rates: a SkillRouter call of a principal over its ``rate`` is ``RESOURCE_EXHAUSTED`` with
  ``retry-after-ms`` (``router.service.rates``).
The servicer reads the resolved principal of the call it runs (``principal_of``).
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import grpc

from router.access.callers import LiveTable, load_table
from router.access.delegation import (
    PRINCIPAL_KEY,
    WITHIN_KEY,
    delegated,
    unknown_principal,
    within,
)
from router.access.model import ANONYMOUS, OPS, Principal
from router.access.rates import RateLimiter
from router.access.roles import require, roles_for
from router.access.table import Entry, PrincipalTable
from router.config import ServerConfig
from router.door.api import Call, status_of
from router.errors import PermissionDenied
from router.service.auth import OPEN_PREFIXES, REFUSED, presented_token
from router.service.interceptors import CALL_FACTS
from router.service.rates import check_rate
from router.v1 import router_pb2 as pb

log = logging.getLogger(__name__)

SERVICE_PREFIX = "/" + pb.DESCRIPTOR.services_by_name["SkillRouter"].full_name + "/"
SUBJECT_KEY = "x509_subject"


@dataclass(frozen=True)
class Caller:
    """The principal a call is served as; ``operator``: it holds ``ops`` by the principals
    file (not only as a token of the token file, or as the anonymous caller)."""

    principal: Principal
    operator: bool = False
    delegate: str | None = None  # the name of the delegate serving it (delegation), else None


OPEN = Caller(ANONYMOUS)
_CURRENT: contextvars.ContextVar[Caller | None] = contextvars.ContextVar("caller", default=None)


def build_table(config: ServerConfig, env: Mapping[str, str] | None = None) -> PrincipalTable:
    """The principals ``config`` names: its principals file and accepted tokens (empty: an open
    server). Raises InvalidRequest naming the file and line of a problem."""
    return load_table(config.principals_file, config.auth_token_file, config.auth_token_env,
                      env=env, env_setting="server.auth_token_env")


def subject_of(auth_context: Mapping[str, Any] | None) -> str:
    """The peer certificate's subject from a call's auth context ("" without one)."""
    values = (auth_context or {}).get(SUBJECT_KEY) or ()
    for value in values:
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return ""


def resolve(table: PrincipalTable, metadata: Sequence[tuple[str, Any]] | None,
            subject: str) -> Caller | None:
    """The caller of a call (None: not authenticated; every caller is the anonymous one when
    ``table`` is empty). PermissionDenied for a delegation header the caller may not send or
    that names nobody."""
    if not table:
        caller = OPEN
    else:
        token = presented_token(metadata)
        entry = table.by_token(token) if token is not None else table.by_subject(subject)
        if entry is None:
            return None
        caller = Caller(entry.principal, entry.from_file and entry.principal.may(OPS))
    named = _header(metadata, PRINCIPAL_KEY)
    bound = _header(metadata, WITHIN_KEY)
    if named is None and bound is None:
        return caller
    served, operator = caller.principal, caller.operator
    if named is not None:
        target = _named(table, caller.principal, named, PRINCIPAL_KEY)
        served = delegated(caller.principal, target.principal)
        operator = target.from_file and served.may(OPS)
    if bound is not None:
        served = within(served, _named(table, caller.principal, bound, WITHIN_KEY).principal)
    return Caller(served, operator, caller.principal.name if named is not None else None)


def _header(metadata: Sequence[tuple[str, Any]] | None, key: str) -> str | None:
    return next((str(v) for k, v in metadata or () if k == key), None)


def _named(table: PrincipalTable, caller: Principal, name: str, key: str) -> Entry:
    """The principal a delegation header names; PermissionDenied for a caller without
    ``delegate`` or a name no principal has."""
    delegated(caller, caller)  # refuses a caller without delegate
    found = table.by_name(name.strip())
    if found is None:
        raise unknown_principal(name, key)
    return found


class Gate:
    """The current principals of a server and the caller of each call (thread-safe: the table
    is swapped whole)."""

    def __init__(self, config: ServerConfig, env: Mapping[str, str] | None = None) -> None:
        self._live = LiveTable(lambda: build_table(config, env))
        self.limiter = RateLimiter()  # the principals' rates, in this process
        if config.principals_file and self._live.table.has_tokens:
            log.warning("the tokens of server.auth_token_file / server.auth_token_env act as "
                        "principals with the roles route, ops and admin on every catalog, "
                        "beside those of %s; move them into it to narrow them",
                        config.principals_file)

    @property
    def table(self) -> PrincipalTable | None:
        """The principal table in use; None for an open server (no principal, no token)."""
        return self._live.table or None

    def reload(self) -> bool:
        """Read the principals file and the tokens again; False (the old table kept, the
        reason logged) when they no longer load."""
        return self._live.reload()

    def admit(self, context: grpc.ServicerContext, method: str | None) -> Caller:
        """The caller of this call, its roles checked for SkillRouter ``method`` (None: another
        service); aborts the call when it may not run."""
        try:
            caller = resolve(self._live.table, context.invocation_metadata(),
                             subject_of(context.auth_context()))
            _note(caller)
            if caller is not None and method is not None:
                require(caller.principal, roles_for(method), method, say_held=True)
        except PermissionDenied as exc:
            context.abort(status_of(exc, Call.GATE).grpc, str(exc))
        if caller is None:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, REFUSED)
        return caller

    def accepts_ops_token(self, token: bytes | None) -> bool:
        """Whether ``token`` is an ``ops`` principal's (what ``/metrics`` asks)."""
        entry = self._live.table.by_token(token)
        return entry is not None and entry.principal.may(OPS)

    def narrow_token(self, token: bytes | None) -> bool:
        """Whether ``token``'s principal sees only some catalogs (or has deny globs): its
        ``/metrics`` leave out the per-skill series."""
        entry = self._live.table.by_token(token)
        return entry is None or not entry.principal.sees_everything

    def principal_of(self, context: grpc.ServicerContext) -> Principal:
        """The principal of the call being served (the servicer's reader)."""
        return self.caller(context).principal

    def caller(self, context: grpc.ServicerContext) -> Caller:
        current = _CURRENT.get()
        return current if current is not None else self.admit(context, None)


def _note(caller: Caller | None) -> None:
    """Record who the call is from in its ``CALL_FACTS`` (the audit log reads them)."""
    facts = CALL_FACTS.get()
    if facts is not None and caller is not None:
        facts.principal = caller.delegate or caller.principal.name
        facts.acting_for = caller.principal.name if caller.delegate is not None else None
        facts.served = caller.principal


Behaviour = Callable[[Any, grpc.ServicerContext], Any]
_Continuation = Callable[[grpc.HandlerCallDetails], Any]
_KINDS = (("unary_unary", grpc.unary_unary_rpc_method_handler),
          ("unary_stream", grpc.unary_stream_rpc_method_handler),
          ("stream_unary", grpc.stream_unary_rpc_method_handler),
          ("stream_stream", grpc.stream_stream_rpc_method_handler))


class AccessInterceptor(grpc.ServerInterceptor):  # type: ignore[type-arg]
    """Admits each call through ``gate`` before it runs (health stays open)."""

    def __init__(self, gate: Gate) -> None:
        self._gate = gate

    def intercept_service(self, continuation: _Continuation,
                          handler_call_details: grpc.HandlerCallDetails) -> Any:
        handler = continuation(handler_call_details)
        method_path = handler_call_details.method
        if handler is None or method_path.startswith(OPEN_PREFIXES):
            return handler
        method = method_path[len(SERVICE_PREFIX):] if method_path.startswith(
            SERVICE_PREFIX) else None
        kwargs: dict[str, Any] = {"request_deserializer": handler.request_deserializer,
                                  "response_serializer": handler.response_serializer}
        for kind, make in _KINDS:
            behaviour = getattr(handler, kind)
            if behaviour is not None:
                streams = kind.endswith("_stream")
                return make(self._wrap(behaviour, method, streams), **kwargs)
        return handler

    def _wrap(self, behaviour: Behaviour, method: str | None, streams: bool) -> Behaviour:
        gate = self._gate

        def admitted(request: Any, context: grpc.ServicerContext) -> Any:
            caller = gate.admit(context, method)
            if method is not None:
                check_rate(gate.limiter, gate.table, context, caller.principal.name,
                           caller.delegate)
            token = _CURRENT.set(caller)
            try:
                return behaviour(request, context)
            finally:
                _CURRENT.reset(token)

        def admitted_stream(request: Any, context: grpc.ServicerContext) -> Any:
            gate.admit(context, method)  # no SkillRouter method streams: nothing reads it
            yield from behaviour(request, context)

        return admitted_stream if streams else admitted
