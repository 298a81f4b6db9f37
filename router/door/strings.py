"""Strings the stores cannot hold, found at the door: a NUL character (U+0000) in any string
field of a request. PostgreSQL's text refuses it, so such a request is refused before a row is
made (INVALID_ARGUMENT naming the field), at every door alike. Pure."""

from __future__ import annotations

from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

NUL = "\x00"
MAX_DEPTH = 64


def nul_field(message: Message, prefix: str = "", depth: int = 0) -> str:
    """The first field of ``message`` (``a.b[2]``, ``labels["k"]``) whose string holds a NUL,
    "" when none does; keys of map fields are looked at too."""
    if depth > MAX_DEPTH:
        return ""
    for field, value in message.ListFields():
        name = f"{prefix}{field.name}"
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            found = _in_map(name, value, field.message_type.fields_by_name["value"], depth)
        elif field.is_repeated:
            found = next((f for f in (_in_value(f"{name}[{i}]", v, field, depth)
                                      for i, v in enumerate(value)) if f), "")
        else:
            found = _in_value(name, value, field, depth)
        if found:
            return found
    return ""


def _in_map(name: str, value: Any, field: FieldDescriptor, depth: int) -> str:
    for key, item in value.items():
        if isinstance(key, str) and NUL in key:
            return f"{name} (a key)"
        found = _in_value(f"{name}[{key!r}]", item, field, depth)
        if found:
            return found
    return ""


def _in_value(name: str, value: Any, field: FieldDescriptor, depth: int) -> str:
    if field.type == FieldDescriptor.TYPE_STRING:
        return name if NUL in value else ""
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return nul_field(value, f"{name}.", depth + 1)
    return ""


def nul_path(value: Any, prefix: str, depth: int = 0) -> str:
    """The same for JSON data (an MCP tool's arguments): the first path to a string, or a key,
    holding a NUL; "" when none does."""
    if depth > MAX_DEPTH:
        return ""
    if isinstance(value, str):
        return prefix if NUL in value else ""
    items: Any = value.items() if isinstance(value, dict) else \
        enumerate(value) if isinstance(value, list | tuple) else ()
    for key, item in items:
        if isinstance(key, str) and NUL in key:
            return f"{prefix} (a key)"
        found = nul_path(item, f"{prefix}.{key}" if isinstance(key, str) else
                         f"{prefix}[{key}]", depth + 1)
        if found:
            return found
    return ""


def nul_message(where: str) -> str:
    """The refusal's message for the field ``where``."""
    return (f"{where} holds a NUL character (U+0000), which no store can keep: remove it "
            "(text is sent as it reads, without control characters)")
