"""The well-known index read and archives opened safely, without a network."""

from __future__ import annotations

import json

import pytest

from router.skills.registry.index import SCHEMA_0_2_0, index_url, parse_index
from router.skills.registry.unpack import (
    Limits,
    UnsafeArchive,
    archive_format,
    member_path,
    unpack,
)
from tests.support.registry_server import skill_md, tar_gz, zip_bytes

BASE = "https://skills.example/.well-known/agent-skills/index.json"
D = "sha256:" + "a" * 64


def index(entries: list[object], schema: object = SCHEMA_0_2_0) -> bytes:
    return json.dumps({"$schema": schema, "skills": entries}).encode()


def entry(name: str = "code-review", url: str = "code-review/SKILL.md", kind: str = "skill-md",
          digest: str = D) -> dict[str, str]:
    return {"name": name, "type": kind, "description": "Reviews code.", "url": url,
            "digest": digest}


def test_urls_resolve_per_rfc_3986() -> None:
    parsed = parse_index(index([
        entry("relative", "relative/SKILL.md"),
        entry("path-absolute", "/skills/path-absolute/SKILL.md"),
        entry("absolute", "https://cdn.example/v2/absolute.tar.gz", "archive"),
        entry("dotted", "../other/SKILL.md"),
    ]), BASE)
    assert [e.url for e in parsed.entries] == [
        "https://skills.example/.well-known/agent-skills/relative/SKILL.md",
        "https://skills.example/skills/path-absolute/SKILL.md",
        "https://cdn.example/v2/absolute.tar.gz",
        "https://skills.example/.well-known/other/SKILL.md",
    ]
    assert parsed.errors == parsed.warnings == ()


def test_an_unknown_schema_skips_the_index() -> None:
    parsed = parse_index(index([entry()], "https://schemas.agentskills.io/discovery/9.9/x"),
                         BASE)
    assert parsed.entries == ()
    assert "unknown index $schema" in parsed.errors[0] and "index skipped" in parsed.errors[0]
    assert "not JSON" in parse_index(b"{", BASE).errors[0]


def test_bad_entries_are_skipped_one_by_one() -> None:
    parsed = parse_index(index([
        entry(), entry("bundle", kind="bundle"), entry("Bad--Name"), entry("x", digest="md5:1"),
        entry("y", url="file:///etc/passwd"), {"name": "z"}, "text", entry(),
    ]), BASE)
    assert [e.name for e in parsed.entries] == ["code-review"]
    assert len(parsed.warnings) == 1 and "unknown type 'bundle'" in parsed.warnings[0]
    messages = " | ".join(parsed.errors)
    for part in ("breaks the spec's rule", "is not 'sha256:'", "not http(s)",
                 "missing or empty", "not an object", "listed twice"):
        assert part in messages


def test_index_url() -> None:
    assert index_url("https://skills.example") == BASE
    assert index_url("https://skills.example/") == BASE
    assert index_url(BASE) == BASE
    with pytest.raises(ValueError, match="not an http"):
        index_url("ftp://skills.example")


def test_archives_of_both_formats_unpack() -> None:
    members = {"SKILL.md": skill_md("wrangler"), "scripts/deploy.sh": b"echo deploy\n"}
    for data, fmt in ((tar_gz(members), "tar.gz"), (zip_bytes(members), "zip")):
        assert unpack(data, fmt) == members
    inside = unpack(tar_gz(members, links={"deploy": "scripts/deploy.sh"}), "tar.gz")
    assert inside["deploy"] == b"echo deploy\n"


def test_the_format_by_content_type_then_extension() -> None:
    assert archive_format("application/gzip", "https://x/a.zip") == "tar.gz"
    assert archive_format("application/zip; charset=binary", "https://x/a") == "zip"
    assert archive_format("application/octet-stream", "https://x/a.tgz?v=2") == "tar.gz"
    assert archive_format("", "https://x/a.ZIP") == "zip"
    with pytest.raises(UnsafeArchive, match="cannot tell the archive format"):
        archive_format("text/html", "https://x/a")


@pytest.mark.parametrize(("data", "fmt", "message"), [
    (tar_gz({"SKILL.md": b"x", "../evil.sh": b"x"}), "tar.gz", "'..' in its path"),
    (zip_bytes({"SKILL.md": b"x", "a/../../evil.sh": b"x"}), "zip", "'..' in its path"),
    (tar_gz({"SKILL.md": b"x", "/etc/cron.d/evil": b"x"}), "tar.gz", "absolute path"),
    (zip_bytes({"SKILL.md": b"x", "/abs": b"x"}), "zip", "absolute path"),
    (tar_gz({"SKILL.md": b"x"}, links={"passwd": "../../etc/passwd"}), "tar.gz",
     "leaves the skill"),
    (tar_gz({"SKILL.md": b"x"}, links={"passwd": "/etc/passwd"}), "tar.gz", "leaves the skill"),
    (tar_gz({"SKILL.md": b"x"}, hardlinks={"h": "../outside"}), "tar.gz", "leaves the skill"),
    (zip_bytes({"SKILL.md": b"x"}, links={"key": "../../.ssh/id_rsa"}), "zip",
     "leaves the skill"),
    (tar_gz({"SKILL.md": b"x"}, links={"dangling": "nothing"}), "tar.gz", "not a file of"),
    (tar_gz({"wrapper/SKILL.md": b"x"}), "tar.gz", "no SKILL.md at the archive's root"),
    (b"not an archive", "tar.gz", "not a readable .tar.gz"),
    (b"not an archive", "zip", "not a readable .zip"),
])
def test_hostile_archives_are_refused(data: bytes, fmt: str, message: str) -> None:
    with pytest.raises(UnsafeArchive, match=message):
        unpack(data, fmt)


def test_a_bomb_stops_at_the_cap() -> None:
    bomb = {"SKILL.md": b"x", "zeros.bin": b"\0" * (4 * 1024 * 1024)}
    limits = Limits(total_bytes=1024 * 1024)
    for data, fmt in ((tar_gz(bomb), "tar.gz"), (zip_bytes(bomb), "zip")):
        assert len(data) < 64 * 1024  # compresses a thousandfold
        with pytest.raises(UnsafeArchive, match="unpacks to more than 1048576 bytes"):
            unpack(data, fmt, limits)
    many = {"SKILL.md": b"x", **{f"f{i}": b"" for i in range(20)}}
    with pytest.raises(UnsafeArchive, match="more than 10 entries"):
        unpack(zip_bytes(many), "zip", Limits(entries=10))
    with pytest.raises(UnsafeArchive, match="more than 10 entries"):
        unpack(tar_gz(many), "tar.gz", Limits(entries=10))


def test_member_paths() -> None:
    assert member_path("./scripts//a.sh") == "scripts/a.sh"
    for bad in ("C:/x", "a\\b", "a\x00b"):
        with pytest.raises(UnsafeArchive):
            member_path(bad)
