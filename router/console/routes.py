"""The console's URL table: which page or form each path serves, and which role a form
needs (``Console.guarded``)."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp

from router.access.model import ADMIN
from router.console.app import Console
from router.console.http_parts import HostCheck


def console_app(console: Console, bound: str = "127.0.0.1") -> ASGIApp:
    """The ASGI app serving ``console``'s pages, on address ``bound``."""
    return HostCheck(pages(console), console.access, bound)


def pages(console: Console) -> Starlette:
    g = console.guarded
    return Starlette(routes=[
        Route("/", g(console.skills_page)),
        Route("/route", g(console.route_page)),
        Route("/skills", g(console.skills_page)),
        Route("/skills/{name}/purge", g(console.purge, post=True, role=ADMIN),
              methods=["POST"]),
        Route("/skills/{name}/approve", g(console.approval, post=True, role=ADMIN),
              methods=["POST"]),
        Route("/skills/{name}/revoke", g(console.approval, post=True, role=ADMIN),
              methods=["POST"]),
        Route("/skills/{name:path}", g(console.skill_page)),
        Route("/index", g(console.index_page)),
        Route("/index/reindex", g(console.reindex, post=True, role=ADMIN),
              methods=["POST"]),
        Route("/login", console.login, methods=["GET", "POST"]),
        Route("/logout", g(console.logout, post=True, role=None), methods=["POST"]),
    ])
