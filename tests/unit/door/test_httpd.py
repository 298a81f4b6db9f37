"""The doors' uvicorn configuration: forwarded headers are believed only when a door says from
whom (uvicorn's own default believes them from loopback)."""

from __future__ import annotations

from router.door.httpd import DoorLimits, door_config


async def _app(scope: object, receive: object, send: object) -> None:
    """An ASGI app that is never called."""


def test_forwarded_headers_are_off_unless_a_door_trusts_a_proxy() -> None:
    assert door_config(_app, DoorLimits()).proxy_headers is False
    trusted = door_config(_app, DoorLimits(), proxy_headers=True,
                          forwarded_allow_ips=["10.0.0.0/8"])
    assert trusted.proxy_headers is True
    assert trusted.forwarded_allow_ips == ["10.0.0.0/8"]
