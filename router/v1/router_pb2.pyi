from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CatalogFormat(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CATALOG_FORMAT_XML: _ClassVar[CatalogFormat]
    CATALOG_FORMAT_JSON: _ClassVar[CatalogFormat]
    CATALOG_FORMAT_MARKDOWN: _ClassVar[CatalogFormat]
    CATALOG_FORMAT_ANTHROPIC_TOOL_REFERENCES: _ClassVar[CatalogFormat]
    CATALOG_FORMAT_OPENAI_TOOL_SEARCH_OUTPUT: _ClassVar[CatalogFormat]

class RouteReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ROUTE_REASON_UNSPECIFIED: _ClassVar[RouteReason]
    ROUTE_REASON_ALWAYS_ON: _ClassVar[RouteReason]
    ROUTE_REASON_RETRIEVED: _ClassVar[RouteReason]
    ROUTE_REASON_EXPLICIT: _ClassVar[RouteReason]
    ROUTE_REASON_ACTIVE: _ClassVar[RouteReason]

class SkillScope(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SKILL_SCOPE_UNSPECIFIED: _ClassVar[SkillScope]
    SKILL_SCOPE_PROJECT: _ClassVar[SkillScope]
    SKILL_SCOPE_USER: _ClassVar[SkillScope]
    SKILL_SCOPE_ORG: _ClassVar[SkillScope]
    SKILL_SCOPE_BUNDLED: _ClassVar[SkillScope]

class SkillKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SKILL_KIND_UNSPECIFIED: _ClassVar[SkillKind]
    SKILL_KIND_SKILL_MD: _ClassVar[SkillKind]
    SKILL_KIND_MANIFEST: _ClassVar[SkillKind]
    SKILL_KIND_MCP_TOOL: _ClassVar[SkillKind]

class DiagnosticLevel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DIAGNOSTIC_LEVEL_UNSPECIFIED: _ClassVar[DiagnosticLevel]
    DIAGNOSTIC_LEVEL_WARNING: _ClassVar[DiagnosticLevel]
    DIAGNOSTIC_LEVEL_ERROR: _ClassVar[DiagnosticLevel]

class FeedbackOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FEEDBACK_OUTCOME_UNSPECIFIED: _ClassVar[FeedbackOutcome]
    FEEDBACK_OUTCOME_SUCCESS: _ClassVar[FeedbackOutcome]
    FEEDBACK_OUTCOME_FAILURE: _ClassVar[FeedbackOutcome]
    FEEDBACK_OUTCOME_WRONG_SKILL: _ClassVar[FeedbackOutcome]
    FEEDBACK_OUTCOME_NOT_USED: _ClassVar[FeedbackOutcome]
CATALOG_FORMAT_XML: CatalogFormat
CATALOG_FORMAT_JSON: CatalogFormat
CATALOG_FORMAT_MARKDOWN: CatalogFormat
CATALOG_FORMAT_ANTHROPIC_TOOL_REFERENCES: CatalogFormat
CATALOG_FORMAT_OPENAI_TOOL_SEARCH_OUTPUT: CatalogFormat
ROUTE_REASON_UNSPECIFIED: RouteReason
ROUTE_REASON_ALWAYS_ON: RouteReason
ROUTE_REASON_RETRIEVED: RouteReason
ROUTE_REASON_EXPLICIT: RouteReason
ROUTE_REASON_ACTIVE: RouteReason
SKILL_SCOPE_UNSPECIFIED: SkillScope
SKILL_SCOPE_PROJECT: SkillScope
SKILL_SCOPE_USER: SkillScope
SKILL_SCOPE_ORG: SkillScope
SKILL_SCOPE_BUNDLED: SkillScope
SKILL_KIND_UNSPECIFIED: SkillKind
SKILL_KIND_SKILL_MD: SkillKind
SKILL_KIND_MANIFEST: SkillKind
SKILL_KIND_MCP_TOOL: SkillKind
DIAGNOSTIC_LEVEL_UNSPECIFIED: DiagnosticLevel
DIAGNOSTIC_LEVEL_WARNING: DiagnosticLevel
DIAGNOSTIC_LEVEL_ERROR: DiagnosticLevel
FEEDBACK_OUTCOME_UNSPECIFIED: FeedbackOutcome
FEEDBACK_OUTCOME_SUCCESS: FeedbackOutcome
FEEDBACK_OUTCOME_FAILURE: FeedbackOutcome
FEEDBACK_OUTCOME_WRONG_SKILL: FeedbackOutcome
FEEDBACK_OUTCOME_NOT_USED: FeedbackOutcome

class RouteRequest(_message.Message):
    __slots__ = ("message", "history", "session_id", "top_k", "format", "active_skills", "max_catalog_chars", "project_skills", "revealed_skills", "context_reset")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_SKILLS_FIELD_NUMBER: _ClassVar[int]
    MAX_CATALOG_CHARS_FIELD_NUMBER: _ClassVar[int]
    PROJECT_SKILLS_FIELD_NUMBER: _ClassVar[int]
    REVEALED_SKILLS_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_RESET_FIELD_NUMBER: _ClassVar[int]
    message: str
    history: _containers.RepeatedScalarFieldContainer[str]
    session_id: str
    top_k: int
    format: CatalogFormat
    active_skills: _containers.RepeatedScalarFieldContainer[str]
    max_catalog_chars: int
    project_skills: _containers.RepeatedCompositeFieldContainer[InlineSkill]
    revealed_skills: _containers.RepeatedScalarFieldContainer[str]
    context_reset: bool
    def __init__(self, message: _Optional[str] = ..., history: _Optional[_Iterable[str]] = ..., session_id: _Optional[str] = ..., top_k: _Optional[int] = ..., format: _Optional[_Union[CatalogFormat, str]] = ..., active_skills: _Optional[_Iterable[str]] = ..., max_catalog_chars: _Optional[int] = ..., project_skills: _Optional[_Iterable[_Union[InlineSkill, _Mapping]]] = ..., revealed_skills: _Optional[_Iterable[str]] = ..., context_reset: _Optional[bool] = ...) -> None: ...

class InlineSkill(_message.Message):
    __slots__ = ("name", "description", "location")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    location: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., location: _Optional[str] = ...) -> None: ...

class RoutedSkill(_message.Message):
    __slots__ = ("name", "description", "location", "score", "reason", "parameters_json", "catalog", "tool_name", "first_shown")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_JSON_FIELD_NUMBER: _ClassVar[int]
    CATALOG_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    FIRST_SHOWN_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    location: str
    score: float
    reason: RouteReason
    parameters_json: str
    catalog: str
    tool_name: str
    first_shown: bool
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., location: _Optional[str] = ..., score: _Optional[float] = ..., reason: _Optional[_Union[RouteReason, str]] = ..., parameters_json: _Optional[str] = ..., catalog: _Optional[str] = ..., tool_name: _Optional[str] = ..., first_shown: _Optional[bool] = ...) -> None: ...

class RouteResponse(_message.Message):
    __slots__ = ("skills", "catalog_text", "index_version", "full_catalog_chars", "catalog_chars", "routed_count", "shown_count", "unknown_explicit", "explicit_content", "activate_tool_json", "route_id", "diagnostics", "stable_text", "reveal_text")
    SKILLS_FIELD_NUMBER: _ClassVar[int]
    CATALOG_TEXT_FIELD_NUMBER: _ClassVar[int]
    INDEX_VERSION_FIELD_NUMBER: _ClassVar[int]
    FULL_CATALOG_CHARS_FIELD_NUMBER: _ClassVar[int]
    CATALOG_CHARS_FIELD_NUMBER: _ClassVar[int]
    ROUTED_COUNT_FIELD_NUMBER: _ClassVar[int]
    SHOWN_COUNT_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_EXPLICIT_FIELD_NUMBER: _ClassVar[int]
    EXPLICIT_CONTENT_FIELD_NUMBER: _ClassVar[int]
    ACTIVATE_TOOL_JSON_FIELD_NUMBER: _ClassVar[int]
    ROUTE_ID_FIELD_NUMBER: _ClassVar[int]
    DIAGNOSTICS_FIELD_NUMBER: _ClassVar[int]
    STABLE_TEXT_FIELD_NUMBER: _ClassVar[int]
    REVEAL_TEXT_FIELD_NUMBER: _ClassVar[int]
    skills: _containers.RepeatedCompositeFieldContainer[RoutedSkill]
    catalog_text: str
    index_version: str
    full_catalog_chars: int
    catalog_chars: int
    routed_count: int
    shown_count: int
    unknown_explicit: _containers.RepeatedScalarFieldContainer[str]
    explicit_content: str
    activate_tool_json: str
    route_id: str
    diagnostics: _containers.RepeatedCompositeFieldContainer[Diagnostic]
    stable_text: str
    reveal_text: str
    def __init__(self, skills: _Optional[_Iterable[_Union[RoutedSkill, _Mapping]]] = ..., catalog_text: _Optional[str] = ..., index_version: _Optional[str] = ..., full_catalog_chars: _Optional[int] = ..., catalog_chars: _Optional[int] = ..., routed_count: _Optional[int] = ..., shown_count: _Optional[int] = ..., unknown_explicit: _Optional[_Iterable[str]] = ..., explicit_content: _Optional[str] = ..., activate_tool_json: _Optional[str] = ..., route_id: _Optional[str] = ..., diagnostics: _Optional[_Iterable[_Union[Diagnostic, _Mapping]]] = ..., stable_text: _Optional[str] = ..., reveal_text: _Optional[str] = ...) -> None: ...

class ListSkillsRequest(_message.Message):
    __slots__ = ("include_files", "all_catalogs")
    INCLUDE_FILES_FIELD_NUMBER: _ClassVar[int]
    ALL_CATALOGS_FIELD_NUMBER: _ClassVar[int]
    include_files: bool
    all_catalogs: bool
    def __init__(self, include_files: _Optional[bool] = ..., all_catalogs: _Optional[bool] = ...) -> None: ...

class SkillFile(_message.Message):
    __slots__ = ("path", "size", "digest")
    PATH_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    path: str
    size: int
    digest: str
    def __init__(self, path: _Optional[str] = ..., size: _Optional[int] = ..., digest: _Optional[str] = ...) -> None: ...

class SkillInfo(_message.Message):
    __slots__ = ("name", "description", "location", "scope", "kind", "model_invocable", "user_invocable", "enabled", "deprecated", "always_on", "files", "files_recorded", "files_complete", "frontmatter_json", "catalog", "tool_name", "annotations_json", "parameters_json", "quarantined", "findings", "admission_digest", "approved")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MODEL_INVOCABLE_FIELD_NUMBER: _ClassVar[int]
    USER_INVOCABLE_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    DEPRECATED_FIELD_NUMBER: _ClassVar[int]
    ALWAYS_ON_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    FILES_RECORDED_FIELD_NUMBER: _ClassVar[int]
    FILES_COMPLETE_FIELD_NUMBER: _ClassVar[int]
    FRONTMATTER_JSON_FIELD_NUMBER: _ClassVar[int]
    CATALOG_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    ANNOTATIONS_JSON_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_JSON_FIELD_NUMBER: _ClassVar[int]
    QUARANTINED_FIELD_NUMBER: _ClassVar[int]
    FINDINGS_FIELD_NUMBER: _ClassVar[int]
    ADMISSION_DIGEST_FIELD_NUMBER: _ClassVar[int]
    APPROVED_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    location: str
    scope: SkillScope
    kind: SkillKind
    model_invocable: bool
    user_invocable: bool
    enabled: bool
    deprecated: bool
    always_on: bool
    files: _containers.RepeatedCompositeFieldContainer[SkillFile]
    files_recorded: bool
    files_complete: bool
    frontmatter_json: str
    catalog: str
    tool_name: str
    annotations_json: str
    parameters_json: str
    quarantined: bool
    findings: _containers.RepeatedCompositeFieldContainer[AdmissionFinding]
    admission_digest: str
    approved: bool
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., location: _Optional[str] = ..., scope: _Optional[_Union[SkillScope, str]] = ..., kind: _Optional[_Union[SkillKind, str]] = ..., model_invocable: _Optional[bool] = ..., user_invocable: _Optional[bool] = ..., enabled: _Optional[bool] = ..., deprecated: _Optional[bool] = ..., always_on: _Optional[bool] = ..., files: _Optional[_Iterable[_Union[SkillFile, _Mapping]]] = ..., files_recorded: _Optional[bool] = ..., files_complete: _Optional[bool] = ..., frontmatter_json: _Optional[str] = ..., catalog: _Optional[str] = ..., tool_name: _Optional[str] = ..., annotations_json: _Optional[str] = ..., parameters_json: _Optional[str] = ..., quarantined: _Optional[bool] = ..., findings: _Optional[_Iterable[_Union[AdmissionFinding, _Mapping]]] = ..., admission_digest: _Optional[str] = ..., approved: _Optional[bool] = ...) -> None: ...

class AdmissionFinding(_message.Message):
    __slots__ = ("severity", "rule", "message")
    SEVERITY_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    severity: str
    rule: str
    message: str
    def __init__(self, severity: _Optional[str] = ..., rule: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class Diagnostic(_message.Message):
    __slots__ = ("level", "path", "message")
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    level: DiagnosticLevel
    path: str
    message: str
    def __init__(self, level: _Optional[_Union[DiagnosticLevel, str]] = ..., path: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class ListSkillsResponse(_message.Message):
    __slots__ = ("skills", "diagnostics", "index_version")
    SKILLS_FIELD_NUMBER: _ClassVar[int]
    DIAGNOSTICS_FIELD_NUMBER: _ClassVar[int]
    INDEX_VERSION_FIELD_NUMBER: _ClassVar[int]
    skills: _containers.RepeatedCompositeFieldContainer[SkillInfo]
    diagnostics: _containers.RepeatedCompositeFieldContainer[Diagnostic]
    index_version: str
    def __init__(self, skills: _Optional[_Iterable[_Union[SkillInfo, _Mapping]]] = ..., diagnostics: _Optional[_Iterable[_Union[Diagnostic, _Mapping]]] = ..., index_version: _Optional[str] = ...) -> None: ...

class GetIndexInfoRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetIndexInfoResponse(_message.Message):
    __slots__ = ("version", "model", "dimension", "skill_count", "built_at", "format_version", "path", "calibrated_gate", "example_count", "tuning_json")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    DIMENSION_FIELD_NUMBER: _ClassVar[int]
    SKILL_COUNT_FIELD_NUMBER: _ClassVar[int]
    BUILT_AT_FIELD_NUMBER: _ClassVar[int]
    FORMAT_VERSION_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    CALIBRATED_GATE_FIELD_NUMBER: _ClassVar[int]
    EXAMPLE_COUNT_FIELD_NUMBER: _ClassVar[int]
    TUNING_JSON_FIELD_NUMBER: _ClassVar[int]
    version: str
    model: str
    dimension: int
    skill_count: int
    built_at: str
    format_version: int
    path: str
    calibrated_gate: float
    example_count: int
    tuning_json: str
    def __init__(self, version: _Optional[str] = ..., model: _Optional[str] = ..., dimension: _Optional[int] = ..., skill_count: _Optional[int] = ..., built_at: _Optional[str] = ..., format_version: _Optional[int] = ..., path: _Optional[str] = ..., calibrated_gate: _Optional[float] = ..., example_count: _Optional[int] = ..., tuning_json: _Optional[str] = ...) -> None: ...

class Candidate(_message.Message):
    __slots__ = ("name", "dense_score", "lexical_score", "fused_score", "kept", "reason", "matched_example", "matched_field", "matched_step")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DENSE_SCORE_FIELD_NUMBER: _ClassVar[int]
    LEXICAL_SCORE_FIELD_NUMBER: _ClassVar[int]
    FUSED_SCORE_FIELD_NUMBER: _ClassVar[int]
    KEPT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MATCHED_EXAMPLE_FIELD_NUMBER: _ClassVar[int]
    MATCHED_FIELD_FIELD_NUMBER: _ClassVar[int]
    MATCHED_STEP_FIELD_NUMBER: _ClassVar[int]
    name: str
    dense_score: float
    lexical_score: float
    fused_score: float
    kept: bool
    reason: str
    matched_example: str
    matched_field: str
    matched_step: str
    def __init__(self, name: _Optional[str] = ..., dense_score: _Optional[float] = ..., lexical_score: _Optional[float] = ..., fused_score: _Optional[float] = ..., kept: _Optional[bool] = ..., reason: _Optional[str] = ..., matched_example: _Optional[str] = ..., matched_field: _Optional[str] = ..., matched_step: _Optional[str] = ...) -> None: ...

class ExplainResponse(_message.Message):
    __slots__ = ("route", "candidates", "gate", "dense_weight", "example_mode", "lexical_with_examples", "settings_reason", "refused", "shown")
    ROUTE_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    GATE_FIELD_NUMBER: _ClassVar[int]
    DENSE_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    EXAMPLE_MODE_FIELD_NUMBER: _ClassVar[int]
    LEXICAL_WITH_EXAMPLES_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_REASON_FIELD_NUMBER: _ClassVar[int]
    REFUSED_FIELD_NUMBER: _ClassVar[int]
    SHOWN_FIELD_NUMBER: _ClassVar[int]
    route: RouteResponse
    candidates: _containers.RepeatedCompositeFieldContainer[Candidate]
    gate: float
    dense_weight: float
    example_mode: str
    lexical_with_examples: bool
    settings_reason: str
    refused: str
    shown: _containers.RepeatedCompositeFieldContainer[ShownSkill]
    def __init__(self, route: _Optional[_Union[RouteResponse, _Mapping]] = ..., candidates: _Optional[_Iterable[_Union[Candidate, _Mapping]]] = ..., gate: _Optional[float] = ..., dense_weight: _Optional[float] = ..., example_mode: _Optional[str] = ..., lexical_with_examples: _Optional[bool] = ..., settings_reason: _Optional[str] = ..., refused: _Optional[str] = ..., shown: _Optional[_Iterable[_Union[ShownSkill, _Mapping]]] = ...) -> None: ...

class ShownSkill(_message.Message):
    __slots__ = ("name", "turn")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    name: str
    turn: int
    def __init__(self, name: _Optional[str] = ..., turn: _Optional[int] = ...) -> None: ...

class ActivateRequest(_message.Message):
    __slots__ = ("name", "session_id", "active_skills", "include_frontmatter", "route_id")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_SKILLS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_FRONTMATTER_FIELD_NUMBER: _ClassVar[int]
    ROUTE_ID_FIELD_NUMBER: _ClassVar[int]
    name: str
    session_id: str
    active_skills: _containers.RepeatedScalarFieldContainer[str]
    include_frontmatter: bool
    route_id: str
    def __init__(self, name: _Optional[str] = ..., session_id: _Optional[str] = ..., active_skills: _Optional[_Iterable[str]] = ..., include_frontmatter: _Optional[bool] = ..., route_id: _Optional[str] = ...) -> None: ...

class ActivateResponse(_message.Message):
    __slots__ = ("content", "resources", "resources_truncated", "skill_dir", "already_active", "catalog")
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    RESOURCES_FIELD_NUMBER: _ClassVar[int]
    RESOURCES_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    SKILL_DIR_FIELD_NUMBER: _ClassVar[int]
    ALREADY_ACTIVE_FIELD_NUMBER: _ClassVar[int]
    CATALOG_FIELD_NUMBER: _ClassVar[int]
    content: str
    resources: _containers.RepeatedScalarFieldContainer[str]
    resources_truncated: bool
    skill_dir: str
    already_active: bool
    catalog: str
    def __init__(self, content: _Optional[str] = ..., resources: _Optional[_Iterable[str]] = ..., resources_truncated: _Optional[bool] = ..., skill_dir: _Optional[str] = ..., already_active: _Optional[bool] = ..., catalog: _Optional[str] = ...) -> None: ...

class ReadResourceRequest(_message.Message):
    __slots__ = ("name", "path")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    name: str
    path: str
    def __init__(self, name: _Optional[str] = ..., path: _Optional[str] = ...) -> None: ...

class ReadResourceResponse(_message.Message):
    __slots__ = ("content", "size", "media_type")
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    MEDIA_TYPE_FIELD_NUMBER: _ClassVar[int]
    content: bytes
    size: int
    media_type: str
    def __init__(self, content: _Optional[bytes] = ..., size: _Optional[int] = ..., media_type: _Optional[str] = ...) -> None: ...

class ValidateArgumentsRequest(_message.Message):
    __slots__ = ("name", "arguments_json")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_JSON_FIELD_NUMBER: _ClassVar[int]
    name: str
    arguments_json: str
    def __init__(self, name: _Optional[str] = ..., arguments_json: _Optional[str] = ...) -> None: ...

class ArgumentError(_message.Message):
    __slots__ = ("field", "problem", "expected", "got")
    FIELD_FIELD_NUMBER: _ClassVar[int]
    PROBLEM_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_FIELD_NUMBER: _ClassVar[int]
    GOT_FIELD_NUMBER: _ClassVar[int]
    field: str
    problem: str
    expected: str
    got: str
    def __init__(self, field: _Optional[str] = ..., problem: _Optional[str] = ..., expected: _Optional[str] = ..., got: _Optional[str] = ...) -> None: ...

class ValidateArgumentsResponse(_message.Message):
    __slots__ = ("valid", "arguments_json", "errors")
    VALID_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_JSON_FIELD_NUMBER: _ClassVar[int]
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    valid: bool
    arguments_json: str
    errors: _containers.RepeatedCompositeFieldContainer[ArgumentError]
    def __init__(self, valid: _Optional[bool] = ..., arguments_json: _Optional[str] = ..., errors: _Optional[_Iterable[_Union[ArgumentError, _Mapping]]] = ...) -> None: ...

class ReindexRequest(_message.Message):
    __slots__ = ("full",)
    FULL_FIELD_NUMBER: _ClassVar[int]
    full: bool
    def __init__(self, full: _Optional[bool] = ...) -> None: ...

class ReindexResponse(_message.Message):
    __slots__ = ("index_version", "added", "changed", "removed", "unchanged", "duration_seconds", "diagnostics", "swapped")
    INDEX_VERSION_FIELD_NUMBER: _ClassVar[int]
    ADDED_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    DURATION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    DIAGNOSTICS_FIELD_NUMBER: _ClassVar[int]
    SWAPPED_FIELD_NUMBER: _ClassVar[int]
    index_version: str
    added: int
    changed: int
    removed: int
    unchanged: int
    duration_seconds: float
    diagnostics: _containers.RepeatedCompositeFieldContainer[Diagnostic]
    swapped: bool
    def __init__(self, index_version: _Optional[str] = ..., added: _Optional[int] = ..., changed: _Optional[int] = ..., removed: _Optional[int] = ..., unchanged: _Optional[int] = ..., duration_seconds: _Optional[float] = ..., diagnostics: _Optional[_Iterable[_Union[Diagnostic, _Mapping]]] = ..., swapped: _Optional[bool] = ...) -> None: ...

class FeedbackRequest(_message.Message):
    __slots__ = ("session_id", "skill", "outcome", "route_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    ROUTE_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    skill: str
    outcome: FeedbackOutcome
    route_id: str
    def __init__(self, session_id: _Optional[str] = ..., skill: _Optional[str] = ..., outcome: _Optional[_Union[FeedbackOutcome, str]] = ..., route_id: _Optional[str] = ...) -> None: ...

class FeedbackResponse(_message.Message):
    __slots__ = ("recorded", "catalog")
    RECORDED_FIELD_NUMBER: _ClassVar[int]
    CATALOG_FIELD_NUMBER: _ClassVar[int]
    recorded: bool
    catalog: str
    def __init__(self, recorded: _Optional[bool] = ..., catalog: _Optional[str] = ...) -> None: ...

class ListResourcesRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class ListResourcesResponse(_message.Message):
    __slots__ = ("resources", "resources_truncated", "skill_dir")
    RESOURCES_FIELD_NUMBER: _ClassVar[int]
    RESOURCES_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    SKILL_DIR_FIELD_NUMBER: _ClassVar[int]
    resources: _containers.RepeatedScalarFieldContainer[str]
    resources_truncated: bool
    skill_dir: str
    def __init__(self, resources: _Optional[_Iterable[str]] = ..., resources_truncated: _Optional[bool] = ..., skill_dir: _Optional[str] = ...) -> None: ...

class SkillStatsRequest(_message.Message):
    __slots__ = ("min_routed", "catalog")
    MIN_ROUTED_FIELD_NUMBER: _ClassVar[int]
    CATALOG_FIELD_NUMBER: _ClassVar[int]
    min_routed: int
    catalog: str
    def __init__(self, min_routed: _Optional[int] = ..., catalog: _Optional[str] = ...) -> None: ...

class SkillCounters(_message.Message):
    __slots__ = ("skill", "routed", "shown", "activated", "succeeded", "failed", "wrong", "not_used", "hit_rate")
    SKILL_FIELD_NUMBER: _ClassVar[int]
    ROUTED_FIELD_NUMBER: _ClassVar[int]
    SHOWN_FIELD_NUMBER: _ClassVar[int]
    ACTIVATED_FIELD_NUMBER: _ClassVar[int]
    SUCCEEDED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    WRONG_FIELD_NUMBER: _ClassVar[int]
    NOT_USED_FIELD_NUMBER: _ClassVar[int]
    HIT_RATE_FIELD_NUMBER: _ClassVar[int]
    skill: str
    routed: int
    shown: int
    activated: int
    succeeded: int
    failed: int
    wrong: int
    not_used: int
    hit_rate: float
    def __init__(self, skill: _Optional[str] = ..., routed: _Optional[int] = ..., shown: _Optional[int] = ..., activated: _Optional[int] = ..., succeeded: _Optional[int] = ..., failed: _Optional[int] = ..., wrong: _Optional[int] = ..., not_used: _Optional[int] = ..., hit_rate: _Optional[float] = ...) -> None: ...

class SkillStatsResponse(_message.Message):
    __slots__ = ("skills", "never_activated", "min_routed", "feedback_enabled")
    SKILLS_FIELD_NUMBER: _ClassVar[int]
    NEVER_ACTIVATED_FIELD_NUMBER: _ClassVar[int]
    MIN_ROUTED_FIELD_NUMBER: _ClassVar[int]
    FEEDBACK_ENABLED_FIELD_NUMBER: _ClassVar[int]
    skills: _containers.RepeatedCompositeFieldContainer[SkillCounters]
    never_activated: _containers.RepeatedScalarFieldContainer[str]
    min_routed: int
    feedback_enabled: bool
    def __init__(self, skills: _Optional[_Iterable[_Union[SkillCounters, _Mapping]]] = ..., never_activated: _Optional[_Iterable[str]] = ..., min_routed: _Optional[int] = ..., feedback_enabled: _Optional[bool] = ...) -> None: ...

class ListExamplesRequest(_message.Message):
    __slots__ = ("skill", "older_than_days", "limit", "catalog")
    SKILL_FIELD_NUMBER: _ClassVar[int]
    OLDER_THAN_DAYS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CATALOG_FIELD_NUMBER: _ClassVar[int]
    skill: str
    older_than_days: float
    limit: int
    catalog: str
    def __init__(self, skill: _Optional[str] = ..., older_than_days: _Optional[float] = ..., limit: _Optional[int] = ..., catalog: _Optional[str] = ...) -> None: ...

class RecordedExample(_message.Message):
    __slots__ = ("skill", "positive", "query", "session_id", "recorded_at", "learned")
    SKILL_FIELD_NUMBER: _ClassVar[int]
    POSITIVE_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    RECORDED_AT_FIELD_NUMBER: _ClassVar[int]
    LEARNED_FIELD_NUMBER: _ClassVar[int]
    skill: str
    positive: bool
    query: str
    session_id: str
    recorded_at: float
    learned: bool
    def __init__(self, skill: _Optional[str] = ..., positive: _Optional[bool] = ..., query: _Optional[str] = ..., session_id: _Optional[str] = ..., recorded_at: _Optional[float] = ..., learned: _Optional[bool] = ...) -> None: ...

class ListExamplesResponse(_message.Message):
    __slots__ = ("examples", "total", "feedback_enabled")
    EXAMPLES_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    FEEDBACK_ENABLED_FIELD_NUMBER: _ClassVar[int]
    examples: _containers.RepeatedCompositeFieldContainer[RecordedExample]
    total: int
    feedback_enabled: bool
    def __init__(self, examples: _Optional[_Iterable[_Union[RecordedExample, _Mapping]]] = ..., total: _Optional[int] = ..., feedback_enabled: _Optional[bool] = ...) -> None: ...

class PurgeExamplesRequest(_message.Message):
    __slots__ = ("skill", "older_than_days", "catalog")
    SKILL_FIELD_NUMBER: _ClassVar[int]
    OLDER_THAN_DAYS_FIELD_NUMBER: _ClassVar[int]
    CATALOG_FIELD_NUMBER: _ClassVar[int]
    skill: str
    older_than_days: float
    catalog: str
    def __init__(self, skill: _Optional[str] = ..., older_than_days: _Optional[float] = ..., catalog: _Optional[str] = ...) -> None: ...

class PurgeExamplesResponse(_message.Message):
    __slots__ = ("purged", "compacted")
    PURGED_FIELD_NUMBER: _ClassVar[int]
    COMPACTED_FIELD_NUMBER: _ClassVar[int]
    purged: int
    compacted: bool
    def __init__(self, purged: _Optional[int] = ..., compacted: _Optional[bool] = ...) -> None: ...

class ApproveSkillRequest(_message.Message):
    __slots__ = ("skill", "catalog", "digest", "note")
    SKILL_FIELD_NUMBER: _ClassVar[int]
    CATALOG_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    skill: str
    catalog: str
    digest: str
    note: str
    def __init__(self, skill: _Optional[str] = ..., catalog: _Optional[str] = ..., digest: _Optional[str] = ..., note: _Optional[str] = ...) -> None: ...

class ApproveSkillResponse(_message.Message):
    __slots__ = ("skill", "digest", "approved_by", "approved_at", "index_version", "message")
    SKILL_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    APPROVED_BY_FIELD_NUMBER: _ClassVar[int]
    APPROVED_AT_FIELD_NUMBER: _ClassVar[int]
    INDEX_VERSION_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    skill: str
    digest: str
    approved_by: str
    approved_at: float
    index_version: str
    message: str
    def __init__(self, skill: _Optional[str] = ..., digest: _Optional[str] = ..., approved_by: _Optional[str] = ..., approved_at: _Optional[float] = ..., index_version: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class RevokeApprovalRequest(_message.Message):
    __slots__ = ("skill", "catalog")
    SKILL_FIELD_NUMBER: _ClassVar[int]
    CATALOG_FIELD_NUMBER: _ClassVar[int]
    skill: str
    catalog: str
    def __init__(self, skill: _Optional[str] = ..., catalog: _Optional[str] = ...) -> None: ...

class RevokeApprovalResponse(_message.Message):
    __slots__ = ("skill", "revoked", "message")
    SKILL_FIELD_NUMBER: _ClassVar[int]
    REVOKED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    skill: str
    revoked: bool
    message: str
    def __init__(self, skill: _Optional[str] = ..., revoked: _Optional[bool] = ..., message: _Optional[str] = ...) -> None: ...
