"""The console's approval forms (``POST /skills/NAME/approve`` and ``/revoke``): what an admin
asked, read from the posted form. The page posts the catalog and the digest ListSkills showed;
the service checks that digest is still the one the served version judged (ApproveSkill:
``router.engine.approving``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

APPROVE, REVOKE = "approve", "revoke"
MAX_NOTE_CHARS = 500


@dataclass(frozen=True)
class Asked:
    action: str  # APPROVE or REVOKE
    catalog: str
    digest: str  # "" for a revoke
    note: str
    confirmed: bool  # the confirmation page's form (``confirm=1``)

    @classmethod
    def parse(cls, action: str, form: Mapping[str, str]) -> Asked:
        """The request of ``form``; ValueError with a message for the page when it lacks the
        digest of an approval or carries too long a note."""
        digest = form.get("digest", "").strip() if action == APPROVE else ""
        if action == APPROVE and not digest:
            raise ValueError("the form names no digest: open the skill's page and approve "
                             "from there")
        note = form.get("note", "").strip()
        if len(note) > MAX_NOTE_CHARS:
            raise ValueError(f"the note is longer than {MAX_NOTE_CHARS} characters")
        return cls(action, form.get("catalog", "").strip(), digest, note,
                   form.get("confirm") == "1")
