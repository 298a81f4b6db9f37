"""Description-quality and body lint: warnings only."""

from __future__ import annotations

import pytest

from router.skills.lint import lint_body, lint_description, lint_skill
from router.skills.model import Level, Skill

GOOD = ("Extracts text and tables from PDF files, fills forms and merges documents. Use when "
        "the user works with PDF files or mentions forms or document extraction.")
PATH = "/s/pdf/SKILL.md"


def found(description: str) -> str:
    diags = lint_description(description, PATH)
    assert all(d.level is Level.WARNING and d.path == PATH for d in diags)
    return "\n".join(d.message for d in diags)


def test_good_description_is_clean() -> None:
    assert lint_description(GOOD, PATH) == []
    assert lint_description("Analyze CSV and tabular data files, compute summary statistics "
                            "and charts. Use when the user has a CSV or TSV file.", PATH) == []


@pytest.mark.parametrize("description, expected", [
    ("Process CSV files.", "too short"),
    ("Helps with PDFs.", "too short"),
    ("Helps with PDFs and other stuff like documents, in many cases. Use when asked.",
     "vague (helps with, stuff)"),
    ("Extracts text and tables from PDF files, fills forms and merges documents.",
     "does not say when"),
    ("I can extract text and tables from PDF files. Use when the user mentions PDFs.",
     "third person"),
    ("Extracts text so you can read PDF files quickly. Use when the user mentions PDFs.",
     "third person"),
    ("This skill extracts text and tables from PDF files. Use when the user mentions PDFs.",
     "start with a verb"),
    ("Use this skill when: the user asks about PDF files and wants text extracted from them.",
     "start with what the skill does"),
])
def test_description_problems(description: str, expected: str) -> None:
    assert expected in found(description)


def test_io_is_not_first_person() -> None:
    assert "third person" not in found("Handles file I/O for large archives. Use when the "
                                       "user streams tar or zip archives.")


def test_body_length_and_reference_depth() -> None:
    body = "\n".join([
        "See [the guide](references/GUIDE.md) and [forms](FORMS.md#fill).",
        "Deep: [api](references/api/v2/endpoints.md) and [up](../other/SKILL.md).",
        "Web: [docs](https://example.com/a/b/c/d) and [anchor](#top).",
        "```", "[in code](a/b/c/d.md)", "```",
        "Image: ![chart](assets/img/deep/chart.png \"title\")",
    ])
    messages = [d.message for d in lint_body(body, PATH)]
    assert len(messages) == 3
    assert "'references/api/v2/endpoints.md' is nested 3 folders deep" in messages[0]
    assert "outside the skill directory" in messages[1]
    assert "assets/img/deep/chart.png" in messages[2]
    long = lint_body("line\n" * 501, PATH)
    assert [d.level for d in long] == [Level.WARNING] and "501 lines" in long[0].message
    assert lint_body("line\n" * 500, PATH) == []


def test_lint_skill_combines_checks_and_never_errors() -> None:
    skill = Skill(name="helper", description="Does stuff.", location=PATH, base_dir="/s/pdf")
    diags = lint_skill(skill, body="x\n" * 600)
    text = "\n".join(d.message for d in diags)
    assert "name 'helper' is generic" in text and "600 lines" in text and "vague" in text
    assert {d.level for d in diags} == {Level.WARNING}
    good = Skill(name="pdf-processing", description=GOOD, location=PATH, base_dir="/s/pdf")
    assert lint_skill(good) == [] and lint_skill(good, body="# Steps") == []


@pytest.mark.parametrize("description", ["", " ", "!!!", "123 456", "a\nb\tc", "[x](y)"])
def test_odd_descriptions_only_warn(description: str) -> None:
    assert all(d.level is Level.WARNING for d in lint_description(description, PATH))
