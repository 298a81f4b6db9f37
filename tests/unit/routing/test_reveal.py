"""The stable and reveal blocks (``router.routing.reveal``)."""

from __future__ import annotations

import json

from router.routing.catalog import Entry, render
from router.routing.model import CatalogFormat, Reason, RoutedSkill, RouteResult
from router.routing.reveal import reveal_block, split, stable_text

A, B = Entry("alpha", "Does a.", "/s/alpha/SKILL.md"), Entry("beta", "Does b & <c>.")


def routed(name: str, reason: Reason) -> RoutedSkill:
    return RoutedSkill(name, f"About {name}.", f"/s/{name}/SKILL.md", 0.5, reason)


def test_the_stable_block_is_sorted_and_empty_without_any_skill() -> None:
    xml = stable_text([B, A], CatalogFormat.XML, "tool", True)
    assert xml.index("<name>alpha</name>") < xml.index("<name>beta</name>")
    assert xml == stable_text([A, B], CatalogFormat.XML, "tool", True)
    assert "activate_skill" in xml and "beta</name>\n    <description>Does b &amp; &lt;c&gt;" in xml
    assert "SKILL.md at the listed location" in stable_text([], CatalogFormat.XML, "file", True)
    assert stable_text([], CatalogFormat.XML, "tool", True).endswith("may be used.\n"
                                                                    "When a task matches a "
                                                                    "skill's description, "
                                                                    "call the activate_skill "
                                                                    "tool\nwith the skill's "
                                                                    "name to load its full "
                                                                    "instructions.\n")
    assert stable_text([], CatalogFormat.MARKDOWN, "tool", False) == ""
    assert stable_text([A], CatalogFormat.ANTHROPIC_TOOL_REFERENCES, "tool", True) == ""


def test_a_reveal_is_the_catalog_block_without_its_instruction() -> None:
    for fmt in (CatalogFormat.XML, CatalogFormat.JSON, CatalogFormat.MARKDOWN):
        block = reveal_block([A, B], fmt)
        assert render([A, B], fmt).endswith("\n\n" + block)
    assert json.loads(reveal_block([A], CatalogFormat.JSON)) == {
        "available_skills": [{"name": "alpha", "description": "Does a.",
                              "location": "/s/alpha/SKILL.md"}]}
    assert reveal_block([], CatalogFormat.XML) == ""
    assert reveal_block([A], CatalogFormat.OPENAI_TOOL_SEARCH_OUTPUT) == ""


def test_split_reveals_only_new_retrieved_or_named_skills() -> None:
    result = RouteResult(skills=(routed("named", Reason.EXPLICIT), routed("on", Reason.ALWAYS_ON),
                                 routed("act", Reason.ACTIVE), routed("old", Reason.RETRIEVED),
                                 routed("new", Reason.RETRIEVED)),
                         catalog_text="x", index_version="v", full_catalog_chars=1,
                         catalog_chars=1, always_on=("on",))
    out = split(result, CatalogFormat.XML, {"old"}, include_location=False)
    assert [s.name for s in out.skills if s.first_shown] == ["named", "new"]
    assert out.reveal_text == reveal_block([Entry("named", "About named."),
                                            Entry("new", "About new.")], CatalogFormat.XML)
    assert split(result, CatalogFormat.XML, {"old", "new", "named"}, True).reveal_text == ""
    assert split(result, CatalogFormat.ANTHROPIC_TOOL_REFERENCES, set(), True) is result
