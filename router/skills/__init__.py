"""Skill discovery, parsing, validation and lint."""

from router.skills.discovery import discover, load_skill_dir, read_body, read_file, scan_root
from router.skills.lint import lint_body, lint_description, lint_skill
from router.skills.manifest import attach_manifest, check_parameters, parse_manifest
from router.skills.model import (
    Diagnostic,
    DiscoveryResult,
    Level,
    Scope,
    Shadowed,
    Skill,
    SkillKind,
)
from router.skills.parse import (
    DEFAULT_MAX_BYTES,
    decode_text,
    diagnostic_from_error,
    load_frontmatter,
    parse_skill_md,
    split_frontmatter,
)
from router.skills.walk import ScanLimits, SkillDir, find_skill_dirs

__all__ = [
    "DEFAULT_MAX_BYTES",
    "Diagnostic",
    "DiscoveryResult",
    "Level",
    "ScanLimits",
    "Scope",
    "Shadowed",
    "Skill",
    "SkillDir",
    "SkillKind",
    "attach_manifest",
    "check_parameters",
    "decode_text",
    "diagnostic_from_error",
    "discover",
    "find_skill_dirs",
    "lint_body",
    "lint_description",
    "lint_skill",
    "load_frontmatter",
    "load_skill_dir",
    "parse_manifest",
    "parse_skill_md",
    "read_body",
    "read_file",
    "scan_root",
    "split_frontmatter",
]
