"""The ops console's Starlette app: server-rendered pages over the gRPC API (a
``SkillRouterClient``), Jinja2 templates with autoescaping, no JavaScript.

Pages: ``/route`` (GET: a link can be pasted into a ticket), ``/`` and ``/skills`` (with
traffic counters), ``/skills/NAME`` (with its learned examples and admission's findings),
``POST /skills/NAME/purge`` (confirm, then purge), ``POST /skills/NAME/approve`` and
``/revoke`` (an admin's approval of a quarantined skill's digest, confirmed first:
``router.console.approvals``), ``/index`` with ``POST /index/reindex``; ``/login`` and
``/logout``. Every response forbids scripts (Content-Security-Policy), sniffing and referrers; see
``router.console.auth`` for tokens and CSRF.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from router.access.model import ADMIN, OPS
from router.access.roles import RoleMissing, require
from router.bearer import bearer_token
from router.client import SkillRouterClient
from router.console import approvals, learning_views, views
from router.console.auth import COOKIE, ConsoleAccess, same_origin
from router.console.http_parts import environment, read_form
from router.door.api import Call, described, http_status
from router.errors import RateLimited, RouterError
from router.v1 import router_pb2 as pb

log = logging.getLogger(__name__)

HEADERS = {"Content-Security-Policy": "default-src 'none'; style-src 'self' 'unsafe-inline'; "
                                      "img-src 'self' data:; form-action 'self'; "
                                      "frame-ancestors 'none'; base-uri 'none'",
           "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
           "X-Frame-Options": "DENY", "Cache-Control": "no-store"}
Handler = Callable[[Request, str], Awaitable[Response]]


class Console:
    """The pages, over one gRPC client; ``reindex_timeout`` bounds a Reindex call."""

    def __init__(self, client: SkillRouterClient, access: ConsoleAccess, *,
                 target: str = "", reindex_timeout: float = 600.0) -> None:
        self.client = client
        self.access = access
        self.target = target or client.target
        self.reindex_timeout = reindex_timeout
        self.env = environment()

    # --- plumbing -----------------------------------------------------------------------------

    def render(self, name: str, status: int = 200, session: str = "", **data: Any) -> Response:
        csrf = self.access.csrf_for(session) if session else ""
        body = self.env.get_template(name).render(
            target=self.target, gated=self.access.gated, signed_in=bool(session), csrf=csrf,
            **data)
        return HTMLResponse(body, status_code=status, headers=HEADERS)

    def login_page(self, status: int = 401, error: str = "") -> Response:
        response = self.render("login.html", status=status, error=error)
        response.headers["WWW-Authenticate"] = 'Bearer realm="skill-router-ops"'
        return response

    def too_many(self) -> Response:
        response = self.login_page(429, "too many wrong tokens from this address: wait a "
                                        "minute")
        response.headers["Retry-After"] = str(int(self.access.throttle.window))
        return response

    def caller(self, request: Request) -> str | Response:
        """The caller's session, else the login form (401), or 429 for a client address
        that presents a token after too many wrong ones."""
        client = request.client.host if request.client else ""
        offered = bearer_token(request.headers.get("authorization")) is not None
        if offered and self.access.gated and self.access.throttle.blocked(client):
            return self.too_many()
        session = self.access.session(request.headers, request.cookies)
        if session is None:
            if offered:
                self.access.throttle.failed(client)
            return self.login_page()
        return session

    def foreign(self, request: Request, session: str = "") -> Response | None:
        """403 for a POST whose ``Origin`` names another host than it was sent to."""
        if same_origin(request.headers.get("origin"), request.headers.get("host", "")):
            return None
        return self.render("error.html", 403, session, title="Forbidden",
                           message="this form was posted from another site (Origin)")

    def admitted(self, request: Request, session: str, role: str | None) -> Response | None:
        """With principals: the login form for a caller whose principal is gone, 403 for one
        without ``role``; else None, with the client that calls for it in ``request.state``."""
        request.state.client, request.state.operator = self.client, ""
        request.state.admin = True  # without principals every caller may post every form
        if self.access.principals is None:
            return None
        entry = self.access.caller_entry(request.headers, request.cookies)
        if entry is None:
            return self.login_page()
        try:
            if role is not None:
                require(entry.principal, role, "this page")
        except RoleMissing as exc:
            return self.render("error.html", http_status(exc, Call.GATE), session,
                               title="Forbidden", message=f"{exc}; principal "
                               f"{entry.principal.name!r} does not hold it")
        request.state.admin = entry.principal.may(ADMIN)
        if entry.from_file:  # the service serves it as itself, within the console's view
            request.state.client = self.client.acting_for(entry.principal.name)
            request.state.operator = entry.principal.name  # bounds its "route as"
        return None

    def guarded(self, handler: Handler, *, post: bool = False,
                role: str | None = OPS) -> Callable[[Request], Awaitable[Response]]:
        """``handler`` for callers with a session; the login form (401) for others; a POST
        also needs the session's CSRF token and no foreign Origin (403 otherwise); with
        principals the caller needs ``role`` (403)."""

        async def endpoint(request: Request) -> Response:
            session = self.caller(request)
            if isinstance(session, Response):
                return session
            refused_role = self.admitted(request, session, role)
            if refused_role is not None:
                return refused_role
            if post:
                refused = self.foreign(request, session)
                if refused is not None:
                    return refused
                form = await read_form(request)
                if not self.access.csrf_ok(session, form.get("csrf", "")):
                    return self.render("error.html", 403, session,
                                       title="Forbidden", message="missing or stale form token "
                                       "(CSRF): reload the page and submit again")
                request.state.form = form
            try:
                return await handler(request, session)
            except RouterError as exc:
                if exc.code is None:  # not the router's answer
                    raise
                answer = self.render("error.html", http_status(exc), session,
                                     title=f"The router answered {exc.code.name}",
                                     message=exc.details)
                if isinstance(exc, RateLimited):  # the operator's rate, at the service
                    answer.headers["Retry-After"] = str(-(-exc.retry_after_ms // 1000))
                return answer

        return endpoint

    async def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await run_in_threadpool(fn, *args, **kwargs)

    # --- pages --------------------------------------------------------------------------------

    async def route_page(self, request: Request, session: str) -> Response:
        form = views.RouteForm.parse(request.query_params)
        result = None
        client = (self.client.acting_for(form.acting, request.state.operator) if form.acting
                  else _client(request))  # as a principal, within the operator's own view
        if form.message:
            answer = await self.call(client.explain, form.message, history=form.history,
                                     top_k=form.top_k, active_skills=form.active,
                                     session_id=form.session)
            result = views.explain_view(answer)
        return self.render("route.html", session=session, form=form, result=result,
                           page="route")

    async def learning(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, str]:
        """A learning call's answer, or None and why not (a router without the learning
        calls, or without a feedback store, still serves the other pages)."""
        try:
            return await self.call(fn, *args), ""
        except RouterError as exc:
            if exc.code is None:
                raise
            return None, described(exc)

    async def skills_page(self, request: Request, session: str) -> Response:
        params = request.query_params
        listing = await self.call(_client(request).list_skills)
        stats, problem = await self.learning(_client(request).skill_stats,
                                             learning_views.parse_min_routed(params))
        data = views.skills_view(listing, params.get("q", ""), params.get("flag", ""),
                                 params.get("sort", "name"), learning_views.counter_rows(stats))
        return self.render("skills.html", session=session, page="skills", stats=stats,
                           stats_problem=problem, **data)

    async def skill_page(self, request: Request, session: str, notice: str = "") -> Response:
        name = request.path_params["name"]
        listing = await self.call(_client(request).list_skills)
        found = [s for s in listing.skills if s.name == name]
        if not found:
            return self.render("error.html", 404, session, title="No such skill",
                               message=f"the index {listing.index_version} has no skill {name!r}")
        # a disabled (or quarantined) skill's files are never served: ListResources refuses it
        files = (await self.call(_client(request).list_resources, name)
                 if found[0].enabled else pb.ListResourcesResponse())
        stats, problem = await self.learning(_client(request).skill_stats)
        examples, _ = await self.learning(_client(request).list_examples, name)
        counters = learning_views.counter_rows(stats).get(name, learning_views.no_counters())
        return self.render("skill.html", session=session, page="skills", notice=notice,
                           admin=request.state.admin, skill=views.skill_row(found[0]),
                           files=list(files.resources),
                           truncated=files.resources_truncated, skill_dir=files.skill_dir,
                           stats=stats, stats_problem=problem, counters=counters,
                           examples=examples, example_rows=learning_views.example_rows(
                               examples, time.time()) if examples is not None else [])

    async def purge(self, request: Request, session: str) -> Response:
        """POST /skills/NAME/purge: first the confirmation page (how many would go), then,
        with ``confirm=1``, the purge and the skill's page with the result."""
        name, form = request.path_params["name"], request.state.form
        try:
            days = learning_views.parse_days(form.get("older_than", ""))
        except ValueError as exc:
            return self.render("error.html", 400, session, title="Cannot purge",
                               message=str(exc))
        if form.get("confirm") != "1":
            found = await self.call(_client(request).list_examples, name, days, 1)
            return self.render("purge.html", session=session, page="skills", skill_name=name,
                               count=found.total, older_than=form.get("older_than", "").strip())
        done = await self.call(_client(request).purge_examples, name, days)
        return await self.skill_page(request, session,
                                     notice=learning_views.purge_summary(name, done))

    async def approval(self, request: Request, session: str) -> Response:
        """POST /skills/NAME/approve (ApproveSkill) or /revoke (RevokeApproval): the
        confirmation page first, then, with ``confirm=1``, the call and the skill's page."""
        action = approvals.REVOKE if request.url.path.endswith("/revoke") else approvals.APPROVE
        name = request.path_params["name"]
        try:
            asked = approvals.Asked.parse(action, request.state.form)
        except ValueError as exc:
            return self.render("error.html", 400, session, title=f"Cannot {action}",
                               message=str(exc))
        if not asked.confirmed:
            return self.render("approve.html", session=session, page="skills", skill_name=name,
                               asked=asked)
        client = _client(request)
        if action == approvals.APPROVE:
            done = await self.call(client.approve_skill, name, asked.digest, asked.note,
                                   asked.catalog)
            notice = done.message
        else:
            notice = (await self.call(client.revoke_approval, name, asked.catalog)).message
        return await self.skill_page(request, session, notice=notice)

    async def index_page(self, request: Request, session: str, notice: str = "") -> Response:
        info = await self.call(_client(request).index_info)
        listing = await self.call(_client(request).list_skills)
        return self.render("index.html", session=session, page="index", notice=notice,
                           **views.index_view(info, listing))

    async def reindex(self, request: Request, session: str) -> Response:
        full = request.state.form.get("full") == "1"
        done = await self.call(_client(request).reindex, full=full, timeout=self.reindex_timeout)
        return await self.index_page(request, session, notice=views.reindex_summary(done))

    async def login(self, request: Request) -> Response:
        if request.method == "GET":
            session = self.access.session(request.headers, request.cookies)
            if session is not None:
                return RedirectResponse("/route", status_code=303, headers=HEADERS)
            return self.login_page(status=200)
        refused = self.foreign(request)
        if refused is not None:
            return refused
        client = request.client.host if request.client else ""
        if self.access.throttle.blocked(client):
            return self.too_many()
        cookie = self.access.login((await read_form(request)).get("token", ""))
        if cookie is None:
            self.access.throttle.failed(client)
            return self.login_page(error="that token is not accepted")
        response = RedirectResponse("/route", status_code=303, headers=HEADERS)
        response.set_cookie(COOKIE, cookie, httponly=True, samesite="strict", path="/",
                            secure=request.url.scheme == "https",
                            max_age=int(self.access.sessions.ttl))
        return response

    async def logout(self, request: Request, session: str) -> Response:
        self.access.logout(session)
        response = RedirectResponse("/login", status_code=303, headers=HEADERS)
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
        return response


def _client(request: Request) -> SkillRouterClient:
    """The client calling the service for this request's caller (``Console.admitted``)."""
    client: SkillRouterClient = request.state.client
    return client
