"""The skill pairs of the encoder pairs builder: request-like sentences of a SKILL.md (never its
description), and which skills of a collection are taken (licence, benchmarks, evaluation skills,
copies)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from scripts.encoder_pairs import skill_requests
from scripts.encoder_pairs.build import main

DESCRIPTION = ("Convert scanned invoices into structured ledger rows. Use when the user wants "
               "invoice data in a spreadsheet.")

SKILL_MD = """---
name: invoice-ledger
description: {DESCRIPTION}
triggers:
  - "turn these PDF invoices into rows of my expenses sheet"
  - "extract vendor and totals from supplier bills"
---

# Invoice ledger

{DESCRIPTION}

## When to use

- Reconciling a month of supplier invoices against bank payments
- ok

## Examples

- "Read the invoices in my downloads folder and total them by vendor"

```
"quoted text inside a code block is never a request"
```

Use this skill when a bookkeeper hands over a folder of receipts to enter.
The parser keeps every line item and its tax rate as separate columns.
""".replace("{DESCRIPTION}", DESCRIPTION)


def test_requests_come_from_the_body_and_frontmatter_never_the_description() -> None:
    kinds = skill_requests.candidates(SKILL_MD, DESCRIPTION)
    assert kinds[0] == ["turn these PDF invoices into rows of my expenses sheet",
                        "extract vendor and totals from supplier bills"]
    assert kinds[1] == ["Read the invoices in my downloads folder and total them by vendor"]
    assert kinds[2] == ["Reconciling a month of supplier invoices against bank payments"]
    assert kinds[3] == ["Use this skill when a bookkeeper hands over a folder of receipts to "
                        "enter."]
    every = [t for kind in kinds for t in kind]
    assert not any("ledger rows" in t or "code block" in t for t in every)
    # one of each kind in turn, then the second of the first kind
    assert skill_requests.pick(kinds, 5) == [kinds[0][0], kinds[1][0], kinds[2][0],
                                             kinds[3][0], kinds[0][1]]
    # a template's opening, shared by many skills, stands for none of them
    shared = {skill_requests.opening(kinds[0][0])}
    assert skill_requests.pick(kinds, 2, shared) == [kinds[0][1], kinds[1][0]]


def test_prose_sentences_fill_in_only_when_nothing_better_is_written() -> None:
    body = "---\nname: x\ndescription: Does x.\n---\n\nThe tool renders a chart of weekly sales " \
           "by region.\n"
    kinds = skill_requests.candidates(body, "Does x.")
    assert skill_requests.pick(kinds, 3) == ["The tool renders a chart of weekly sales by "
                                             "region."]


def _skill(root: Path, folder: str, name: str, description: str, extra: str = "",
           body: str = "Use this skill when the team needs a weekly report of open tickets.",
           licence_file: str = "") -> None:
    path = root / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n{extra}---"
                                   f"\n\n{body}\n", encoding="utf-8")
    if licence_file:
        (path / "LICENSE.txt").write_text(licence_file, encoding="utf-8")


def test_the_command_takes_open_skills_that_are_neither_benchmarks_nor_evaluation_skills(
        tmp_path: Path) -> None:
    evals = tmp_path / "eval" / "skills"
    _skill(evals, "pdf-forms", "pdf-forms", "Fill in the fields of a PDF form and save it.")
    _skill(evals, "sheet-cleaner", "sheet-cleaner",
           "Clean a spreadsheet by trimming cells, fixing dates and removing duplicate rows.")
    queries = tmp_path / "eval" / "queries.jsonl"
    queries.write_text(json.dumps({"query": "use this skill when the team needs a weekly report "
                                              "of open tickets"}) + "\n", "utf-8")
    first, second = tmp_path / "one", tmp_path / "two"
    _skill(first, "skills/ticket-report", "ticket-report",
           "Summarise the open tickets of a tracker into a weekly report for the team.")
    _skill(first, "skills/pdf-forms", "pdf-forms", "Completes PDF forms from a profile.")
    _skill(first, "skills/cleaner", "cleaner", "Clean a spreadsheet by trimming cells, fixing "
           "dates and removing duplicate rows quickly.")
    _skill(first, "skillsbench/tasks/t1", "task-one", "A benchmark task's own skill for tests.")
    _skill(first, "skills/closed", "closed-skill", "Does something useful but is not open.",
           extra="license: Proprietary\n")
    _skill(first, "skills/reserved", "reserved-skill", "Does another useful thing for people.",
           licence_file="Copyright Someone. All rights reserved.")
    _skill(second, "copy", "ticket-digest",
           "Summarise the open tickets of a tracker into a weekly report for the team!")
    _skill(second, "other", "deploy-notes", "Write release notes from merged pull requests.",
           body="- \"draft the release notes for version 2.4 from the merged PRs\"")
    out = tmp_path / "pairs.jsonl.gz"
    assert main(["--skills", str(first), "--skills", str(second), "--eval-skills", str(evals),
                 "--eval-queries", str(queries), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in gzip.decompress(out.read_bytes()).splitlines()]
    assert [(r["id"], r["request"]) for r in rows] == [
        ("two/other#0", "draft the release notes for version 2.4 from the merged PRs")]
    assert rows[0]["source"] == "skills"
    assert rows[0]["tools"] == [{"name": "deploy-notes",
                                 "description": "Write release notes from merged pull requests."}]


def test_a_benchmarks_repository_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "skillsbench"
    _skill(repo, "a", "a-skill", "Does a thing for the user in a few steps.")
    evals = tmp_path / "eval" / "skills"
    _skill(evals, "b", "b-skill", "Does b.")
    queries = tmp_path / "eval" / "q.jsonl"
    queries.write_text("", encoding="utf-8")
    args = ["--eval-skills", str(evals), "--eval-queries", str(queries), "--out",
            str(tmp_path / "x.jsonl.gz")]
    assert main(["--skills", str(repo), *args]) == 1
    repo.rename(tmp_path / "skills")  # the same collection under another name is read
    assert main(["--skills", str(tmp_path / "skills"), *args]) == 0


def test_kept_pairs_stay_as_they_are_beside_the_skill_pairs(tmp_path: Path) -> None:
    from router.encoders.tools_model.rows import Row, Tool, read_rows
    from scripts.encoder_pairs.build import write
    from scripts.encoder_pairs.common import assign_splits

    earlier = tmp_path / "pairs.jsonl.gz"
    tool = Tool("get-weather", "Get the current weather for a city by name.")
    write(assign_splits([Row("bfcl/multiple/1", "bfcl", "How warm is it in Lisbon right now?",
                             (tool,))]), earlier)
    repo = tmp_path / "collection"
    _skill(repo, "notes", "deploy-notes", "Write release notes from merged pull requests.",
           body="- \"draft the release notes for version 2.4 from the merged PRs\"")
    evals = tmp_path / "eval" / "skills"
    _skill(evals, "b", "b-skill", "Does b.")
    queries = tmp_path / "eval" / "q.jsonl"
    queries.write_text("", encoding="utf-8")
    out = tmp_path / "v2.jsonl.gz"
    assert main(["--keep-pairs", str(earlier), "--skills", str(repo), "--eval-skills",
                 str(evals), "--eval-queries", str(queries), "--out", str(out)]) == 0
    rows = read_rows(out)
    assert [(r.source, r.id) for r in rows] == [("bfcl", "bfcl/multiple/1"),
                                               ("skills", "collection/notes#0")]
    assert rows[0] == read_rows(earlier)[0]
