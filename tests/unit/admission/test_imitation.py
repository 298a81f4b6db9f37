"""Imitation between origins: confusable names, near-duplicate descriptions."""

from __future__ import annotations

from router.admission.imitation import check, skeleton
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
