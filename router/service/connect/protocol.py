"""The Connect protocol's unary calls (connectrpc.com/docs/protocol), the part the JSON door
speaks, with no I/O: which codec a ``Content-Type`` names, the ``Connect-Timeout-Ms`` deadline,
the ``Connect-Protocol-Version`` check, message bodies in either codec, and the error body.

- ``application/json`` (``; charset=utf-8`` allowed): the canonical proto3 JSON mapping
  (``google.protobuf.json_format``); field names in lowerCamelCase or as the proto spells
  them, unknown fields ignored (as connect-go does, so a client built from a newer proto still
  works); answers in lowerCamelCase, fields at their default left out. An empty body is the
  empty message.
- ``application/proto``: the binary protobuf encoding.
- An error is a JSON body ``{"code": "invalid_argument", "message": "..."}`` with the HTTP
  status Connect gives the code (``router.door.api.connect_http``), whatever the codec.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message

from router.common.json_text import compact
from router.door.api import connect_code

JSON, PROTO = "application/json", "application/proto"
VERSION_HEADER = "connect-protocol-version"
TIMEOUT_HEADER = "connect-timeout-ms"
TRAILER_PREFIX = "trailer-"  # a unary answer's trailing metadata, as headers
TIMEOUT_DIGITS = 10  # the protocol's bound on Connect-Timeout-Ms


_KINDS = {list: "an array", str: "a string", int: "a number", float: "a number",
          bool: "a boolean", type(None): "null"}


class Refused(Exception):
    """A request the door answers with an error before any call runs (a bad header)."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def codec_of(content_type: str) -> str | None:
    """The codec a ``Content-Type`` names (``JSON`` or ``PROTO``), None for any other."""
    kind, _, params = content_type.partition(";")
    kind, params = kind.strip().lower(), "".join(params.lower().split())
    if kind == JSON and params in ("", "charset=utf-8"):
        return JSON
    return PROTO if kind == PROTO and not params else None


def unsupported(content_type: str) -> str:
    """The message of a 415 answer."""
    given = content_type or "no Content-Type"
    return (f"{given} is not a codec of this door: send Content-Type: {JSON} (proto3 JSON) or "
            f"{PROTO} (binary protobuf)")


def timeout_of(headers: Mapping[str, str]) -> float | None:
    """The call's time in seconds from ``Connect-Timeout-Ms`` (None: no deadline); Refused
    for a value that is not 1 to 10 digits."""
    value = headers.get(TIMEOUT_HEADER)
    if value is None:
        return None
    text = value.strip()
    if not (text.isascii() and text.isdigit() and len(text) <= TIMEOUT_DIGITS):
        raise Refused(grpc.StatusCode.INVALID_ARGUMENT,
                      f"{TIMEOUT_HEADER}: {value!r} is not a timeout: give whole "
                      f"milliseconds, at most {TIMEOUT_DIGITS} digits")
    return int(text) / 1000.0


def check_version(headers: Mapping[str, str]) -> None:
    """Refused when ``Connect-Protocol-Version`` is sent and is not ``1`` (absent: accepted,
    so a plain ``curl`` works)."""
    value = headers.get(VERSION_HEADER)
    if value is not None and value.strip() != "1":
        raise Refused(grpc.StatusCode.INVALID_ARGUMENT,
                      f"{VERSION_HEADER}: {value!r}: this door speaks version 1")


def check_encoding(headers: Mapping[str, str]) -> None:
    """Refused for a compressed body (``Content-Encoding`` other than identity)."""
    value = headers.get("content-encoding", "identity").strip().lower()
    if value not in ("", "identity"):
        raise Refused(grpc.StatusCode.UNIMPLEMENTED,
                      f"Content-Encoding {value!r} is not accepted: send the body "
                      "uncompressed")


def decode(codec: str, body: bytes, kind: type[Message]) -> Message:
    """The request message of ``body``; ValueError with the parser's reason."""
    message = kind()
    if codec == PROTO:
        try:
            message.ParseFromString(body)
        except Exception as exc:  # protobuf's DecodeError, or anything its parser raises
            raise ValueError(str(exc) or type(exc).__name__) from None
        return message
    if not body.strip():
        return message
    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError("the body is not UTF-8") from None
    except ValueError as exc:
        raise ValueError(f"the body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"the body is JSON {_KINDS.get(type(data), 'of another kind')}, not "
                         "an object")
    try:
        json_format.ParseDict(data, message, ignore_unknown_fields=True)
    except Exception as exc:  # json_format's ParseError, or what its parser raises
        raise ValueError(str(exc) or type(exc).__name__) from None
    return message


def json_hint(kind: type[Message]) -> str:
    """What a caller whose JSON body did not parse can fix."""
    return (f"send one JSON object of {kind.DESCRIPTOR.full_name}'s fields (proto3 JSON: "
            "64-bit integers may be strings, enums by name)")


def encode(codec: str, message: Message) -> bytes:
    """``message`` as an answer's body in ``codec``."""
    if codec == PROTO:
        return message.SerializeToString()
    data = json_format.MessageToDict(message)
    return compact(data).encode("utf-8")


def error_body(code: grpc.StatusCode, message: str) -> bytes:
    """A Connect error's JSON body."""
    body = {"code": connect_code(code), "message": message}
    return compact(body).encode("utf-8")
