"""Calls to the JSON door (the Connect protocol over HTTP/1.1) with the standard library, as a
gateway would make them with ``curl``."""

from __future__ import annotations

import http.client
import json
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from google.protobuf import json_format
from google.protobuf.message import Message

from router.door.api import SERVICE_NAME


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def post(url: str, path: str, body: bytes, content_type: str = "application/json",
         headers: dict[str, str] | None = None, *, method: str = "POST",
         tls: ssl.SSLContext | None = None) -> Reply:
    """``method`` ``body`` to ``url`` + ``path``; the reply whatever its status."""
    where = urlsplit(url)
    host, port = where.hostname or "127.0.0.1", where.port or 80
    connection = (http.client.HTTPSConnection(host, port, context=tls, timeout=60)
                  if where.scheme == "https" else
                  http.client.HTTPConnection(host, port, timeout=60))
    try:
        connection.request(method, path, body=body,
                           headers={"Content-Type": content_type, **(headers or {})})
        answer = connection.getresponse()
        return Reply(answer.status, {k.lower(): v for k, v in answer.getheaders()},
                     answer.read())
    finally:
        connection.close()


def call(url: str, method: str, request: Message | dict[str, Any],
         headers: dict[str, str] | None = None, **options: Any) -> Reply:
    """``request`` (a message, or its JSON as a dict) to ``SERVICE_NAME/method`` as JSON."""
    data = json_format.MessageToDict(request) if isinstance(request, Message) else request
    return post(url, f"/{SERVICE_NAME}/{method}", json.dumps(data).encode("utf-8"),
                headers=headers, **options)


def parsed(reply: Reply, kind: type[Message]) -> Message:
    """A 200 reply's JSON body as a ``kind`` message (AssertionError for an error reply)."""
    assert reply.status == 200, (reply.status, reply.body)
    return json_format.Parse(reply.body.decode("utf-8"), kind())
