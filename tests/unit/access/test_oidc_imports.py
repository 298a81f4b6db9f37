"""PyJWT loads with the first JWT a server checks, not with every server: ``serve``'s start
(time to its first answered Route) does not pay for it when no provider is configured."""

from __future__ import annotations

from tests.support.processes import python_stdout


def test_the_access_table_and_the_server_import_no_jose_library() -> None:
    loaded = python_stdout("import sys, router.access.oidc, router.service.server\n"
                           "print('jwt' in sys.modules)")
    assert loaded.strip() == "False"
