"""router.common.paths: known folders rewritten where their path ends, longest first."""

from __future__ import annotations

import pytest

from router.common.paths import EXPOSED, PathView, named_folder, root_folder, skill_folders

VIEW = PathView((root_folder("/srv/skills"), named_folder("/srv/index/versions/v7", "v7"),
                 named_folder("/home/ann", "~")))


@pytest.mark.parametrize(("text", "shown"), [
    ("/srv/skills/pdf-tools/SKILL.md", "pdf-tools/SKILL.md"),
    ("/srv/skills/team/pdf/SKILL.md", "team/pdf/SKILL.md"),
    ("/srv/skills", "skills"),
    ("root /srv/skills not found.", "root skills not found."),
    ("<location>/srv/skills/a/SKILL.md</location>", "<location>a/SKILL.md</location>"),
    ('{"location": "/srv/skills/a/SKILL.md"}', '{"location": "a/SKILL.md"}'),
    ("/srv/index/versions/v7", "v7"),
    ("/srv/index/versions/v7/manifest.json", "v7/manifest.json"),
    ("/home/ann/notes.md", "~/notes.md"),
    ("/srv/skills2/a/SKILL.md", "/srv/skills2/a/SKILL.md"),  # another folder: not a prefix
    ("/srv/skills.bak/a", "/srv/skills.bak/a"),
    ("no path here", "no path here"),
])
def test_folders_are_rewritten_where_their_path_ends(text: str, shown: str) -> None:
    assert VIEW.text(text) == shown


def test_an_escaped_path_in_xml_is_rewritten_too() -> None:
    view = PathView((root_folder("/srv/R&D skills"),))
    assert view.text("<location>/srv/R&amp;D skills/a/SKILL.md</location>") == \
        "<location>a/SKILL.md</location>"


def test_a_skill_folder_outside_every_root_is_shown_by_its_name() -> None:
    view = PathView(tuple(skill_folders(["/srv/skills"], ["/srv/skills/a", "/opt/linked/b"])))
    assert view.text("/srv/skills/a/SKILL.md and /opt/linked/b/SKILL.md") == \
        "a/SKILL.md and b/SKILL.md"


def test_the_exposed_view_and_the_root_folder_change_nothing() -> None:
    assert EXPOSED.text("/srv/skills/a/SKILL.md") == "/srv/skills/a/SKILL.md"
    assert PathView((root_folder("/"),)).text("/etc/passwd") == "/etc/passwd"
