"""What a module imports, read from its source with ``ast`` (the layout checks' one reader)."""

from __future__ import annotations

import ast


def imported_modules(source: str, package: tuple[str, ...]) -> set[str]:
    """Every module name a module of ``package`` with ``source`` imports, relative imports
    resolved, wherever the statement stands (function-level and type-only ones included)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            module = ".".join((*base, *(node.module.split(".") if node.module else ())))
            out.update([module, *(f"{module}.{a.name}" for a in node.names)])
    return out
