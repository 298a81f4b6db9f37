"""The command line's one exit-code policy and its one error guard.

0: done; 1: the command failed (a broken index, an unreachable server, a failed check);
2: the request was unusable (bad arguments, a file that is not what it should be).
Expected errors print one ``error: ...`` line on stderr, never a traceback. A reader that
closes the pipe early (``| head -1``) ends the command quietly with 0, as Unix tools do.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from router.errors import InvalidRequest, RouterError

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2

Handler = Callable[[argparse.Namespace], int]


def run_guarded(handler: Handler, args: argparse.Namespace) -> int:
    """Run a command handler under the exit-code policy."""
    try:
        code = handler(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return code
    except BrokenPipeError:
        _discard_stdout()
        return EXIT_OK
    except InvalidRequest as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (RouterError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILURE


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush meets no closed pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
