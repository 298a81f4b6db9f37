"""What a version recorded of admission (``router.builder.admitting``): each judged skill's
digest, verdict and findings, by skill key. Read by ListSkills (the findings its operators see),
the metrics, and ApproveSkill (the digest an approval must name)."""

from __future__ import annotations

import functools
from typing import Any

from router.builder.recorded import ADMISSION_KEY, recorded_settings
from router.errors import IndexUnavailable


@functools.lru_cache(maxsize=4)
def recorded_admission(version_dir: str) -> dict[str, Any]:
    """The verdicts a version recorded, by skill key ({} for a version without any): each
    ``{"digest", "quarantined", "approved", "findings"}``, for the skills with findings."""
    try:
        data = recorded_settings(version_dir).get(ADMISSION_KEY)
    except IndexUnavailable:
        return {}
    skills = data.get("skills") if isinstance(data, dict) else None
    return dict(skills) if isinstance(skills, dict) else {}
