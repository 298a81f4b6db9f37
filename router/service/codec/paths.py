"""A path view (``router.door.path_policy``) applied to protobuf answers on their way out of the
gRPC door: every string field, nested and repeated ones too."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from router.common.paths import EXPOSED, PathView
from router.v1 import router_pb2 as pb

M = TypeVar("M", bound=Message)


def hidden(message: M, view: PathView) -> M:
    """``message`` with every string field (nested and repeated ones too) rewritten by
    ``view``, in place; a RouteResponse's ``catalog_chars`` follows its rewritten text and
    GetIndexInfo's ``path`` is the version's name."""
    if view is EXPOSED:
        return message
    _rewrite(message, view)
    for route in _routes(message):
        route.catalog_chars = len(route.catalog_text)
    if isinstance(message, pb.GetIndexInfoResponse):
        message.path = message.version  # also where the index folder was given as relative
    return message


def _routes(message: Message) -> Iterable[pb.RouteResponse]:
    if isinstance(message, pb.RouteResponse):
        yield message
    elif isinstance(message, pb.ExplainResponse):
        yield message.route


def _rewrite(message: Message, view: PathView) -> None:
    for descriptor, value in message.ListFields():
        repeated = descriptor.is_repeated
        if descriptor.type == FieldDescriptor.TYPE_STRING:
            if repeated:
                value[:] = [view.text(v) for v in value]
            else:
                setattr(message, descriptor.name, view.text(value))
        elif descriptor.type == FieldDescriptor.TYPE_MESSAGE:
            entry = descriptor.message_type
            if entry is not None and entry.GetOptions().map_entry:
                continue  # no map fields carry paths in this API
            for item in value if repeated else (value,):
                _rewrite(item, view)
