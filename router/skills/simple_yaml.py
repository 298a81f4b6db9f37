"""A fast reader for the plain frontmatter most skills use (pure).

Handles only ``key: value`` lines whose values are YAML strings (plain, or quoted without
escapes) and one level of nested ``key:`` mappings. For anything else it returns None and the
caller uses pyyaml. Where it returns a mapping, it is exactly what ``yaml.safe_load`` gives:
string-ness of every key and plain value is decided by pyyaml's own implicit resolver.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

import yaml
from yaml.resolver import Resolver

log = logging.getLogger(__name__)

_RESOLVE: Callable[[type, str, tuple[bool, bool]], str] = Resolver().resolve
_STR_TAG = "tag:yaml.org,2002:str"
_LINE = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z_][\w.-]*):(?: +(?P<value>.*?))? *$")
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")

_Map = dict[str, Any]


_RESOLVED_FIRST = frozenset(k for k in Resolver.yaml_implicit_resolvers if k)
_ANY_FIRST = None in Resolver.yaml_implicit_resolvers  # wildcard resolvers (pyyaml 6)


def _is_str(text: str) -> bool:
    if text and not _ANY_FIRST and text[0] not in _RESOLVED_FIRST:
        return True  # no implicit resolver starts with this character
    return _RESOLVE(yaml.ScalarNode, text, (True, False)) == _STR_TAG


def _scalar(raw: str) -> str | None:
    """The string a value denotes, or None when it is not a simple string."""
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        inner = raw[1:-1]
        return None if raw[0] in inner or "\\" in inner else inner
    if raw[0] in _INDICATORS or ": " in raw or " #" in raw or raw.endswith(":"):
        return None
    return raw if _is_str(raw) else None


def load_simple(text: str) -> _Map | None:
    """Load ``text`` if it is plain frontmatter, else return None (meaning: use pyyaml)."""
    if "\t" in text or not text.replace("\n", "").isprintable():
        return None
    root: _Map = {}
    parent: _Map | None = None  # the nested mapping being filled, if any
    child_indent = 0
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _LINE.match(line)
        if match is None or not _is_str(match["key"]):
            return None
        indent, key, raw = len(match["indent"]), match["key"], match["value"] or None
        if indent and parent is not None and child_indent in (0, indent):
            child_indent, target = indent, parent
        elif indent:
            return None
        else:
            parent, child_indent, target = None, 0, root
        if key in target:
            return None
        if raw is None:
            if target is not root:
                return None
            parent = target[key] = {}
            continue
        value = _scalar(raw)
        if value is None:
            return None
        target[key] = value
    return {k: (v or None) if isinstance(v, dict) else v for k, v in root.items()}
