"""The JSON door's ASGI app: ``POST /<service>/<Method>`` over the Connect protocol, each call
run through the gRPC door's own handler chain (``calls.CallChain``) on the door's threads.

Refused before any call runs, with a Connect error: a method other than POST (405), a path
naming no unary method (404), a ``Content-Type`` that names no codec (415), a body over
``server.max_request_bytes`` (``resource_exhausted``), a bad ``Connect-Timeout-Ms`` or
``Connect-Protocol-Version`` (``invalid_argument``), a compressed body (``unimplemented``).
Everything else (a body that does not parse, a NUL in a string, the caller, its roles and
rate, the deadline, the call itself) is the chain's, so both wires answer alike.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from concurrent.futures import Executor
from typing import Any

import grpc

from router.door.api import connect_http, status_of
from router.errors import TooLarge
from router.service.connect import protocol as wire
from router.service.connect.calls import Answer, CallChain
from router.service.connect.context import HttpCallContext

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
SUBJECT_STATE = "x509_subject"  # the client certificate's subject, in the scope's state


def refusal(status: int, code: grpc.StatusCode, message: str,
            headers: tuple[tuple[str, str], ...] = ()) -> Answer:
    return Answer(status, (("content-type", wire.JSON), *headers),
                  wire.error_body(code, message))


async def read_body(receive: Receive, limit: int) -> bytes:
    """The request's body; TooLarge past ``limit`` bytes (read no further)."""
    chunks, size = [], 0
    while True:
        event = await receive()
        if event["type"] == "http.disconnect":
            return b""
        chunk = event.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise TooLarge(f"the request is over the server's {limit} bytes "
                           "(server.max_request_bytes)")
        chunks.append(chunk)
        if not event.get("more_body", False):
            return b"".join(chunks)


class ConnectApp:
    """Serves ``chain``'s methods; calls run on ``pool`` (the door's threads)."""

    def __init__(self, chain: CallChain, pool: Executor, max_request_bytes: int) -> None:
        self._chain, self._pool, self._limit = chain, pool, max_request_bytes

    def close(self) -> None:
        """Let the door's threads end once the calls on them are answered."""
        self._pool.shutdown(wait=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return  # lifespan and websockets: nothing to do
        answer = await self._answer(scope, receive)
        headers = [*answer.headers, ("content-length", str(len(answer.body)))]
        await send({"type": "http.response.start", "status": answer.status,
                    "headers": [(k.encode("latin-1"), v.encode("latin-1"))
                                for k, v in headers]})
        await send({"type": "http.response.body", "body": answer.body})

    async def _answer(self, scope: Scope, receive: Receive) -> Answer:
        path = scope["path"]
        if scope["method"] != "POST":
            return refusal(405, grpc.StatusCode.UNIMPLEMENTED, f"{scope['method']} {path}: "
                           "call a method with POST", (("allow", "POST"),))
        if not self._chain.serves(path):
            return refusal(404, grpc.StatusCode.UNIMPLEMENTED,
                           f"{path} is not a method of this door: POST /<service>/<Method>, "
                           f"e.g. /{self._chain.example}")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope["headers"]}
        codec = wire.codec_of(headers.get("content-type", ""))
        if codec is None:
            return refusal(415, grpc.StatusCode.INVALID_ARGUMENT,
                           wire.unsupported(headers.get("content-type", "")))
        try:
            timeout = wire.timeout_of(headers)
            wire.check_version(headers)
            wire.check_encoding(headers)
            body = await read_body(receive, self._limit)
        except wire.Refused as exc:
            return refusal(connect_http(exc.code), exc.code, exc.message)
        except TooLarge as exc:  # answered as the table says, like the gRPC port's
            found = status_of(exc)
            return refusal(found.connect_http, found.grpc, str(exc))
        client = scope.get("client") or ("", 0)
        context = HttpCallContext(
            [(k, v) for k, v in headers.items() if k != "content-length"],
            subject=str((scope.get("state") or {}).get(SUBJECT_STATE, "")),
            peer=f"ipv4:{client[0]}:{client[1]}", timeout=timeout)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self._chain.run, path, codec, body,
                                          context)
