"""Three named catalogs holding one name (``deploy``), indexed by ``skill-router index
--catalog``, and principals with different views of them."""

from __future__ import annotations

from pathlib import Path

from router.access.model import ADMIN, OPS, ROUTE, Principal
from router.cli import main
from tests.support.skills import add_skill

CATALOGS = ("payments", "org", "internal")  # the index's catalog order
PRINCIPALS = {
    "ops": Principal("ops", frozenset({OPS, ADMIN})),
    "pay": Principal("pay", frozenset({ROUTE}), ("payments", "org"), ("internal-*",)),
    "org": Principal("org", frozenset({ROUTE}), ("org",)),
    "int": Principal("int", frozenset({ROUTE}), ("internal", "*")),
}


def three_catalogs(base: Path) -> Path:
    """The catalogs under ``base/<catalog>``, indexed into ``base/index`` (returned)."""
    for catalog in CATALOGS:
        add_skill(base / catalog, "deploy", f"Deploy the {catalog} service to production.")
    add_skill(base / "payments", "refund-payment", "Refund a card payment to a customer.")
    add_skill(base / "org", "git-commit", "Write git commit messages for staged changes.")
    add_skill(base / "internal", "internal-audit", "Audit internal ledgers for compliance.")
    argv = ["index", "--no-project", "--no-home", "--out", str(base / "index"), "--model",
            "hash", *(f for c in CATALOGS for f in ("--catalog", f"{c}={base / c}"))]
    assert main(argv) == 0
    return base / "index"
