"""Requests a catalog makes of itself (pure): sentences of its skills' bodies, each standing for
a request its skill should take, for fits that have no example requests to learn from.

A body says, in its author's words, what the skill does and when (the formats, tools and steps
a request names), so one of its sentences is an on-topic request the catalog can be asked
without anyone writing one. A skill's vector is its name and description, so a body sentence
is already held out of the dense side; the lexical side reads the start of the body, so a fit
that compares the two removes the sentence from that skill's BM25 document first
(:func:`without`). Sentences are taken from the part of the body the index reads
(``index.body_chars``), lines of prose only (no headings, table rows or code), and a sentence
whose opening words several skills share (a template's boilerplate) stands for none of them.
"""

from __future__ import annotations

import functools
import re
import zlib
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

MIN_WORDS = 6  # shorter lines are labels, not requests
MAX_WORDS = 40
PER_SKILL = 2  # sentences taken from one skill's body at most
MOST = 400  # sentences taken from a catalog at most (skills in a fixed hash order)
OPENING = 5  # words compared to find boilerplate
SHARED = 3  # an opening this many skills share is boilerplate
_LINE = re.compile(r"\n+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_MARKUP = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s+")
_CODE = re.compile(r"```.*?(?:```|$)", re.DOTALL)


class SelfRequest(NamedTuple):
    """A sentence of skill ``position``'s body, asked of the catalog."""

    position: int
    text: str


def body_sentences(body: str, chars: int) -> list[str]:
    """The prose sentences in the first ``chars`` characters of ``body`` (0: none)."""
    if chars <= 0 or not body:
        return []
    out = []
    for line in _LINE.split(_CODE.sub("\n", body[:chars])):
        line = _MARKUP.sub("", line.strip())
        if not line or line.startswith(("#", "|", "<", "`")):
            continue
        for sentence in _SENTENCE.split(line):
            words = sentence.split()
            if MIN_WORDS <= len(words) <= MAX_WORDS:
                out.append(" ".join(words))
    return out


@functools.lru_cache(maxsize=1 << 17)  # a catalog's bodies, build after build
def _sentences(body: str, chars: int) -> tuple[str, ...]:
    return tuple(body_sentences(body, chars))


def _opening(sentence: str) -> str:
    return " ".join(sentence.lower().split()[:OPENING])


def self_requests(keys: Sequence[str], bodies: Sequence[str], chars: int,
                  per_skill: int = PER_SKILL, most: int = MOST) -> list[SelfRequest]:
    """Up to ``per_skill`` sentences of each skill's body (spread over it), skills taken in a
    fixed order of their ``keys``' hashes until ``most`` sentences are taken."""
    found = [_sentences(body, chars) for body in bodies]
    shared = Counter(o for sentences in found for o in {_opening(s) for s in sentences})
    out: list[SelfRequest] = []
    for i in sorted(range(len(keys)), key=lambda i: (zlib.crc32(keys[i].encode()), keys[i])):
        kept = [s for s in found[i] if shared[_opening(s)] < SHARED]
        step = max(1, len(kept) // max(1, per_skill))
        out.extend(SelfRequest(i, s) for s in kept[::step][:per_skill])
        if len(out) >= most:
            return out[:most]
    return out


def without(body: str, sentence: str) -> str:
    """``body`` with ``sentence`` taken out (its words as they stand, white space aside)."""
    pattern = r"\s+".join(re.escape(w) for w in sentence.split())
    return re.sub(pattern, " ", body, count=1)
