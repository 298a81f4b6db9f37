"""A caller's view: one skill per name from its first catalog holding it, minus deny globs."""

from __future__ import annotations

from router.access.model import ANONYMOUS, Principal
from router.access.view import precedence, view_of

ORDER = ("payments", "org", "internal")
ROWS = [("internal", "deploy"), ("org", "deploy"), ("payments", "deploy"),
        ("internal", "internal-audit"), ("org", "git-commit"), ("payments", "refund")]


def test_every_catalog_takes_the_index_order_and_restricts_shadowed_rows() -> None:
    view = view_of(ROWS, ORDER, ANONYMOUS)
    assert view.position("deploy") == 2  # payments comes first in the index's order
    assert view.names() == ["deploy", "git-commit", "internal-audit", "refund"]
    assert view.rows is not None and list(view.rows) == [2, 3, 4, 5]


def test_a_view_of_every_row_needs_no_restriction() -> None:
    view = view_of([("org", "a"), ("org", "b")], ("org",), ANONYMOUS)
    assert view.rows is None and not view.restricted


def test_the_callers_order_decides_and_other_catalogs_are_invisible() -> None:
    view = view_of(ROWS, ORDER, Principal("team", catalogs=("org", "payments")))
    assert view.position("deploy") == 1
    assert view.position("internal-audit") is None
    assert view.names() == ["deploy", "git-commit", "refund"]


def test_deny_globs_hide_names_in_every_catalog() -> None:
    view = view_of(ROWS, ORDER, Principal("p", catalogs=("internal", "org"),
                                          deny=("internal-*", "dep*")))
    assert view.names() == ["git-commit"]
    assert view.rows is not None and list(view.rows) == [4]


def test_star_expands_in_place_and_unknown_catalogs_are_dropped() -> None:
    assert precedence(("internal", "*"), ORDER) == ("internal", "payments", "org")
    assert precedence(("nope", "org"), ORDER) == ("org",)
    view = view_of(ROWS, ORDER, Principal("p", catalogs=("internal", "*")))
    assert view.position("deploy") == 0


def test_views_made_from_different_principals_have_different_keys() -> None:
    one = view_of(ROWS, ORDER, Principal("a", catalogs=("org",)))
    two = view_of(ROWS, ORDER, Principal("b", catalogs=("org",), deny=("git-*",)))
    assert one.key != two.key
