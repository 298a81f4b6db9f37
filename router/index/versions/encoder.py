"""The fine-tuned encoder a version stores: how it is named, verified, found, staged and
placed (light: no torch).

A version whose encoder was fine-tuned on its catalog's examples
(``router.builder.fine_tune.stage``) holds the tuned sentence-transformers model in ``encoder/``
(checksummed by the manifest like every other file), and its manifest ``model`` is
``<base>+ft-<hash12>``: the base model and the first 12 hex digits of the encoder fine-tuning
hash, so vectors of two different models are never mixed (embedding reuse is keyed by model id)
and the ONNX export of a tuned model never shares a cache folder with the base model's.
"""

from __future__ import annotations

import logging
import shutil
import uuid
from pathlib import Path

from router.common import integrity
from router.errors import IndexCorrupt, IndexUnavailable
from router.index.versions.layout import VERSIONS, current_version, read_manifest, version_names

log = logging.getLogger(__name__)

ENCODER_DIR = "encoder"
MARK = "+ft-"
HASH_CHARS = 12


def tuned_id(base: str, fine_tune_hash: str) -> str:
    """The model id of ``base`` fine-tuned with the encoder fine-tuning whose hash is
    ``fine_tune_hash``."""
    return f"{base}{MARK}{fine_tune_hash[:HASH_CHARS]}"


def is_tuned(model_id: str) -> bool:
    return MARK in model_id


def base_of(model_id: str) -> str:
    """The base model of a tuned id (any other id is its own base)."""
    return model_id.split(MARK, 1)[0]


def encoder_problem(folder: Path) -> str | None:
    """Why version folder ``folder``'s ``encoder/`` cannot be trusted (a file missing, added or
    not matching the manifest's SHA-256), or None when it verifies."""
    try:
        expected = read_manifest(folder).get("files")
    except (OSError, ValueError) as exc:
        return f"cannot read the manifest of {folder}: {exc}"
    if not isinstance(expected, dict):
        return f"{folder}: the manifest lists no file checksums"
    if not (folder / ENCODER_DIR).is_dir() or not any(
            str(name).startswith(ENCODER_DIR + "/") for name in expected):
        return f"{folder}: no {ENCODER_DIR}/ folder listed in its manifest"
    bad = integrity.mismatched(folder, expected, subfolder=ENCODER_DIR)
    return f"{folder}: checksum mismatch in {', '.join(bad)}" if bad else None


def _candidates(root: Path) -> list[str]:
    names = version_names(root)
    try:
        current = current_version(root)
    except IndexUnavailable:  # no usable CURRENT: no preference
        return names
    return [current, *(n for n in names if n != current)] if current in names else names


def locate(root: str | Path, model_id: str) -> Path:
    """The verified ``encoder/`` folder of tuned model ``model_id`` under index root ``root``
    (the current version's first, then the newest that holds it). Raises IndexCorrupt when no
    version holds an intact copy."""
    root = Path(root)
    problems = []
    for version in _candidates(root):
        folder = root / VERSIONS / version
        try:
            if read_manifest(folder).get("model") != model_id:
                continue
        except (OSError, ValueError):
            continue
        problem = encoder_problem(folder)
        if problem is None:
            return folder / ENCODER_DIR
        log.error("refused the fine-tuned encoder of %s: %s", version, problem)
        problems.append(problem)
    detail = "; ".join(problems) if problems else "no version holds it"
    raise IndexCorrupt(f"no intact fine-tuned encoder {model_id!r} under {root}: {detail}")


def new_staging(root: Path) -> Path:
    """A fresh ``.tmp-*`` folder for a tuned model (removed by retention if abandoned)."""
    return root / f".tmp-encoder-{uuid.uuid4().hex[:8]}"


def place(source: Path | None, staging: Path, folder: Path) -> None:
    """Put the adopted encoder (``source``: trained into ``staging``, or a version's, reused;
    None: none) into version ``folder``."""
    if source is None:
        return
    target = folder / ENCODER_DIR
    if source == staging:
        staging.rename(target)
    else:
        shutil.copytree(source, target)


def discard(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
