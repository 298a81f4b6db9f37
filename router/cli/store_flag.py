"""``--feedback-store URL``: the feedback store a command opens (``feedback.store_url``) for
``serve``, ``index``, ``mcp --index``, ``stats`` and ``examples``."""

from __future__ import annotations

import argparse
import dataclasses

from router.config import Config


def add_feedback_store_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--feedback-store", metavar="URL", default=None,
                   help="keep and read the learned traffic here: postgresql://user@host:port/db "
                        "(default: feedback.store_url; empty: the files in the index folder)")


def with_feedback_store(config: Config, args: argparse.Namespace) -> Config:
    """``config`` with ``--feedback-store`` applied, when given."""
    url = getattr(args, "feedback_store", None)
    if not url:
        return config
    return dataclasses.replace(config,
                               feedback=dataclasses.replace(config.feedback, store_url=url))
