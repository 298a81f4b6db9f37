import json

from router.routing import catalog
from router.routing.catalog import Entry
from router.routing.model import CatalogFormat

ENTRIES = [
    Entry("pdf-extract", "Extracts text & tables from <PDF> files.", "/s/pdf-extract/SKILL.md"),
    Entry("git-bisect", "Finds the commit that broke a build.", "/s/git-bisect/SKILL.md"),
]


def test_no_skills_renders_nothing_at_all() -> None:
    for fmt in CatalogFormat:
        assert catalog.render([], fmt) == ""


def test_xml_block_matches_the_client_guide_shape_and_escapes() -> None:
    text = catalog.render(ENTRIES, CatalogFormat.XML, "tool")
    assert text.startswith(catalog.TOOL_INSTRUCTION + "\n\n<available_skills>\n")
    assert "  <skill>\n    <name>pdf-extract</name>\n" in text
    assert "<description>Extracts text &amp; tables from &lt;PDF&gt; files.</description>" in text
    assert "<location>/s/git-bisect/SKILL.md</location>" in text
    assert text.rstrip().endswith("</available_skills>")


def test_json_block_parses_and_keeps_order() -> None:
    text = catalog.render(ENTRIES, CatalogFormat.JSON, "tool")
    block = text[len(catalog.TOOL_INSTRUCTION) + 2:]
    data = json.loads(block)
    assert [s["name"] for s in data["available_skills"]] == ["pdf-extract", "git-bisect"]
    assert data["available_skills"][0]["location"] == "/s/pdf-extract/SKILL.md"


def test_markdown_list_and_file_mode_instruction() -> None:
    text = catalog.render(ENTRIES, CatalogFormat.MARKDOWN, "file")
    assert text.startswith(catalog.FILE_INSTRUCTION)
    assert "- **pdf-extract**: Extracts text & tables from <PDF> files." in text
    assert "activate_skill" not in text


def test_location_is_omitted_when_empty() -> None:
    text = catalog.render([Entry("a", "b")], CatalogFormat.XML)
    assert "<location>" not in text


def test_budget_keeps_whole_entries_by_rank() -> None:
    full = len(catalog.render(ENTRIES, CatalogFormat.XML))
    one = len(catalog.render(ENTRIES[:1], CatalogFormat.XML))
    assert catalog.fit_budget(ENTRIES, CatalogFormat.XML, "tool", 0) == 2
    assert catalog.fit_budget(ENTRIES, CatalogFormat.XML, "tool", full) == 2
    assert catalog.fit_budget(ENTRIES, CatalogFormat.XML, "tool", full - 1) == 1
    assert catalog.fit_budget(ENTRIES, CatalogFormat.XML, "tool", one - 1) == 0
