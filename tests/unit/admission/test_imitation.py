"""Imitation between origins: confusable names, near-duplicate descriptions."""

from __future__ import annotations

import random
from collections import defaultdict
from itertools import combinations

from router.admission.imitation import _COMMON, _candidates, _trigrams, check, skeleton
from router.admission.model import Severity, SkillText

PDF = "Extracts text, tables and images from PDF files, including scanned pages through OCR."


def skill(key: str, name: str, description: str, origin: str, digest: str = "") -> SkillText:
    return SkillText(key, name, description, "", digest or f"d-{key}", origin)


def test_skeleton_folds_confusables() -> None:
    assert skeleton("pdf-\u0435xtract") == skeleton("pdf-extract")  # Cyrillic e
    assert skeleton("ＰＤＦ_extract") == skeleton("pdf-extract")  # fullwidth, underscore
    assert skeleton("rnodel") == skeleton("model")
    assert skeleton("g\u200bit") == skeleton("git")
    assert skeleton("pdf-extract") != skeleton("pdf-merge")


def test_a_registry_skill_with_a_confusable_name_is_flagged() -> None:
    found = check([skill("pdf-extract", "pdf-extract", "Reads PDFs.", "disk:default"),
                   skill("hub/pdf-\u0435xtract", "pdf-\u0435xtract", "Other words entirely.",
                         "registry:https://r.example")])
    assert list(found) == ["hub/pdf-\u0435xtract"]
    assert [(f.rule, f.severity) for f in found["hub/pdf-\u0435xtract"]] == [
        ("confusable-name", Severity.HIGH)]
    assert "pdf-extract" in found["hub/pdf-\u0435xtract"][0].message


def test_a_near_duplicate_description_from_another_origin() -> None:
    copy = PDF.replace("OCR.", "OCR!")
    found = check([skill("pdf-extract", "pdf-extract", PDF, "disk:default"),
                   skill("hub/pdf-tools", "pdf-tools", copy, "registry:https://r.example")])
    assert [(f.rule, f.severity) for f in found["hub/pdf-tools"]] == [
        ("imitated-description", Severity.HIGH)]
    assert "pdf-extract" not in found


def test_equally_trusted_origins_are_both_flagged_lower() -> None:
    found = check([skill("a/x", "x", PDF, "disk:a"), skill("b/y", "y", PDF, "disk:b")])
    assert {k: [f.severity for f in v] for k, v in found.items()} == {
        "a/x": [Severity.MEDIUM], "b/y": [Severity.MEDIUM]}


def test_copies_and_one_origins_skills_are_not_imitations() -> None:
    assert check([skill("a/x", "x", PDF, "disk:a", "same"),
                  skill("b/x", "x", PDF, "registry:https://r.example", "same")]) == {}
    assert check([skill("x", "x", PDF, "disk:a"), skill("y", "y", PDF, "disk:a")]) == {}
    assert check([skill("x", "x", PDF, "disk:a"),
                  skill("y", "y", "Plans vegetarian dinners for six people.", "disk:b")]) == {}


def _pairs_one_by_one(words: dict[str, str]) -> list[tuple[str, str]]:
    """The near-duplicate candidates counted pair by pair (what ``_candidates`` computes)."""
    grams = {k: _trigrams(t) for k, t in words.items() if _trigrams(t)}
    holders: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for key, held in grams.items():
        for gram in held:
            holders[gram].append(key)
    shared: dict[tuple[str, str], int] = defaultdict(int)
    for keys in holders.values():
        if len(keys) <= _COMMON:
            for a, b in combinations(keys, 2):
                shared[(min(a, b), max(a, b))] += 1
    return sorted(p for p, n in shared.items()
                  if n >= 0.5 * min(len(grams[p[0]]), len(grams[p[1]])))


def test_the_candidates_are_the_pairs_counted_one_by_one() -> None:
    rng = random.Random(3)
    vocabulary = [f"w{i}" for i in range(40)]
    common = "reads the files you give it and"  # phrasing in more than _COMMON descriptions
    words = {f"k{i:03d}": " ".join([*(common.split() if i % 2 else []),
                                    *rng.choices(vocabulary[: 5 + i % 30], k=rng.randint(0, 9))])
             for i in range(300)}
    words["dup-a"] = words["dup-b"] = "one two three four five"
    expected = _pairs_one_by_one(words)
    assert ("dup-a", "dup-b") in expected and len(expected) >= 5
    assert _candidates(words) == expected
    assert _candidates({}) == [] and _candidates({"only": "one two three"}) == []
