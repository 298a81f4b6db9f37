"""Approvals kept beside the index's learned state: ``<index_dir>/admission/approvals.json``,
a list of ``Approval`` records written whole and replaced atomically. An approval names one
skill at one digest; approving again replaces the skill's earlier approval (a new digest
needs a new approval, and the old one then no longer admits anything)."""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from router.admission.policy import Approval

APPROVALS = Path("admission") / "approvals.json"


def approvals_path(index_dir: str | Path) -> Path:
    return Path(index_dir) / APPROVALS


def read_approvals(index_dir: str | Path) -> list[Approval]:
    """The approvals recorded under ``index_dir`` (none when there is no file)."""
    path = approvals_path(index_dir)
    try:
        rows = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read the approvals in {path}: {exc}") from exc
    return [Approval.from_dict(r) for r in rows if isinstance(r, dict)]


def approve(index_dir: str | Path, key: str, digest: str, by: str, note: str = "",
            now: float | None = None) -> Approval:
    """Record ``by``'s approval of ``key`` at ``digest`` (replacing the skill's earlier one)."""
    if not key or not digest:
        raise ValueError("an approval names a skill and its digest")
    approval = Approval(key, digest, by, time.time() if now is None else now, note)
    kept = [a for a in read_approvals(index_dir) if a.key != key]
    _write(approvals_path(index_dir), [*kept, approval])
    return approval


def revoke(index_dir: str | Path, key: str) -> bool:
    """Drop ``key``'s approval; False when it had none."""
    found = read_approvals(index_dir)
    kept = [a for a in found if a.key != key]
    if len(kept) == len(found):
        return False
    _write(approvals_path(index_dir), kept)
    return True


def _write(path: Path, approvals: list[Approval]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".approvals-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump([a.to_dict() for a in sorted(approvals, key=lambda a: a.key)], fh,
                      indent=1)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
