"""``skill-router feedback migrate``: bring a PostgreSQL feedback store's schema up to date
ahead of a rollout, and copy a file store's rows into it."""

from __future__ import annotations

import argparse

from router.cli.guard import EXIT_USAGE
from router.config import load_config
from router.errors import InvalidRequest, Unavailable


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``feedback`` subcommand."""
    p = sub.add_parser("feedback", help="migrate the feedback store")
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    migrate = actions.add_parser(
        "migrate", help="apply the database's schema migrations; with --from, copy a file "
                        "store's rows into it",
        description="Applies the pending schema migrations of the PostgreSQL store --to names "
                    "(what every command does on open; run it ahead of a rollout so that no "
                    "replica starts on an old schema). With --from DIR, also copies every row "
                    "of the file store under index folder DIR: a row the database has already "
                    "is skipped, so running it again copies nothing twice.")
    migrate.add_argument("--to", metavar="URL", default=None,
                         help="postgresql://user@host:port/db (default: feedback.store_url)")
    migrate.add_argument("--from", dest="source", metavar="DIR", default=None,
                         help="an index folder whose feedback/ files to copy")
    migrate.set_defaults(handler=cmd_migrate)


def cmd_migrate(args: argparse.Namespace) -> int:
    from router.learning.approvals import copy_approvals
    from router.learning.file_store import FileStore
    from router.learning.folder import feedback_dir
    from router.learning.pg_store import PgStore

    config = load_config(getattr(args, "config", None))
    url = args.to or config.feedback.store_url
    if not url.startswith(("postgresql:", "postgres:")):
        raise InvalidRequest("feedback migrate needs a PostgreSQL store: --to "
                             "postgresql://user@host:port/db (or feedback.store_url)")
    store = PgStore(url, config.feedback)
    try:
        # opening migrated; one that could not reach the database raises it here (exit 1)
        try:
            applied = store.migrate() if store.backlog().unreachable else store.applied
        except OSError:
            raise Unavailable(f"cannot reach the feedback store {store.location}: check "
                              "that the server is up and accepts this host, and the URL's "
                              "host, port, user, password and database") from None
        print(f"{store.location}: schema at version {store.schema_version()}"
              f"{' (applied ' + ', '.join(map(str, applied)) + ')' if applied else ''}")
        if args.source:
            if not feedback_dir(args.source).is_dir():
                print(f"no feedback store under {args.source} (no {feedback_dir(args.source)})")
                return EXIT_USAGE
            rows = FileStore(args.source, config.feedback).read_rows()
            added = store.copy_rows(rows)
            print(f"copied {added} of {len(rows)} rows from {args.source} "
                  f"({len(rows) - added} were there already)")
            copied = copy_approvals(FileStore(args.source, config.feedback), store, args.source)
            print(f"copied {copied} approvals of quarantined skills from {args.source}")
    finally:
        store.close()
    return 0
