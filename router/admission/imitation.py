"""Imitation between skills of different origins (pure): a name that reads like another
origin's skill once confusable characters are folded (NFKC, then a skeleton of lookalikes in
the spirit of Unicode TR39), and a description that nearly duplicates another origin's.

Of two imitating skills the less trusted one is flagged (a registry's over a folder's); of two
equally trusted ones both are, one step lower."""

from __future__ import annotations

import difflib
import functools
import unicodedata
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from router.admission.model import Finding, Severity, SkillText

# Lookalikes of Latin letters and digits (Cyrillic, Greek, Armenian, Latin variants, and the
# digit/letter pairs a reader confuses), folded to one skeleton character.
_LOOKALIKES = {
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j",
    "ѕ": "s", "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "к": "k", "м": "m", "н": "h", "т": "t",
    "в": "b", "ь": "b", "г": "r", "п": "n", "ӏ": "l", "ɡ": "g", "ɩ": "i", "ı": "i", "ȷ": "j",
    "α": "a", "ο": "o", "ρ": "p", "ν": "v", "υ": "u", "τ": "t", "κ": "k", "ι": "i", "χ": "x",
    "ε": "e", "η": "n", "ω": "w", "β": "b", "γ": "y", "օ": "o", "ս": "u", "ց": "g", "հ": "h",
    "ո": "n", "ք": "p", "0": "o", "1": "l", "i": "l", "|": "l", "5": "s", "ß": "ss", "æ": "ae",
    "œ": "oe", "ø": "o", "đ": "d", "ł": "l", "ħ": "h", "_": "-", "–": "-", "—": "-", "‐": "-",
    "‑": "-", "‒": "-", "−": "-", "m": "rn",
}
_COMMON = 50  # a trigram in more descriptions than this is phrasing, not content
NEAR_DUPLICATE = 0.9  # description similarity (difflib ratio of folded words) that imitates


@functools.lru_cache(maxsize=1 << 17)  # a catalog's names and descriptions, build after build
def skeleton(text: str) -> str:
    """``text`` folded for confusability: NFKC, case folded, combining marks and hidden
    characters dropped, lookalikes mapped to one character."""
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    out = []
    for ch in folded:
        if unicodedata.combining(ch) or unicodedata.category(ch) == "Cf":
            continue
        out.append(_LOOKALIKES.get(ch, ch))
    return "".join(out)


def trust(origin: str) -> int:
    """How far an origin is from the operator: 0 for folders on disk and local servers, 1 for
    anything fetched from a registry."""
    return 1 if origin.startswith("registry:") else 0


def check(skills: Sequence[SkillText]) -> dict[str, list[Finding]]:
    """Findings by skill key for every pair of skills of different origins that imitate each
    other (skills with the same digest are copies, not imitations)."""
    out: dict[str, list[Finding]] = defaultdict(list)
    by_skeleton: dict[str, list[SkillText]] = defaultdict(list)
    for s in skills:
        by_skeleton[skeleton(s.name)].append(s)
    for group in by_skeleton.values():
        for a, b in _pairs(group):
            if a.name != b.name:
                _flag(out, a, b, "confusable-name", Severity.HIGH,
                      "the name {x!r} is confusable with {y!r} ({ykey}, from {yorigin})")
    words = {s.key: " ".join(skeleton(s.description).split()) for s in skills}
    by_key = {s.key: s for s in skills}
    for ka, kb in _candidates(words):
        a, b = by_key[ka], by_key[kb]
        wa, wb = words[ka], words[kb]
        if a.origin == b.origin or (a.digest and a.digest == b.digest):
            continue
        matcher = difflib.SequenceMatcher(None, wa, wb, autojunk=False)
        if matcher.quick_ratio() >= NEAR_DUPLICATE and matcher.ratio() >= NEAR_DUPLICATE:
            _flag(out, a, b, "imitated-description", Severity.HIGH,
                  "the description nearly duplicates that of {ykey} (from {yorigin})")
    return dict(out)


def _candidates(words: dict[str, str]) -> list[tuple[str, str]]:
    """Pairs of keys whose descriptions share at least half their word trigrams (trigrams
    common to more than ``_COMMON`` descriptions ignored): near duplicates without comparing
    every pair. The pairs of each trigram's holders are made in arrays, a group of trigrams
    with as many holders at a time, and counted at once: the same counts as pair by pair."""
    shingles = {k: grams for k, text in words.items() if (grams := _trigrams(text))}
    keys = list(shingles)
    column: dict[tuple[str, ...], int] = {}
    cols = np.asarray([column.setdefault(g, len(column)) for grams in shingles.values()
                       for g in grams], dtype=np.int64)
    sizes = np.fromiter((len(g) for g in shingles.values()), dtype=np.int64, count=len(keys))
    if len(keys) < 2:
        return []
    order = np.argsort(cols, kind="stable")  # each trigram's holders together, in key order
    holders = np.repeat(np.arange(len(keys), dtype=np.int64), sizes)[order]
    counts = np.bincount(cols, minlength=len(column))
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    pairs = [np.zeros(0, dtype=np.int64)]
    for held in range(2, _COMMON + 1):
        first = starts[counts == held]
        if len(first):
            block = holders[first[:, None] + np.arange(held)]
            a, b = np.triu_indices(held, 1)
            pairs.append(block[:, a].ravel() * len(keys) + block[:, b].ravel())
    codes, shared = np.unique(np.concatenate(pairs), return_counts=True)
    a, b = codes // max(len(keys), 1), codes % max(len(keys), 1)
    near = shared >= 0.5 * np.minimum(sizes[a], sizes[b])
    return sorted((keys[i], keys[j]) if keys[i] < keys[j] else (keys[j], keys[i])
                  for i, j in zip(a[near].tolist(), b[near].tolist(), strict=True))


@functools.lru_cache(maxsize=1 << 17)  # a catalog's descriptions, build after build
def _trigrams(text: str) -> frozenset[tuple[str, ...]]:
    """The word trigrams of ``text`` (its one or two words for a shorter one)."""
    w = text.split()
    return frozenset(tuple(w[i:i + 3]) for i in range(max(1, len(w) - 2))) if w else frozenset()


def _pairs(group: list[SkillText]) -> list[tuple[SkillText, SkillText]]:
    return [(a, b) for i, a in enumerate(group) for b in group[i + 1:]
            if a.origin != b.origin and not (a.digest and a.digest == b.digest)]


def _flag(out: dict[str, list[Finding]], a: SkillText, b: SkillText, rule: str,
          severity: Severity, template: str) -> None:
    ta, tb = trust(a.origin), trust(b.origin)
    if ta == tb:
        lower = Severity.MEDIUM if severity is Severity.HIGH else Severity.LOW
        pairs = [(a, b, lower), (b, a, lower)]
    else:
        pairs = [(a, b, severity)] if ta > tb else [(b, a, severity)]
    for x, y, sev in pairs:
        out[x.key].append(Finding(rule, sev, template.format(
            x=x.name, y=y.name, ykey=y.key, yorigin=y.origin or "another origin")))
