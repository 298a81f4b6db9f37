"""A Route's turn with the PostgreSQL store in one statement (``PgStore.open_turn``): the
session's claim folded into the turn's start while its owner is not settled in this process
(``router.learning.pg_shown.PgShown.begin_claimed``), the turn's start alone once it is."""

from __future__ import annotations

from collections.abc import Sequence

from router.access.ownership import Owners
from router.learning.pg_writer import PgWriter
from router.learning.shown import ShownMemory, Started


def open_turn(memory: ShownMemory, settled: Owners, writer: PgWriter, session_id: str,
              principal: str, reset: bool, revealed: Sequence[str]) -> Started | None:
    """The claim and the turn's start in one statement; only the turn's start for a session
    whose owner is ``settled`` here. None where the claim needs ``claim_session``'s care: the
    database marked down, rows of this process not sent yet (their owners reach it first),
    or no answer."""
    from router.learning.pg_shown import PgShown

    if not session_id or not isinstance(memory, PgShown):
        return None
    known = settled.owner(session_id)
    if known is not None:
        return Started(known, memory.begin(session_id, reset, revealed)
                       if known == principal else None)
    if writer.down or writer.spool.rows or writer.local_session(session_id):
        return None
    try:
        started = memory.begin_claimed(session_id, principal, reset, revealed)
    except OSError:
        return None
    if started is not None:
        settled.claim(session_id, started.owner)
    return started
