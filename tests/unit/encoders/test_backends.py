"""The encoder backends by name: the registry, the configuration's names, and no backend name
spelled outside ``router/encoders/`` and ``router/config/``."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from router import config
from router.encoders import backends
from router.encoders.backends import UnknownBackend, backend
from router.errors import InvalidRequest
from tests.support import REPO

PACKAGE = REPO / "router"
ALLOWED = (PACKAGE / "encoders", PACKAGE / "config")


def test_the_configuration_accepts_exactly_the_registered_names() -> None:
    assert backends.names() == config.QUERY_BACKENDS
    assert config.IndexConfig().query_backend == backends.SERVE
    for name in backends.names():
        assert config.IndexConfig(query_backend=name).query_backend == name
    with pytest.raises(InvalidRequest, match=r"index\.query_backend: 'onnx8'"):
        config.IndexConfig(query_backend="onnx8")


def test_an_unknown_name_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(UnknownBackend, match="unknown embedding backend 'tensorrt'") as caught:
        backend("tensorrt")
    assert isinstance(caught.value, ValueError)
    assert all(name in str(caught.value) for name in backends.names())


def test_each_backend_says_what_it_loads() -> None:
    torch, onnx, int8 = backend("torch"), backend("onnx"), backend("onnx-int8")
    assert (torch.loads, torch.exported, torch.int8) == ("sentence-transformers", False, False)
    assert (onnx.loads, onnx.exported, onnx.int8) == ("onnxruntime", True, False)
    assert (int8.loads, int8.exported, int8.int8) == ("onnxruntime", True, True)
    assert int8.full_precision == "onnx" and backends.BUILD == "torch"
    for name in backends.names():  # a full-precision twin runs the same runtime, unquantized
        chosen = backend(name)
        twin = backend(chosen.full_precision)
        assert not twin.int8 and twin.loads == chosen.loads
        assert (twin is chosen) == (not chosen.int8)


def test_hash_models_are_the_test_embedder() -> None:
    assert backends.is_hash_model("hash") and backends.is_hash_model("hash-64")
    assert not backends.is_hash_model("hashed-model") and not backends.is_hash_model("gt-hash")


def test_the_registry_and_the_configuration_import_nothing_heavy() -> None:
    code = ("import sys, router.config, router.encoders.backends; "
            "print(' '.join(m for m in ('numpy', 'torch', 'onnxruntime', 'router.encoders.base')"
            " if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=REPO).stdout.strip()
    assert loaded == ""


def _docstrings(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def spelled_names(source: str) -> list[tuple[int, str]]:
    """(line, name) of every string constant that is a backend's name, docstrings aside."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    names = set(backends.names())
    return sorted((node.lineno, node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and node.value in names and id(node) not in skip)


def test_no_backend_name_is_spelled_outside_the_encoders() -> None:
    spelled = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if any(path == allowed or allowed in path.parents for allowed in ALLOWED):
            continue
        found = spelled_names(path.read_text(encoding="utf-8"))
        if found:
            spelled[str(path.relative_to(REPO))] = found
    assert spelled == {}  # take the backend from the configuration or router.encoders.backends


def test_the_name_check_sees_defaults_constants_and_comparisons() -> None:
    source = '''"""Module docs may say "onnx"."""
INT8 = "onnx-int8"
def f(backend: str = "onnx") -> bool:
    """Nor is "torch" here counted."""
    return backend.startswith("torch") or f"{backend}" == "plain"
class C:
    """onnx"""
    choices = ("torch",)
'''
    assert spelled_names(source) == [(2, "onnx-int8"), (3, "onnx"), (5, "torch"), (8, "torch")]
