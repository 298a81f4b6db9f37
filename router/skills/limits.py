"""Every file name, skip list and size cap the router applies, defined once.

Two kinds of cap live here and are named apart: *lint* limits from the Agent Skills spec, which
only warn (a 65-character name still loads), and *request* / *file* caps, which refuse. One spec
limit is also enforced: a description over ``DESCRIPTION_CHARS`` is cut to it when the skill is
indexed (with a warning naming the original length), and replies and catalogs apply the same cut
to records of older indexes, so one skill can never inflate every Route or ListSkills reply.
"""

from __future__ import annotations

# Files that make a folder a skill.
SKILL_MD_FILES: tuple[str, ...] = ("SKILL.md", "skill.md")
MANIFEST_FILE = "manifest.json"
# Files that define a skill rather than being bundled with it (never listed as resources).
SKILL_DEFINITION_FILES = frozenset({*SKILL_MD_FILES, MANIFEST_FILE})
# Folders never scanned, for skills or for a skill's bundled files.
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__"})

# Spec limits: exceeding them is a lint warning, the skill still loads.
NAME_LINT_CHARS = 64
DESCRIPTION_LINT_CHARS = 1024
DESCRIPTION_CHARS = DESCRIPTION_LINT_CHARS  # longer descriptions are cut to this (with a warning)
ELLIPSIS = "\u2026"
COMPATIBILITY_LINT_CHARS = 500
BODY_LINT_LINES = 500

# Files read from a skill folder.
SKILL_FILE_MAX_BYTES = 1024 * 1024  # SKILL.md / manifest.json larger than this are refused
RESOURCE_MAX_BYTES = 10 * 1024 * 1024  # a bundled file served by ReadResource
RESOURCE_LIST_CAP = 200  # bundled files listed in <skill_resources>
RESOURCE_WALK_DIRS = 500  # folders walked to list a skill's bundled files
RESOURCE_WALK_ENTRIES = 20_000  # directory entries looked at while listing them
RESOURCE_PATH_CHARS = 1024  # a requested resource path

# Requests: exceeding them is INVALID_ARGUMENT.
REQUEST_NAME_CHARS = 256  # a skill name in Activate / ReadResource / ValidateArguments
SESSION_ID_CHARS = 256
ACTIVE_SKILLS = 256  # names in a request's active_skills
MESSAGE_CHARS = 32_000  # a message, and each history turn
HISTORY_TURNS = 50
CATALOG_BUDGET_CHARS = 1_000_000  # a larger max_catalog_chars is no budget: likely a mistake
ARGUMENTS_JSON_CHARS = 1024 * 1024  # ValidateArguments' arguments_json
ARGUMENT_ERRORS = 50  # errors reported for one ValidateArguments call
REQUEST_ID_CHARS = 128  # an x-request-id echoed in logs
PROJECT_SKILLS = 256  # project skills sent with one turn (RouteRequest.project_skills)
PROJECT_LOCATION_CHARS = 4096  # a project skill's location
PROJECT_SKILL_VECTORS = 8192  # project skills' embeddings kept, by caller and content


def truncate_description(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    """``text`` cut to at most ``limit`` characters, ending with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    return text[:max(limit - len(ELLIPSIS), 0)].rstrip() + ELLIPSIS
