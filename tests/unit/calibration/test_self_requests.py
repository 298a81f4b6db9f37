"""The requests a catalog makes of itself: prose sentences of its skills' bodies (no headings,
tables or code), none that a template repeats across skills, and a sentence taken out of a
skill's document."""

from __future__ import annotations

from router.calibration.self_requests import body_sentences, self_requests, without

BODY = """# Invoice tools

Use this skill to merge the quarterly invoices into one PDF file for the accountant.

| column | meaning |
|---|---|
```bash
pdftk a.pdf b.pdf cat output merged.pdf and more words here
```
- Split a scanned statement into one PDF per page before archiving it.
Short line.
"""


def test_body_sentences_are_prose_lines_only() -> None:
    found = body_sentences(BODY, 2000)
    assert found == ["Use this skill to merge the quarterly invoices into one PDF file for "
                     "the accountant.",
                     "Split a scanned statement into one PDF per page before archiving it."]
    assert body_sentences(BODY, 0) == []
    assert body_sentences(BODY, 30) == []  # only the part of the body the index reads


def test_boilerplate_shared_by_several_skills_stands_for_none() -> None:
    stub = 'Evaluation stub for this tool "{}" from the public set; only the name matters.'
    keys = [f"tool-{i}" for i in range(5)]
    bodies = [stub.format(k) for k in keys]
    bodies[2] += "\nConverts temperatures between Celsius, Fahrenheit and Kelvin scales."
    found = self_requests(keys, bodies, 2000)
    assert [(r.position, r.text.split()[0]) for r in found] == [(2, "Converts")]


def test_requests_are_capped_and_spread_over_skills() -> None:
    keys = [f"skill-{i}" for i in range(30)]
    bodies = ["\n".join(f"Skill {i} in its sentence {j} says what it does here."
                        for j in range(6)) for i in range(30)]
    found = self_requests(keys, bodies, 2000, per_skill=2, most=25)
    assert len(found) == 25
    per_skill: dict[int, int] = {}
    for r in found:
        per_skill[r.position] = per_skill.get(r.position, 0) + 1
        assert r.text.startswith(f"Skill {r.position} ")
    assert max(per_skill.values()) == 2


def test_without_takes_the_sentence_out_whatever_the_spacing() -> None:
    document = "invoice tools Use this skill to merge   the quarterly\ninvoices. Then sign."
    out = without(document, "Use this skill to merge the quarterly invoices.")
    assert "merge" not in out and out.startswith("invoice tools") and "Then sign." in out
