"""The package's shape holds: no import cycle (function-level and type-only imports count), the
encoders independent of the index, the build-time calibration below the index, a short top
level, small modules, no function with more than ``MAX_PARAMETERS`` parameters, and no
benchmark code shipped in the package."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support import REPO
from tests.support.imports import imported_modules

PACKAGE = REPO / "router"
GENERATED = PACKAGE / "v1"
ENCODERS = PACKAGE / "encoders"
MAX_TOP_LEVEL_FILES = 8
MAX_MODULE_LINES = 300
MAX_PARAMETERS = 8  # positional and keyword-only, self / cls not counted: more wants a plan


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        if GENERATED in path.parents:
            continue
        parts = path.relative_to(REPO).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _imports(path: Path, known: set[str]) -> set[str]:
    """Every router module ``path`` imports, wherever the import statement stands."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("router"):
            candidates = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            candidates = [a.name for a in node.names if a.name.startswith("router")]
        else:
            continue
        out.update(c for c in candidates if c in known)
    return out


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle, or [] when the graph has none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return []

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return []


def test_no_import_cycle_inside_the_package() -> None:
    modules = _modules()
    graph = {name: _imports(path, set(modules)) - {name} for name, path in modules.items()}
    assert _cycle(graph) == []


def test_the_detector_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []


def _from_index(source: str, package: tuple[str, ...]) -> list[str]:
    return sorted(n for n in imported_modules(source, package)
                  if n == "router.index" or n.startswith("router.index."))


def test_the_encoders_import_nothing_from_the_index() -> None:
    found = {str(p.relative_to(REPO)): hits for p in sorted(ENCODERS.rglob("*.py"))
             if (hits := _from_index(p.read_text(encoding="utf-8"),
                                     p.parent.relative_to(REPO).parts))}
    assert found == {}


def test_the_index_import_check_sees_every_kind_of_import() -> None:
    package = ("router", "encoders")
    for source in ("import router.index.store",
                   "from router.index.layout import VERSIONS",
                   "from router import index",
                   "def load() -> None:\n    from router.index import recovery",
                   "from ..index import layout",
                   "from .. import index",
                   "if TYPE_CHECKING:\n    from ..index.store import IndexSnapshot"):
        assert _from_index(source, package), source
    for source in ("from . import base", "from .base import Embedder",
                   "from router.encoders.base import normalise", "import router.errors",
                   "from router.indexing import x"):
        assert _from_index(source, package) == [], source


def test_top_level_is_short_and_modules_are_small() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_FILES, top
    nested = {p.name for p in PACKAGE.rglob("*.py") if p.parent != PACKAGE}
    assert not set(top) - {"__init__.py"} & nested  # no name twice, top level and below
    long = {str(p.relative_to(REPO)): n for p in _modules().values()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def test_benchmarks_live_outside_the_package() -> None:
    assert not [p for p in PACKAGE.rglob("*.py") if "bench" in p.name]
    assert (REPO / "benchmarks" / "__main__.py").is_file()


def _crowded(source: str) -> dict[str, int]:
    """Every function of ``source`` that takes more than ``MAX_PARAMETERS`` parameters."""
    out = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
            if names[:1] in (["self"], ["cls"]):
                names = names[1:]
            if len(names) > MAX_PARAMETERS:
                out[f"{node.name}:{node.lineno}"] = len(names)
    return out


def test_no_function_takes_more_than_eight_parameters() -> None:
    crowded = {f"{path.relative_to(REPO)}:{where}": n for path in _modules().values()
               for where, n in _crowded(path.read_text(encoding="utf-8")).items()}
    assert crowded == {}


def test_the_parameter_count_sees_keyword_only_and_skips_self() -> None:
    nine = ", ".join(f"a{i}" for i in range(8))
    assert _crowded(f"def f({nine}, *, b): ...") == {"f:1": 9}
    assert _crowded(f"class C:\n    def m(self, {nine}): ...") == {}
    assert _crowded(f"def g(a, /, {nine}): ...") == {"g:1": 9}


def test_calibration_imports_neither_the_index_nor_routing() -> None:
    modules = _modules()
    below = {name: _imports(path, set(modules)) for name, path in modules.items()
             if name.startswith("router.calibration")}
    assert below  # the package exists
    upward = {name: sorted(i for i in found if i.startswith(("router.index", "router.routing")))
              for name, found in below.items()}
    assert {name: found for name, found in upward.items() if found} == {}


def test_routing_imports_neither_the_encoders_nor_learning() -> None:
    modules = _modules()
    below = {name: _imports(path, set(modules)) for name, path in modules.items()
             if name.startswith("router.routing")}
    assert below  # the package exists
    upward = {name: sorted(i for i in found
                           if i.startswith(("router.encoders", "router.learning")))
              for name, found in below.items()}
    assert {name: found for name, found in upward.items() if found} == {}


MAX_PACKAGE_SHARE = 0.16  # of router/'s lines, for any one top-level package or module
UNIT = REPO / "tests" / "unit"


def _shares() -> dict[str, float]:
    lines: dict[str, int] = {}
    for path in PACKAGE.rglob("*.py"):
        if GENERATED in path.parents:
            continue
        top = path.relative_to(PACKAGE).parts[0]
        lines[top] = lines.get(top, 0) + len(path.read_text(encoding="utf-8").splitlines())
    total = sum(lines.values())
    return {name: count / total for name, count in lines.items()}


def test_no_package_holds_more_than_its_share_of_the_lines() -> None:
    crowded = {name: round(share, 3) for name, share in _shares().items()
               if share > MAX_PACKAGE_SHARE}
    assert crowded == {}


def test_unit_tests_mirror_the_packages() -> None:
    folders = sorted(p.name for p in UNIT.iterdir()
                     if p.is_dir() and (PACKAGE / p.name).is_dir())
    strays = sorted(p.name for p in UNIT.iterdir() if p.is_dir() and p.name != "__pycache__"
                    and not (PACKAGE / p.name).is_dir())
    assert len(folders) >= 6, folders
    assert strays == []  # a unit-test folder is named after the package it tests
    assert len(list(UNIT.glob("test_*.py"))) <= 12


# The floors of router/, top first (docs/development.md draws them). A module may import its own
# top-level package and any floor below its own; names sharing a floor never import each other
# (no door imports another door). An import that climbs fails here, whatever cycle it makes.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("cli",),
    ("service", "mcp", "console"),  # the doors
    ("evaluation",),
    ("client",),
    ("door",),  # what every door shares: the backend, the error table, path policy, poller
    ("engine",),  # serving, the turn's stages, the session state
    ("reindex",),
    ("builder",),  # the build: pipeline, plan, recipe, shards, encoder fine-tuning
    ("activation",),
    ("routing",),  # the turn's pure parts: no state, no encoder, nothing learned
    ("learning",),  # takes what a turn showed as plain values (router.learning.recorder)
    ("objectstore",),  # index versions in object storage
    ("index",),
    ("calibration",),
    ("examples",),
    ("admission",),  # what the router checks of a skill before routing it
    ("access",),
    ("skills", "encoders"),
    ("common",),
    ("bearer", "credentials"),
    ("config",),
    ("errors",),
    ("v1",),
)


# The one import allowed to climb: a re-export kept at the import path gateways were given
# (docs/gateway.md, examples/gateway.py), defining nothing of its own.
REEXPORTS = {"router.routing.activation -> router.activation.content"}


def _floor() -> dict[str, int]:
    return {name: level for level, names in enumerate(LAYERS) for name in names}


def _climbs(graph: dict[str, set[str]]) -> list[str]:
    """Every import of ``graph`` (module -> modules it imports) that climbs ``LAYERS`` or
    crosses to another name on its own floor."""
    floor = _floor()
    out = []
    for module, imported in sorted(graph.items()):
        top = module.split(".")[1]
        for target in sorted(imported):
            other = target.split(".")[1]
            edge = f"{module} -> {target}"
            if other != top and floor[other] <= floor[top] and edge not in REEXPORTS:
                out.append(edge)
    return out


def test_every_top_level_name_has_a_floor() -> None:
    names = {p.name.removesuffix(".py") for p in PACKAGE.iterdir()
             if p.name.endswith(".py") or (p / "__init__.py").is_file()}
    assert sorted(names - {"__init__"} - set(_floor())) == []
    assert len(_floor()) == sum(len(names) for names in LAYERS)  # no name on two floors


def test_no_import_climbs_the_floors() -> None:
    source = (PACKAGE / "routing" / "activation.py").read_text(encoding="utf-8")
    assert len(ast.parse(source).body) == 3  # docstring, the import, __all__: nothing defined
    modules = _modules()
    graph = {name: _imports(path, set(modules)) for name, path in modules.items()
             if name != "router"}
    assert _climbs(graph) == []


def test_the_floor_check_finds_a_climb_and_a_door_importing_a_door() -> None:
    graph = {"router.routing.x": {"router.index.store", "router.activation.content"},
             "router.mcp.cli": {"router.engine", "router.cli.caller", "router.service.poller"},
             "router.skills.y": {"router.common.paths", "router.errors"}}
    assert _climbs({"router.routing.activation": {"router.activation.content"}}) == []
    assert _climbs(graph) == ["router.mcp.cli -> router.cli.caller",
                              "router.mcp.cli -> router.service.poller",
                              "router.routing.x -> router.activation.content"]


def test_token_hashes_are_read_only_in_access() -> None:
    found = sorted(str(p.relative_to(REPO)) for p in PACKAGE.rglob("*.py")
                   if "token_sha256" in p.read_text(encoding="utf-8")
                   and PACKAGE / "access" not in p.parents)
    assert found == []
