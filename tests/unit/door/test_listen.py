"""A door's listening socket: each connection asyncio accepts on it has TCP_NODELAY, so an
HTTP answer's body, written after its headers, never waits for the caller's delayed ACK."""

from __future__ import annotations

import asyncio
import socket

from router.door.listen import bind


def test_accepted_connections_send_without_delay() -> None:
    listener = bind("127.0.0.1", 0)
    assert listener.proto == socket.IPPROTO_TCP

    async def accept_one() -> int:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                accepted = transport.get_extra_info("socket")
                seen.set_result(accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await asyncio.get_running_loop().create_server(Probe, sock=listener)
        async with server:
            _reader, writer = await asyncio.open_connection(*listener.getsockname()[:2])
            flag = await asyncio.wait_for(seen, 30)
            writer.close()
        return flag

    assert asyncio.run(accept_one()) != 0
