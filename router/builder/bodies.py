"""Each skill's body for the lexical index (``router.index.body``): as admission read it, and
read here for the skills it did not (admission's verdicts taken from the version before, a
skill it could not read): a build never indexes a skill without its body by accident."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from router.errors import RouterError
from router.skills.files import read_body, skill_text
from router.skills.model import Skill, SkillKind
from router.skills.sources.base import SkillSource

log = logging.getLogger(__name__)


def bodies_for(skills: Sequence[Skill], read: Mapping[str, str],
               source: SkillSource | None) -> dict[str, str]:
    """``read`` (bodies by skill key) with the body of every SKILL.md skill it lacks, read
    through ``source`` (the disk when None); a skill that cannot be read has none (a log line:
    it is routed on its name and description)."""
    out = dict(read)
    for skill in skills:
        if skill.key in out or skill.kind is not SkillKind.SKILL_MD:
            continue
        try:
            out[skill.key] = (
                skill_text(source.fetch_skill_file(skill), skill.location, body_only=True)
                if source is not None else read_body(skill.location))
        except (OSError, RouterError) as exc:
            log.warning("the body of %s could not be read for the lexical index: %s",
                        skill.location, exc)
    return out
