"""ApproveSkill and RevokeApproval: an admin's approval of a quarantined skill at the digest the
served version judged, kept in the feedback store with the learned state
(``router.learning.approvals``, as ``skill-router admission approve|revoke`` keeps it), so the
next Reindex of every replica sharing the store reads it.

The served version is not changed: a quarantined skill is disabled in it (never routed,
activated or listed to the model), and the next build admits it (Reindex). Approving a skill the
served version does not quarantine is FAILED_PRECONDITION (there is nothing to approve), except
one it admitted by an approval: approving that again, at its digest, replaces the approval (a
repeated call is harmless). Revoking a skill without an approval answers ``revoked`` false."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from router.admission.policy import Approval
from router.builder.admission_record import recorded_admission
from router.errors import FailedPrecondition, InvalidRequest, NotFound
from router.learning.approvals import approve, revoke
from router.learning.store import FeedbackStore
from router.routing.visible import Visible
from router.skills.model import DEFAULT_CATALOG, skill_key

DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
NO_STORE = ("this server keeps no feedback store, where approvals are kept with the learned "
            "state: set feedback.store_url (or serve an index folder), or approve on the host "
            "with `skill-router admission approve --feedback-store URL`")
APPROVED_NEXT = "the next Reindex admits it (on every replica sharing the feedback store)"
REVOKED_NEXT = "the next Reindex judges it again"


@dataclass(frozen=True)
class Approved:
    """An approval stored, and the served version (where the skill stays quarantined until the
    next Reindex)."""

    approval: Approval
    index_version: str


@dataclass(frozen=True)
class Revoked:
    key: str  # the skill's record key
    revoked: bool  # False: it had no approval


def approve_skill(store: FeedbackStore | None, visible: Visible, index_dir: Path | None,
                  name: str, catalog: str, digest: str, by: str, note: str = "") -> Approved:
    """Store ``by``'s approval of ``catalog``'s skill ``name`` at ``digest``, which must be the
    digest the served version judged it at (see the module notes)."""
    if not digest:
        raise InvalidRequest("name the digest you reviewed (SkillInfo.admission_digest, "
                             "`skill-router admission list`)")
    if not DIGEST.fullmatch(digest):
        raise InvalidRequest(f"digest {digest[:80]!r} is not sha256: and 64 lowercase hex "
                             "digits, as ListSkills and `skill-router admission list` show it")
    key = _held_key(visible, name, catalog, "approve")
    held = _store(store)
    snap = visible.snap
    version = snap.info.version
    if key not in snap.keyed:
        raise NotFound(f"no skill {name!r} in catalog {catalog or DEFAULT_CATALOG!r} of the "
                       f"served version {version}")
    row = recorded_admission(snap.info.path).get(key)
    if not isinstance(row, dict) or not (row.get("quarantined") or row.get("approved")):
        raise FailedPrecondition(f"skill {key!r} is not quarantined in the served version "
                                 f"{version}: there is nothing to approve")
    judged = str(row.get("digest", ""))
    if judged != digest:
        raise FailedPrecondition(
            f"skill {key!r} changed: the served version {version} judged it at {judged}, not "
            f"{digest}; review it again (ListSkills, `skill-router admission list`) and "
            "approve that digest")
    return Approved(approve(held, index_dir, key, digest, by, note), version)


def revoke_approval(store: FeedbackStore | None, visible: Visible, index_dir: Path | None,
                    name: str, catalog: str) -> Revoked:
    """Drop the approval of ``catalog``'s skill ``name`` (held by the served version or not:
    an approval outlives a skill its registry dropped)."""
    key = _held_key(visible, name, catalog, "revoke")
    return Revoked(key, revoke(_store(store), index_dir, key))


def _held_key(visible: Visible, name: str, catalog: str, what: str) -> str:
    """The record key of ``catalog``'s ``name``; NotFound outside the caller's view."""
    if not name:
        raise InvalidRequest(f"name the skill to {what}")
    catalog = catalog or DEFAULT_CATALOG
    view = visible.view
    if not view.whole and catalog not in view.catalogs:
        raise NotFound(f"no catalog {catalog!r} in this caller's view (its catalogs: "
                       f"{', '.join(view.catalogs) or 'none'})")
    if not view.holds(catalog, name):
        raise NotFound(f"no skill {name!r} in this caller's view")
    return skill_key(catalog, name)


def _store(store: FeedbackStore | None) -> FeedbackStore:
    if store is None:
        raise FailedPrecondition(NO_STORE)
    return store
