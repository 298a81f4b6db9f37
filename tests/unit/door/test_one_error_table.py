"""Only ``router.door`` (its ``api`` table) and ``router.errors`` map error classes to status
codes: no other module answers a caught ``router.errors`` class with a gRPC code, an HTTP
status or a JSON-RPC error code of its own, nor keeps a table of them."""

from __future__ import annotations

import ast

from tests.support import REPO

PACKAGE = REPO / "router"
ALLOWED = (PACKAGE / "door", PACKAGE / "errors.py", PACKAGE / "v1")
JSON_RPC = {"INVALID_PARAMS", "INTERNAL_ERROR", "INVALID_REQUEST", "METHOD_NOT_FOUND"}


def _error_classes(sources: list[str]) -> set[str]:
    """``router.errors``'s classes and every class of ``sources`` deriving from one."""
    found = {n.name for n in ast.parse((PACKAGE / "errors.py").read_text(encoding="utf-8")).body
             if isinstance(n, ast.ClassDef)}
    classes = [n for s in sources for n in ast.walk(ast.parse(s)) if isinstance(n, ast.ClassDef)]
    grown = True
    while grown:
        before = len(found)
        found |= {c.name for c in classes if {_name(b) for b in c.bases} & found}
        grown = len(found) > before
    return found


def _name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _a_status(node: ast.AST) -> bool:
    """A gRPC status code, a JSON-RPC error code's name, or an HTTP error status."""
    if isinstance(node, ast.Attribute) and _name(node.value) == "StatusCode":
        return True
    if isinstance(node, ast.Name) and node.id in JSON_RPC:
        return True
    return (isinstance(node, ast.Constant) and type(node.value) is int
            and 400 <= node.value <= 599)


def mapped(source: str, errors: set[str]) -> list[int]:
    """The lines of ``source`` where an error class meets a status: a handler of one that
    answers with a status, or a dict from such classes to statuses."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ExceptHandler) and node.type is not None:
            caught = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
            if {_name(c) for c in caught} & errors and any(
                    _a_status(n) for stmt in node.body for n in ast.walk(stmt)):
                out.append(node.lineno)
        elif isinstance(node, ast.Dict) and any(
                k is not None and _name(k) in errors for k in node.keys) and any(
                _a_status(n) for v in node.values for n in ast.walk(v)):
            out.append(node.lineno)
    return out


def test_only_the_door_layer_maps_errors_to_statuses() -> None:
    paths = [p for p in sorted(PACKAGE.rglob("*.py"))
             if not any(p == a or a in p.parents for a in ALLOWED)]
    sources = {p: p.read_text(encoding="utf-8") for p in paths}
    errors = _error_classes(list(sources.values()))
    assert {"RoleMissing", "IndexUnavailable", "InvalidRequest"} <= errors
    found = {str(p.relative_to(REPO)): lines for p, s in sources.items()
             if (lines := mapped(s, errors))}
    assert found == {}


def test_the_check_finds_each_kind_of_map() -> None:
    errors = {"RouterError", "NotFound", "IndexUnavailable", "RoleMissing"}
    for source in (
            "try:\n    x()\nexcept IndexUnavailable as exc:\n"
            "    raise MCPError(code=INTERNAL_ERROR)",
            "try:\n    x()\nexcept (KeyError, NotFound):\n    context.abort("
            "grpc.StatusCode.NOT_FOUND, 'x')",
            "try:\n    x()\nexcept RoleMissing:\n    return render('error.html', 403)",
            "STATUS = {NotFound: 404, RouterError: 502}",
            "CODES = {errors.NotFound: grpc.StatusCode.NOT_FOUND}"):
        assert mapped(source, errors), source
    for source in ("try:\n    x()\nexcept RouterError as exc:\n    raise ToolError(str(exc))",
                   "try:\n    x()\nexcept ValueError:\n    return render('error.html', 400)",
                   "try:\n    x()\nexcept RouterError as exc:\n    code = http_status(exc)",
                   "LIMITS = {'max': 500}"):
        assert mapped(source, errors) == [], source

