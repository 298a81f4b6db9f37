"""Compact JSON text: one line, no spaces after separators, non-ASCII kept as it is.

The form every file, row and answer the product writes as machine-read JSON takes (manifests,
digests records, feedback rows, the JSON door's bodies): json's C encoder, several times faster
than an indented dump, and the same bytes for the same value on every run.
"""

from __future__ import annotations

import json
from typing import Any


def compact(value: Any, *, sort_keys: bool = False) -> str:
    """``value`` as one line of JSON (``sort_keys``: keys in order, for canonical bytes)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, separators=(",", ":"))
