"""Each skill's body for the lexical index (``router.index.body``): as admission read it, and
read here for the skills it did not (admission's verdicts taken from the version before, a
skill it could not read): a build never indexes a skill without its body by accident."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from router.errors import RouterError
from router.skills.model import Skill, SkillKind
from router.skills.parse import decode_text, split_frontmatter
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
            raw = (source.fetch_skill_file(skill) if source is not None
                   else Path(skill.location).read_bytes())
            out[skill.key] = split_frontmatter(decode_text(raw, path=skill.location))[1]
        except (OSError, RouterError) as exc:
            log.warning("the body of %s could not be read for the lexical index: %s",
                        skill.location, exc)
    return out
