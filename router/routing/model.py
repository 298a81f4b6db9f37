"""Request and result records for routing (no I/O). The servicer maps these to protobuf."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from router.access.model import ANONYMOUS, Principal
from router.routing.deadline import NO_DEADLINE, Deadline
from router.skills.model import Diagnostic


class CatalogFormat(StrEnum):
    XML = "xml"
    JSON = "json"
    MARKDOWN = "markdown"
    # the model APIs' tool search answers (router.routing.tool_search): callable skills only
    ANTHROPIC_TOOL_REFERENCES = "anthropic"
    OPENAI_TOOL_SEARCH_OUTPUT = "openai"

    @property
    def tools_only(self) -> bool:
        """Does this format list callable skills only, as tools?"""
        return self in (CatalogFormat.ANTHROPIC_TOOL_REFERENCES,
                        CatalogFormat.OPENAI_TOOL_SEARCH_OUTPUT)


class Reason(StrEnum):
    """Why a skill is in the narrowed catalog."""

    ALWAYS_ON = "always_on"
    RETRIEVED = "retrieved"
    EXPLICIT = "explicit"
    ACTIVE = "active"


class DropReason(StrEnum):
    """Why a candidate is not in the narrowed catalog (Explain)."""

    KEPT = "kept"
    BELOW_THRESHOLD = "below_threshold"
    SCORE_GAP = "score_gap"
    OUTSIDE_TOP_K = "outside_top_k"
    DISABLED = "filtered_disabled"
    DEPRECATED = "filtered_deprecated"
    NOT_MODEL_INVOCABLE = "filtered_not_model_invocable"
    OVER_BUDGET = "over_budget"
    DUPLICATE = "duplicate"


@dataclass(frozen=True)
class InlineSkill:
    """A skill sent with a turn (a project's own skill, found by the gateway)."""

    name: str
    description: str
    location: str = ""


@dataclass(frozen=True)
class RouteQuery:
    """One turn. ``top_k`` 0 means the configured default."""

    message: str
    history: tuple[str, ...] = ()
    session_id: str = ""
    top_k: int = 0
    format: CatalogFormat = CatalogFormat.XML
    active_skills: tuple[str, ...] = ()
    max_catalog_chars: int = 0  # 0 = no budget
    caller: Principal = ANONYMOUS  # who asks: routed over its view; it owns the session and route
    project_skills: tuple[InlineSkill, ...] = ()  # routed with the catalog (router.routing.project)
    until: Deadline = NO_DEADLINE  # when nobody waits for the answer any more (the door's call)
    revealed_skills: tuple[str, ...] = ()  # shown to the model by the gateway's own record
    context_reset: bool = False  # the conversation was compacted: forget what it was shown


@dataclass(frozen=True)
class RoutedSkill:
    name: str
    description: str
    location: str
    score: float
    reason: Reason
    parameters_json: str = ""  # JSON Schema of a callable (manifest.json) skill
    catalog: str = "default"  # the named catalog it comes from (router.skills.catalogs)
    tool_name: str = ""  # a callable skill's name as the model APIs see it ("" = not callable)
    first_shown: bool = False  # in this turn's reveal_text: new to the session


@dataclass(frozen=True)
class Candidate:
    """One skill considered for a turn, with its scores (for Explain)."""

    name: str
    dense_score: float
    lexical_score: float
    fused_score: float
    kept: bool
    reason: DropReason
    matched_example: str = ""  # the example request behind the dense score, if one was
    # which of the skill's fields the turn's words matched ("description", "body", "both"; ""
    # when no word did), and the step of a request of several whose vector came closest
    matched_field: str = ""
    matched_step: str = ""


@dataclass(frozen=True)
class RouteResult:
    skills: tuple[RoutedSkill, ...]
    catalog_text: str
    index_version: str
    full_catalog_chars: int
    catalog_chars: int
    routed_count: int = 0  # before a character budget was applied
    unknown_explicit: tuple[str, ...] = ()  # /names in the message that match no skill
    candidates: tuple[Candidate, ...] = field(default=())  # filled only when explaining
    explicit_content: str = ""  # <skill_content> of a /name the user typed
    activate_tool_json: str = ""  # an activate_skill tool definition carrying the catalog
    route_id: str = ""  # identifies the turn to Activate/Feedback on any replica ("" = not kept)
    gate: float = 0.0  # the relevance gate in force (filled only when explaining)
    dense_weight: float = 0.0  # fusion's dense weight for this turn (filled only when explaining)
    example_mode: str = ""  # example evidence used ("" = none; filled only when explaining)
    lexical_with_examples: bool = False  # BM25 over example-expanded documents (explaining)
    settings_reason: str = ""  # why the build chose these settings (explaining; "" = defaults)
    refused: str = ""  # why the relevance gate gave the turn nothing (explaining; "" = it did not)
    diagnostics: tuple[Diagnostic, ...] = ()  # project skills left out, and why
    always_on: tuple[str, ...] = ()  # the caller's always-on skills (in stable_text)
    stable_text: str = ""  # the cached system block: the reveal instruction, always-on skills
    reveal_text: str = ""  # this turn's skills new to the session, to append after the message
    shown: tuple[tuple[str, int], ...] = ()  # what the session was shown, and on which turn
