"""A PostgreSQL store URL made safe: its user info taken off before psycopg parses it (the
password passed as a keyword of its own), the location shown without the password, and every
message psycopg logs with the passwords in use redacted."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from router.config.store_url import MASK, split_userinfo

_SECRETS: set[str] = set()
_LOCK = threading.Lock()
LOGGERS = ("psycopg", "psycopg.pool")


@dataclass(frozen=True)
class PgTarget:
    conninfo: str  # what psycopg connects with ("" for a URL it cannot read)
    location: str  # postgresql://user@host:port/db, never a password
    problem: str = ""  # why the URL cannot be read, without a secret


def pg_target(url: str) -> PgTarget:
    """The connection string and the shown location of ``url`` (see the module)."""
    parts = split_userinfo(url)
    remember(parts.password)
    try:
        found = conninfo_to_dict(f"{parts.scheme or 'postgresql'}://{parts.rest}")
    except psycopg.ProgrammingError:
        return PgTarget("", "postgresql://(an invalid URL)", "the URL cannot be read")
    remember(str(found.get("password") or ""))
    if parts.user:
        found["user"] = parts.user
    if parts.password:
        found["password"] = parts.password
    user = f"{found['user']}@" if found.get("user") else ""
    port = f":{found['port']}" if found.get("port") else ""
    location = f"postgresql://{user}{found.get('host', '')}{port}/{found.get('dbname', '')}"
    return PgTarget(make_conninfo("", **{k: v for k, v in found.items() if v is not None}),
                    location)


def remember(secret: str) -> None:
    """Redact ``secret`` from every message ``redact`` sees (psycopg's logs among them)."""
    if secret:
        with _LOCK:
            _SECRETS.add(secret)
        _install()


def redact(text: str) -> str:
    """``text`` with every remembered password shown as ``***``."""
    with _LOCK:
        secrets = sorted(_SECRETS, key=len, reverse=True)
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text


class _Redacting(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, ()
        error = record.exc_info[1] if record.exc_info else None
        if error is not None and redact(str(error)) != str(error):
            record.msg = f"{record.msg}: {type(error).__name__}: {redact(str(error))}"
            record.exc_info, record.exc_text = None, None  # its traceback would quote it
        return True


_FILTER = _Redacting()


def _install() -> None:
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
