"""The sections that say how the router serves and learns: the gRPC server, feedback, and the
HTTP doors (MCP, ops console)."""

from __future__ import annotations

from dataclasses import dataclass

from router.errors import InvalidRequest


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 50051
    max_workers: int = 8
    metrics_port: int = 9464  # Prometheus /metrics over HTTP; 0 = off
    http_port: int = 0  # the JSON door (Connect protocol) on this host; 0 = off
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
    # The gRPC port's connections (router.service.connections); 0 = no limit, each.
    max_connection_idle_seconds: float = 300.0  # no call in flight this long: GOAWAY, closed
    max_connection_age_seconds: float = 0.0  # a connection's longest life, then GOAWAY
    max_connection_age_grace_seconds: float = 60.0  # calls in flight at that GOAWAY may finish
    max_connections: int = 1000  # open at once, at most half the file limit; new ones closed
    audit_log: str = ""  # one JSON line per call (router.door.audit); "-" = stderr, "" = none
    tracing: str = ""  # "otlp": OpenTelemetry spans over OTLP/HTTP (OTEL_* variables); "" = off

    def __post_init__(self) -> None:
        limits = {"max_connection_idle_seconds": self.max_connection_idle_seconds,
                  "max_connection_age_seconds": self.max_connection_age_seconds,
                  "max_connection_age_grace_seconds": self.max_connection_age_grace_seconds,
                  "max_connections": self.max_connections}
        negative = [f"server.{key} is {value!r}" for key, value in limits.items() if value < 0]
        if negative:
            raise InvalidRequest(f"config {', '.join(negative)}: give 0 (no limit) or more")
        if not 0 <= self.http_port <= 65535 or (self.http_port and self.http_port == self.port):
            raise InvalidRequest(f"config server.http_port is {self.http_port!r}: give a port "
                                 "other than server.port's for the JSON door, or 0 (off)")
        if self.tracing not in ("", "otlp"):
            raise InvalidRequest(f"config server.tracing is {self.tracing!r}: give otlp (spans "
                                 "over OTLP/HTTP, the OTEL_* variables say where) or \"\" (off)")


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
    store_url: str = ""  # "" = the files under the index; postgresql://user@host:port/db
    spool_dir: str = ""  # rows kept while the database is down; "" = ~/.local/state/skill-router
    spool_max_rows: int = 100_000  # the spool's bound; rows past it are dropped (counted)


@dataclass(frozen=True, kw_only=True)  # a door section's own fields follow: no positions
class DoorConfig:
    """What the HTTP doors' sections share (keys ``mcp.<key>``, ``ops.<key>``): the door's own
    callers (tokens, principals) and its connection limits (router.door.httpd)."""

    accept_token_file: str = ""  # accepted bearer tokens, one per line
    accept_token_env: str = ""  # name of an environment variable holding comma-separated tokens
    header_timeout_seconds: float = 30.0  # a connection's headers must arrive within (<= 30)
    max_connections: int = 1000  # open connections, at most half the file limit (door.httpd)
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
    resource_url: str = ""  # the door's /mcp URL for its OAuth metadata; "" = as requested
    audit_log: str = ""  # one JSON line per call (router.mcp.audit); "-" = stderr, "" = none


@dataclass(frozen=True, kw_only=True)
class OpsConfig(DoorConfig):
    """The ops web console (router.console): inside ``serve`` on ``port`` (0 = off) beside the
    gRPC API, with the server's own tokens; ``skill-router ops`` accepts its callers' tokens
    from ``accept_token_file`` / ``accept_token_env``. Beyond loopback it needs tokens."""

    port: int = 0  # serve: the console's port; 0 = no console
    host: str = "127.0.0.1"  # serve: the console's address
    session_seconds: float = 8 * 3600.0  # a login's session lasts this long
    login_failures_per_minute: int = 10  # per client address; 429 past it
    # Proxies (addresses or networks) whose X-Forwarded-For / -Proto the console believes; none
    # by default: the client address is the connection's peer (router.console.forwarded).
    trusted_proxies: tuple[str, ...] = ()
    audit_log: str = ""  # one JSON line per request (router.console.audit); "-" = stderr
