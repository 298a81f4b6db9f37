"""The closest known name for a mistyped one: a configuration key the loader refuses, or a
``SKILL_ROUTER_*`` environment variable that no setting reads (which would otherwise be ignored
without a word). ``difflib``'s matcher, as argparse suggests a mistyped choice."""

from __future__ import annotations

import difflib
import logging
from collections.abc import Collection, Iterable, Mapping

log = logging.getLogger(__name__)

# Environment variables of the product that are not configuration keys.
OTHER_VARIABLES = ("SKILL_ROUTER_TOKEN", "SKILL_ROUTER_BUILD_PAUSE_AT")
_warned: set[str] = set()  # each unknown variable is named once per process


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"; did you mean X?"`` for the closest of ``known`` to ``name``, or ``""``."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def unknown_keys(unknown: Collection[str], known: Iterable[str]) -> str:
    """The unknown keys, each with its suggestion: ``'topk' (did you mean top_k?)``."""
    choices = list(known)
    parts = []
    for key in sorted(unknown):
        hint = did_you_mean(key, choices)
        parts.append(f"{key!r}" + (f" ({hint[2:]})" if hint else ""))
    return ", ".join(parts)


def warn_unknown_variables(env: Mapping[str, str], prefix: str, known: Collection[str]) -> None:
    """Warn (once each) about a ``prefix*`` variable in ``env`` that nothing reads."""
    for name in sorted(env):
        upper = name.upper()
        if (not upper.startswith(prefix) or upper in known or upper in OTHER_VARIABLES
                or name in _warned):
            continue
        _warned.add(name)
        log.warning("%s is not a setting and is ignored%s", name,
                    did_you_mean(upper, [*known, *OTHER_VARIABLES]))
