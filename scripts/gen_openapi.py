"""Generate the OpenAPI 3.1 document of the JSON door from protos/router/v1/router.proto.

Usage: python scripts/gen_openapi.py [OUT_FILE]
  OUT_FILE defaults to protos/router/v1/router.openapi.json (committed beside the proto).

protoc (grpcio-tools) compiles the proto into descriptors with their comments; each unary
method becomes ``POST /<package>.<Service>/<Method>`` (the Connect protocol) with its request
and response messages as schemas in the proto3 JSON mapping (lowerCamelCase names, 64-bit
integers as numbers or strings, enums by name or number, bytes as base64) and the Connect error
body for every other status. Nothing here is written by hand: a field added to the proto
appears in the document at the next ``make proto``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2

REPO = Path(__file__).resolve().parent.parent
PROTO = "router/v1/router.proto"
OUT = REPO / "protos" / "router" / "v1" / "router.openapi.json"
F = descriptor_pb2.FieldDescriptorProto
INT32 = {F.TYPE_INT32, F.TYPE_SINT32, F.TYPE_SFIXED32}
UINT32 = {F.TYPE_UINT32, F.TYPE_FIXED32}
INT64 = {F.TYPE_INT64, F.TYPE_SINT64, F.TYPE_SFIXED64, F.TYPE_UINT64, F.TYPE_FIXED64}
ERROR = {"type": "object", "required": ["code", "message"], "description": (
    "A Connect error: `code` is the gRPC status name in lower case (`invalid_argument`, "
    "`not_found`, `unauthenticated`, `permission_denied`, `resource_exhausted`, ...), "
    "`message` says what to change."),
    "properties": {"code": {"type": "string"}, "message": {"type": "string"}}}


def descriptors(repo: Path = REPO) -> descriptor_pb2.FileDescriptorProto:
    """The proto's descriptor, with its comments (protoc's source info)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set.pb"
        subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{repo / 'protos'}",
                        "--include_source_info", f"--descriptor_set_out={out}", PROTO],
                       check=True, cwd=repo)
        found = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    return found.file[0]


def comments(file: descriptor_pb2.FileDescriptorProto) -> dict[tuple[int, ...], str]:
    """Each commented element's path -> its leading comment, as one paragraph per block."""
    return {tuple(loc.path): " ".join(loc.leading_comments.split()).strip()
            for loc in file.source_code_info.location if loc.leading_comments.strip()}


def scalar(field: descriptor_pb2.FieldDescriptorProto, package: str) -> dict[str, Any]:
    """The schema of one value of ``field`` in the proto3 JSON mapping."""
    kind = field.type
    if kind in (F.TYPE_MESSAGE, F.TYPE_ENUM):
        return {"$ref": f"#/components/schemas/{field.type_name.removeprefix(f'.{package}.')}"}
    if kind == F.TYPE_BOOL:
        return {"type": "boolean"}
    if kind == F.TYPE_STRING:
        return {"type": "string"}
    if kind == F.TYPE_BYTES:
        return {"type": "string", "contentEncoding": "base64"}
    if kind in INT32:
        return {"type": "integer", "format": "int32", "minimum": -(2**31), "maximum": 2**31 - 1}
    if kind in UINT32:
        return {"type": "integer", "format": "uint32", "minimum": 0, "maximum": 2**32 - 1}
    if kind in INT64:  # written as a string; read from a number or a string
        unsigned = kind in (F.TYPE_UINT64, F.TYPE_FIXED64)
        low, high = (0, 2**64 - 1) if unsigned else (-(2**63), 2**63 - 1)
        return {"type": ["string", "integer"], "pattern": "^-?[0-9]+$", "minimum": low,
                "maximum": high, "format": "uint64" if unsigned else "int64"}
    return {"type": ["number", "string"], "pattern": "^(NaN|-?Infinity)$",
            "format": "float" if kind == F.TYPE_FLOAT else "double"}


def message_schema(message: descriptor_pb2.DescriptorProto, path: tuple[int, ...],
                   notes: dict[tuple[int, ...], str], package: str,
                   maps: dict[str, descriptor_pb2.DescriptorProto]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for index, field in enumerate(message.field):
        entry = maps.get(field.type_name)
        if entry is not None:
            schema: dict[str, Any] = {"type": "object",
                                      "additionalProperties": scalar(entry.field[1], package)}
        elif field.label == F.LABEL_REPEATED:
            schema = {"type": "array", "items": scalar(field, package)}
        else:
            schema = scalar(field, package)
        note = notes.get((*path, 2, index))
        properties[field.json_name] = {**schema, "description": note} if note else schema
    schema = {"type": "object", "properties": properties}
    note = notes.get(path)
    return {"description": note, **schema} if note else schema


def schemas(file: descriptor_pb2.FileDescriptorProto) -> dict[str, Any]:
    """Every message and enum of ``file`` (nested ones as ``Outer.Inner``), by name."""
    notes, package, out = comments(file), file.package, {}
    maps = {f".{package}.{m.name}.{n.name}": n for m in file.message_type
            for n in m.nested_type if n.options.map_entry}

    def walk(message: descriptor_pb2.DescriptorProto, path: tuple[int, ...], prefix: str) -> None:
        name = f"{prefix}{message.name}"
        out[name] = message_schema(message, path, notes, package, maps)
        for index, nested in enumerate(message.nested_type):
            if not nested.options.map_entry:
                walk(nested, (*path, 3, index), f"{name}.")
        for index, enum in enumerate(message.enum_type):
            out[f"{name}.{enum.name}"] = enum_schema(enum, notes.get((*path, 4, index)))

    for index, message in enumerate(file.message_type):
        walk(message, (4, index), "")
    for index, enum in enumerate(file.enum_type):
        out[enum.name] = enum_schema(enum, notes.get((5, index)))
    return dict(sorted(out.items()))


def enum_schema(enum: descriptor_pb2.EnumDescriptorProto, note: str | None) -> dict[str, Any]:
    values = [v.name for v in enum.value]
    schema: dict[str, Any] = {"type": ["string", "integer"],
                              "enum": [*values, *(v.number for v in enum.value)]}
    return {"description": note, **schema} if note else schema


def operation(method: descriptor_pb2.MethodDescriptorProto, note: str | None,
              package: str) -> dict[str, Any]:
    def ref(type_name: str) -> dict[str, str]:
        return {"$ref": f"#/components/schemas/{type_name.removeprefix(f'.{package}.')}"}

    binary = {"schema": {"type": "string", "format": "binary"}}
    return {"operationId": method.name, "summary": (note or method.name).split(". ")[0],
            **({"description": note} if note else {}),
            "parameters": [{"$ref": "#/components/parameters/ConnectProtocolVersion"},
                           {"$ref": "#/components/parameters/ConnectTimeoutMs"}],
            "requestBody": {"required": True, "content": {
                "application/json": {"schema": ref(method.input_type)},
                "application/proto": binary}},
            "responses": {
                "200": {"description": "The answer", "content": {
                    "application/json": {"schema": ref(method.output_type)},
                    "application/proto": binary}},
                "default": {"description": "A Connect error", "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/"
                                                            "connect.Error"}}}}}}


PARAMETERS = {
    "ConnectProtocolVersion": {"name": "Connect-Protocol-Version", "in": "header",
                               "required": False, "schema": {"type": "string", "enum": ["1"]},
                               "description": "The Connect protocol's version (1)."},
    "ConnectTimeoutMs": {"name": "Connect-Timeout-Ms", "in": "header", "required": False,
                         "schema": {"type": "string", "pattern": "^[0-9]{1,10}$"},
                         "description": "The call's deadline, in whole milliseconds."}}


def document(file: descriptor_pb2.FileDescriptorProto) -> dict[str, Any]:
    notes = comments(file)
    paths: dict[str, Any] = {}
    for s_index, service in enumerate(file.service):
        for m_index, method in enumerate(service.method):
            if method.client_streaming or method.server_streaming:
                continue  # the JSON door serves unary methods
            note = notes.get((6, s_index, 2, m_index))
            paths[f"/{file.package}.{service.name}/{method.name}"] = {
                "post": {"tags": [service.name], **operation(method, note, file.package)}}
    service_note = notes.get((6, 0), "")
    return {
        "openapi": "3.1.0",
        "info": {"title": f"{file.package}.{file.service[0].name}", "version": file.package,
                 "description": (f"{service_note}\n\nGenerated from protos/{PROTO} by "
                                 "scripts/gen_openapi.py: the JSON door (`serve --http-port`, "
                                 "the Connect protocol). Do not edit: run `make proto`.")},
        "paths": paths,
        "components": {"schemas": {**schemas(file), "connect.Error": ERROR},
                       "parameters": PARAMETERS,
                       "securitySchemes": {"bearer": {
                           "type": "http", "scheme": "bearer",
                           "description": "A token the server accepts, when it asks for one "
                                          "(server.auth_token_file, server.principals_file)"}}},
        "security": [{"bearer": []}, {}]}


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else OUT
    text = json.dumps(document(descriptors()), indent=2, ensure_ascii=False) + "\n"
    out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
