"""The approvals of quarantined skills in the PostgreSQL feedback store
(``router.learning.pg_store``): one row a skill in ``skill_approvals`` (schema version 4,
``router.learning.pg_migrations``), so approving again replaces the skill's earlier approval."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from router.admission.policy import Approval

_PUT = """
    INSERT INTO skill_approvals (key, digest, approved_by, approved_at, note)
    VALUES (%s, %s, %s, %s, %s)
    ON CONFLICT (key) DO UPDATE SET digest = excluded.digest,
        approved_by = excluded.approved_by, approved_at = excluded.approved_at,
        note = excluded.note"""


class PgApprovals:
    """The approval methods of ``FeedbackStore``, over the store's ``_execute``."""

    def _execute(self, sql: str, params: tuple[Any, ...] | Mapping[str, Any] = ()
                 ) -> list[tuple[Any, ...]]:
        raise NotImplementedError  # the store's: one statement's rows

    def read_approvals(self) -> list[Approval]:
        found = self._execute("SELECT key, digest, approved_by, approved_at, note "
                              "FROM skill_approvals ORDER BY key")
        return [Approval(str(k), str(d), str(b), float(a), str(n)) for k, d, b, a, n in found]

    def put_approval(self, approval: Approval) -> None:
        self._execute(_PUT, (approval.key, approval.digest, approval.by, approval.at,
                             approval.note))

    def drop_approval(self, key: str) -> bool:
        return bool(self._execute("DELETE FROM skill_approvals WHERE key = %s RETURNING key",
                                  (key,)))
