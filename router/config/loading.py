"""The whole configuration and how it is read: YAML, then ``SKILL_ROUTER_*`` overrides."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, get_type_hints

import yaml

from router.config.routing import AdmissionConfig, DiscoveryConfig, IndexConfig, RoutingConfig
from router.config.serving import FeedbackConfig, McpConfig, OpsConfig, ServerConfig
from router.config.suggest import unknown_keys, warn_unknown_variables
from router.errors import InvalidRequest


@dataclass(frozen=True)
class Config:
    discovery: DiscoveryConfig = field(default_factory=DiscoveryConfig)
    routing: RoutingConfig = field(default_factory=RoutingConfig)
    index: IndexConfig = field(default_factory=IndexConfig)
    server: ServerConfig = field(default_factory=ServerConfig)
    feedback: FeedbackConfig = field(default_factory=FeedbackConfig)
    mcp: McpConfig = field(default_factory=McpConfig)
    ops: OpsConfig = field(default_factory=OpsConfig)
    admission: AdmissionConfig = field(default_factory=AdmissionConfig)

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
        raise InvalidRequest(f"config section {section!r}: unknown key"
                             f"{'s' if len(unknown) > 1 else ''} {unknown_keys(unknown, known)}")
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
        raise InvalidRequest(f"config: unknown section{'s' if len(unknown) > 1 else ''} "
                             f"{unknown_keys(unknown, sections)}")
    variables = {f"{ENV_PREFIX}{name}_{f.name}".upper()
                 for name, cls in sections.items() for f in fields(cls)}
    token_envs = {str(value).upper() for part in data.values() if isinstance(part, dict)
                  for key, value in part.items() if key.endswith("token_env") and value}
    token_envs |= {value.upper() for key, value in env.items()
                   if key.upper().startswith(ENV_PREFIX) and key.upper().endswith("TOKEN_ENV")}
    warn_unknown_variables(env, ENV_PREFIX, variables | token_envs)
    built = {name: _section(cls, data.get(name) or {}, name, env) for name, cls in sections.items()}
    return Config(**built)
