"""``--audit-log`` on serve, mcp and ops overrides ``server.audit_log``, ``mcp.audit_log`` and
``ops.audit_log``; without it the configured path stays."""

from __future__ import annotations

from router.cli import build_parser
from router.cli.console import ops_config
from router.cli.mcp import mcp_config
from router.cli.service import _server_config
from router.config import Config, McpConfig, OpsConfig, ServerConfig


def test_the_flag_overrides_each_section() -> None:
    configured = Config(server=ServerConfig(audit_log="/var/log/a.jsonl"),
                        mcp=McpConfig(audit_log="/var/log/m.jsonl"),
                        ops=OpsConfig(audit_log="/var/log/o.jsonl"))
    parse = build_parser().parse_args
    assert _server_config(parse(["serve"]), configured).audit_log == "/var/log/a.jsonl"
    assert _server_config(parse(["serve", "--audit-log", "-"]), configured).audit_log == "-"
    assert ops_config(parse(["ops"]), configured).audit_log == "/var/log/o.jsonl"
    assert ops_config(parse(["ops", "--audit-log", "/tmp/x"]), configured).audit_log == "/tmp/x"
    assert parse(["mcp", "--audit-log", "/tmp/m"]).audit_log == "/tmp/m"
    assert mcp_config(parse(["mcp"]), configured).audit_log == "/var/log/m.jsonl"
