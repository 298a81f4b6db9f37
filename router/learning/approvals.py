"""Approvals of quarantined skills, kept in the feedback store with the learned state (files or
PostgreSQL: ``router.learning.store``), so every replica and every build reads the same ones.

``approve`` and ``revoke`` are what ``skill-router admission`` does; ``stored_approvals`` is what
a build reads. Each first moves the approvals an older release kept in
``<index_dir>/admission/approvals.json`` into the store (once: the file is then renamed
``approvals.json.moved``), so nothing approved before is lost; an approval the store already
holds for the same skill is newer and wins."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from router.admission.approvals import legacy_path, read_file
from router.admission.policy import Approval
from router.learning.store import FeedbackStore

MOVED = ".moved"  # the suffix the legacy file takes once its approvals are in the store


def move_legacy(store: FeedbackStore, index_dir: str | Path | None) -> int:
    """Move ``index_dir``'s legacy approvals file into ``store``; how many approvals moved."""
    if index_dir is None:
        return 0
    path = legacy_path(index_dir)
    found = read_file(path)
    if not found and not path.exists():
        return 0
    held = {a.key for a in store.read_approvals()}
    moved = [a for a in found if a.key not in held]
    for approval in moved:
        store.put_approval(approval)
    with contextlib.suppress(FileNotFoundError):  # another process moved it meanwhile
        os.replace(path, path.with_name(path.name + MOVED))
    return len(moved)


def stored_approvals(store: FeedbackStore, index_dir: str | Path | None) -> list[Approval]:
    """Every approval ``store`` keeps (after moving ``index_dir``'s legacy file into it)."""
    move_legacy(store, index_dir)
    return store.read_approvals()


def approve(store: FeedbackStore, index_dir: str | Path | None, key: str, digest: str,
            by: str, note: str = "", now: float | None = None) -> Approval:
    """Record ``by``'s approval of ``key`` at ``digest`` (replacing the skill's earlier one)."""
    if not key or not digest:
        raise ValueError("an approval names a skill and its digest")
    move_legacy(store, index_dir)
    approval = Approval(key, digest, by, time.time() if now is None else now, note)
    store.put_approval(approval)
    return approval


def revoke(store: FeedbackStore, index_dir: str | Path | None, key: str) -> bool:
    """Drop ``key``'s approval; False when it had none."""
    move_legacy(store, index_dir)
    return store.drop_approval(key)


def copy_approvals(source: FeedbackStore, target: FeedbackStore,
                   index_dir: str | Path | None) -> int:
    """Copy ``source``'s approvals (after moving ``index_dir``'s legacy file into it) into
    ``target``, skipping skills ``target`` holds an approval of; how many were copied."""
    held = {a.key for a in target.read_approvals()}
    new = [a for a in stored_approvals(source, index_dir) if a.key not in held]
    for approval in new:
        target.put_approval(approval)
    return len(new)
