"""A second server on a port already in use must refuse to start, not share the port."""

from __future__ import annotations

import pytest

from router.engine import Engine
from router.service.server import build_server
from tests.support.servers import server_config, start_server


def test_a_second_server_on_a_busy_port_fails_to_start(engine: Engine) -> None:
    first = start_server(engine)
    try:
        with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{first.port}"):
            second = build_server(engine, server_config(), f"127.0.0.1:{first.port}")
            second.server.stop(0)  # only reached when the bind wrongly succeeded
    finally:
        first.stop(0)
