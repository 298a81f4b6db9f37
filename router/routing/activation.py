"""The stable import path gateways use for the compaction check:
``from router.routing.activation import is_skill_content``. The activation code itself lives in
``router.activation``."""

from router.activation.content import is_skill_content

__all__ = ["is_skill_content"]
