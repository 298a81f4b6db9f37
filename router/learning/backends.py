"""The feedback store backends by URL scheme, and the factory that opens one.

``open_store(index_dir, policy)`` opens the store in the index folder
(``router.learning.file_store``); a URL names another backend by its scheme
(``postgresql://user@host:port/db``: ``router.learning.pg_store``). A backend is one module
implementing ``router.learning.store.FeedbackStore`` plus one line in ``BACKENDS``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from router.config import FeedbackConfig
from router.errors import InvalidRequest
from router.learning.file_store import FileStore
from router.learning.policy import check_policy
from router.learning.store import FeedbackStore

FILE = "file"  # the store in the index folder; also what an empty URL means
# scheme -> (URL, index folder or None, policy) -> store
Opener = Callable[[str, Path | None, FeedbackConfig], FeedbackStore]
BACKENDS: dict[str, Opener] = {FILE: FileStore.open}


def _open_postgresql(url: str, index_dir: Path | None, policy: FeedbackConfig) -> FeedbackStore:
    from router.learning.pg_store import PgStore  # psycopg only for a store that uses it

    return PgStore.open(url, index_dir, policy)


BACKENDS.update({"postgresql": _open_postgresql, "postgres": _open_postgresql})


def scheme(url: str) -> str:
    """The backend key of ``url``: its scheme (``postgresql`` of ``postgresql://db/x``);
    ``file`` for "" (the index folder's store)."""
    if not url:
        return FILE
    name, colon, _ = url.partition(":")
    return name.lower() if colon and name else ""


def open_store(index_dir: str | Path | None, policy: FeedbackConfig,
               url: str = "") -> FeedbackStore:
    """The feedback store ``url`` names ("": ``policy.store_url``, and when that is empty too
    the one under ``index_dir``), kept under
    ``policy``. InvalidRequest for a policy out of bounds or a URL of no known backend."""
    check_policy(policy)
    url = url or policy.store_url
    opener = BACKENDS.get(scheme(url))
    if opener is None:
        known = ", ".join(f"{name}:" for name in sorted(BACKENDS))
        # The scheme only: the rest of a URL may hold a password.
        raise InvalidRequest(f"no feedback store backend for the URL scheme "
                             f"{scheme(url) or url.partition(':')[0]!r}: use one of {known} "
                             "(or no URL, for the store in the index folder)")
    return opener(url, Path(index_dir) if index_dir is not None else None, policy)

