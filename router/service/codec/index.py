"""Protobuf conversions for the served index: ListSkills, GetIndexInfo and Reindex.

Plain field copies from the snapshot's skills, diagnostics and info, and from a rebuild's
result; descriptions are truncated as everywhere on the wire. No checks, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from router.index.store import IndexSnapshot
from router.index.versions.layout import IndexInfo
from router.reindex.result import ReindexResult
from router.skills.digests import SkillDigests, recorded_for
from router.skills.limits import truncate_description
from router.skills.model import Diagnostic, Level, Scope, Skill, SkillKind
from router.v1 import router_pb2 as pb

_SCOPES: dict[Scope, pb.SkillScope] = {
    Scope.PROJECT: pb.SKILL_SCOPE_PROJECT,
    Scope.USER: pb.SKILL_SCOPE_USER,
    Scope.ORG: pb.SKILL_SCOPE_ORG,
    Scope.BUNDLED: pb.SKILL_SCOPE_BUNDLED,
}
_KINDS: dict[SkillKind, pb.SkillKind] = {
    SkillKind.SKILL_MD: pb.SKILL_KIND_SKILL_MD,
    SkillKind.MANIFEST: pb.SKILL_KIND_MANIFEST,
    SkillKind.MCP_TOOL: pb.SKILL_KIND_MCP_TOOL,
}
_LEVELS: dict[Level, pb.DiagnosticLevel] = {
    Level.WARNING: pb.DIAGNOSTIC_LEVEL_WARNING,
    Level.ERROR: pb.DIAGNOSTIC_LEVEL_ERROR,
}


def skill_to_proto(skill: Skill) -> pb.SkillInfo:
    return pb.SkillInfo(
        name=skill.name, description=truncate_description(skill.description),
        location=skill.location, scope=_SCOPES.get(skill.scope, pb.SKILL_SCOPE_UNSPECIFIED),
        kind=_KINDS.get(skill.kind, pb.SKILL_KIND_UNSPECIFIED),
        model_invocable=skill.model_invocable, user_invocable=skill.user_invocable,
        enabled=skill.enabled, deprecated=skill.deprecated, always_on=skill.always_on,
        catalog=skill.catalog,
        tool_name=skill.api_name if skill.parameters is not None else "",
        annotations_json=json.dumps(dict(skill.annotations), ensure_ascii=False)
        if skill.annotations else "",
        parameters_json=json.dumps(skill.parameters, ensure_ascii=False, sort_keys=True)
        if skill.parameters is not None else "",
    )


def add_files(info: pb.SkillInfo, skill: Skill, recorded: SkillDigests | None) -> pb.SkillInfo:
    """``info`` with the recorded files and frontmatter the Skills extension lists."""
    info.frontmatter_json = json.dumps(dict(skill.frontmatter), ensure_ascii=False, default=str)
    info.files_recorded = recorded is not None
    if recorded is not None:
        info.files_complete = recorded.complete
        info.files.extend(pb.SkillFile(path=f.path, size=f.size, digest=f.digest)
                          for f in recorded.files)
    return info


def diagnostic_to_proto(diagnostic: Diagnostic) -> pb.Diagnostic:
    return pb.Diagnostic(level=_LEVELS.get(diagnostic.level, pb.DIAGNOSTIC_LEVEL_UNSPECIFIED),
                         path=diagnostic.path, message=diagnostic.message)


def skills_to_proto(snapshot: IndexSnapshot, skills: Sequence[Skill], include_files: bool,
                    diagnostics: Sequence[Diagnostic], version: str) -> pb.ListSkillsResponse:
    """``skills`` of one snapshot (with their recorded files when asked), ``diagnostics`` and
    the served ``version``."""
    return pb.ListSkillsResponse(
        skills=[add_files(skill_to_proto(s), s, recorded_for(snapshot.digests, s.key))
                if include_files else skill_to_proto(s)
                for s in skills],
        diagnostics=[diagnostic_to_proto(d) for d in diagnostics],
        index_version=version,
    )


def info_to_proto(info: IndexInfo) -> pb.GetIndexInfoResponse:
    return pb.GetIndexInfoResponse(
        version=info.version, model=info.model, dimension=info.dimension,
        skill_count=info.skill_count, built_at=info.built_at,
        format_version=info.format_version, path=info.path,
        calibrated_gate=info.calibrated_gate, example_count=info.example_count,
        tuning_json=info.tuning_json,
    )


def reindex_to_proto(done: ReindexResult) -> pb.ReindexResponse:
    return pb.ReindexResponse(
        index_version=done.index_version, added=done.changes.added,
        changed=done.changes.changed, removed=done.changes.removed,
        unchanged=done.changes.unchanged, duration_seconds=done.duration_seconds,
        diagnostics=[diagnostic_to_proto(d) for d in done.diagnostics],
        swapped=done.swapped)
