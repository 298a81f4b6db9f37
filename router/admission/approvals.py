"""Approvals as a JSON file: a list of ``Approval`` records written whole and replaced
atomically. The file feedback store keeps its approvals so
(``router.learning.file_store``); ``<index_dir>/admission/approvals.json``, where approvals
were kept before the feedback store held them, is read once and moved into the store
(``router.learning.approvals``). An approval names one skill at one digest; approving again
replaces the skill's earlier approval."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from router.admission.policy import Approval

LEGACY = Path("admission") / "approvals.json"  # the index folder's approvals of old


def legacy_path(index_dir: str | Path) -> Path:
    return Path(index_dir) / LEGACY


def read_file(path: Path) -> list[Approval]:
    """The approvals in ``path`` (none when there is no file); ValueError when unreadable."""
    try:
        rows = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read the approvals in {path}: {exc}") from exc
    if not isinstance(rows, list):
        raise ValueError(f"cannot read the approvals in {path}: not a JSON list")
    return [Approval.from_dict(r) for r in rows if isinstance(r, dict)]


def replaced(approvals: Iterable[Approval], approval: Approval) -> list[Approval]:
    """``approvals`` with ``approval`` in place of its skill's earlier one, by key."""
    kept = [a for a in approvals if a.key != approval.key]
    return sorted([*kept, approval], key=lambda a: a.key)


def write_file(path: Path, approvals: Iterable[Approval]) -> None:
    """``approvals`` written to ``path`` at once (a reader sees the old file or the new)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".approvals-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump([a.to_dict() for a in sorted(approvals, key=lambda a: a.key)], fh,
                      indent=1)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
