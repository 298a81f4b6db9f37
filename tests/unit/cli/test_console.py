"""``skill-router ops``'s flags as the parser reads them: ``--principals FILE`` sets
``ops.principals_file``, and the accepted-token flags override their keys."""

from __future__ import annotations

from router.cli import build_parser
from router.cli.console import ops_config
from router.config import Config, OpsConfig


def test_ops_principals_flag_sets_the_principals_file() -> None:
    args = build_parser().parse_args(["ops", "--target", "127.0.0.1:1",
                                      "--principals", "/etc/router/principals.yaml"])
    assert ops_config(args, Config()).principals_file == "/etc/router/principals.yaml"


def test_ops_flags_override_the_configured_section_and_keep_the_rest() -> None:
    configured = Config(ops=OpsConfig(principals_file="from-file.yaml", accept_token_env="A",
                                      session_seconds=60.0))
    plain = ops_config(build_parser().parse_args(["ops"]), configured)
    assert plain == configured.ops
    flagged = ops_config(build_parser().parse_args(
        ["ops", "--principals", "p.yaml", "--accept-token-env", "B"]), configured)
    assert (flagged.principals_file, flagged.accept_token_env, flagged.session_seconds) == (
        "p.yaml", "B", 60.0)
