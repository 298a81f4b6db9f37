"""Checksums of an exported ONNX query encoder (``<index>/.onnx/<model>/``).

The export records the SHA-256 of ``model.onnx`` and ``tokenizer.json`` in its ``export.json``
when it is written; every load checks them (``router.common.integrity``). A damaged file would
otherwise load without a word and return vectors that silently retrieve the wrong skills.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from router.common.integrity import mismatched, sha256_file

CHECKSUMS_KEY = "sha256"


def record(folder: Path, names: Sequence[str]) -> dict[str, str]:
    """``{file name: SHA-256}`` of ``names`` in ``folder``, for ``export.json``."""
    return {name: sha256_file(folder / name) for name in names}


def problem(folder: Path, meta: Mapping[str, Any], names: Sequence[str]) -> str | None:
    """Why the export in ``folder`` cannot be trusted, or None when every file matches."""
    expected = meta.get(CHECKSUMS_KEY)
    if not isinstance(expected, Mapping) or set(expected) != set(names):
        return "export.json records no checksums"
    try:
        bad = mismatched(folder, expected, listed_only=True)
    except OSError as exc:
        name = Path(exc.filename).name if exc.filename else folder.name
        return f"cannot read {name}: {exc.strerror or exc}"
    if not bad:
        return None
    if not (folder / bad[0]).is_file():
        return f"cannot read {bad[0]}: no such file"
    return f"{bad[0]} does not match its recorded SHA-256"
