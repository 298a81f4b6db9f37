"""One frozen configuration object, loaded from YAML with environment overrides.

Every setting can be given in a YAML file (``--config``) and overridden by an environment
variable named ``SKILL_ROUTER_<SECTION>_<KEY>`` (upper case), e.g.
``SKILL_ROUTER_ROUTING_TOP_K=8``. Lists in env vars are comma-separated.

The sections live in ``router.config.routing`` (discovery, routing, index) and
``router.config.serving`` (server, feedback, the doors); ``router.config.loading`` reads them.
"""

from dataclasses import replace

from router.config.loading import ENV_PREFIX, Config, load_config
from router.config.routing import (
    ACTIVATION_MODES,
    BASE_MODEL,
    CANDIDATE_KEYS,
    CANDIDATE_MODES,
    DEFAULT_CLIENT_DIRS,
    DEFAULT_MODEL,
    DEFAULT_SOURCE,
    FINE_TUNE_MODES,
    INT8_CPUS,
    OWN_MODEL,
    OWN_MODELS,
    PRECISIONS,
    QUERY_BACKENDS,
    TOOLS_MODEL,
    ActivationMode,
    AdmissionConfig,
    CandidateMode,
    DiscoveryConfig,
    FineTuneMode,
    IndexConfig,
    Int8Cpu,
    Precision,
    RoutingConfig,
    worker_count,
)
from router.config.serving import DoorConfig, FeedbackConfig, McpConfig, OpsConfig, ServerConfig

__all__ = [
    "ACTIVATION_MODES", "BASE_MODEL", "CANDIDATE_KEYS", "CANDIDATE_MODES", "DEFAULT_CLIENT_DIRS",
    "DEFAULT_MODEL", "DEFAULT_SOURCE", "ENV_PREFIX", "FINE_TUNE_MODES", "INT8_CPUS", "OWN_MODEL",
    "OWN_MODELS", "PRECISIONS", "QUERY_BACKENDS", "TOOLS_MODEL",
    "ActivationMode", "AdmissionConfig", "CandidateMode", "Config", "DiscoveryConfig", "DoorConfig",
    "FeedbackConfig", "FineTuneMode", "IndexConfig", "Int8Cpu", "McpConfig", "OpsConfig",
    "Precision", "RoutingConfig", "ServerConfig", "load_config", "replace", "worker_count",
]
