"""A registry over real HTTP on loopback: both artifact types and both archive formats, the
three URL forms, a redirect, a tampered artifact, a cache keyed by digest, HTTP validators,
and registries that are down or slow failing only themselves."""

from __future__ import annotations

import threading
from pathlib import Path

from router.skills.registry.fetch import Fetcher
from router.skills.registry.tree import export, materialize
from tests.support.ports import free_port
from tests.support.registry_server import (
    INDEX,
    Registry,
    digest,
    registry_server,
    skill_md,
    tar_gz,
    zip_bytes,
)

WK = "/.well-known/agent-skills"


def publish(reg: Registry) -> dict[str, bytes]:
    """Four skills: a skill-md by relative URL, a .tar.gz by path-absolute URL, a .zip by
    absolute URL and a skill-md behind a redirect."""
    md = skill_md("code-review")
    tgz = tar_gz({"SKILL.md": skill_md("wrangler"), "scripts/deploy.sh": b"echo hi\n"})
    zipped = zip_bytes({"SKILL.md": skill_md("pdf-forms"), "references/FORMS.md": b"# Forms\n"})
    moved = skill_md("git-workflow")
    reg.serve(f"{WK}/code-review/SKILL.md", md, "text/markdown")
    reg.serve("/cdn/wrangler.tar.gz", tgz, "application/gzip")
    reg.serve("/files/pdf-forms", zipped, "application/zip")
    reg.serve("/old/git-workflow.md", b"", status=301,
              headers={"Location": "/new/git-workflow.md"})
    reg.serve("/new/git-workflow.md", moved, "text/markdown")
    reg.index([
        {"name": "code-review", "type": "skill-md", "description": "Reviews code.",
         "url": "code-review/SKILL.md", "digest": digest(md)},
        {"name": "wrangler", "type": "archive", "description": "Deploys Workers.",
         "url": "/cdn/wrangler.tar.gz", "digest": digest(tgz)},
        {"name": "pdf-forms", "type": "archive", "description": "Fills PDF forms.",
         "url": f"{reg.base}/files/pdf-forms", "digest": digest(zipped)},
        {"name": "git-workflow", "type": "skill-md", "description": "Git conventions.",
         "url": "/old/git-workflow.md", "digest": digest(moved)},
    ])
    return {"code-review": md, "wrangler": tgz, "pdf-forms": zipped, "git-workflow": moved}


def test_a_registry_is_fetched_verified_and_cached(tmp_path: Path) -> None:
    with registry_server() as reg:
        publish(reg)
        got = Fetcher(tmp_path / "cache").fetch(reg.base)
        assert got.errors == () and got.warnings == ()
        files = {s.entry.name: s.files for s in got.skills}
        assert sorted(files) == ["code-review", "git-workflow", "pdf-forms", "wrangler"]
        assert files["wrangler"]["scripts/deploy.sh"] == b"echo hi\n"
        assert files["pdf-forms"]["references/FORMS.md"] == b"# Forms\n"
        assert files["git-workflow"]["SKILL.md"].startswith(b"---\nname: git-workflow")
        again = Fetcher(tmp_path / "cache").fetch(reg.base)
        assert {s.entry.name: s.files for s in again.skills} == files
        assert reg.hits("/cdn/wrangler.tar.gz") == 1  # unchanged digests are not fetched again
        assert reg.hits(INDEX) == 2


def test_http_validators_are_sent_and_a_304_reuses_the_index(tmp_path: Path) -> None:
    with registry_server() as reg:
        publish(reg)
        reg.routes[INDEX].headers["ETag"] = '"v1"'
        Fetcher(tmp_path).fetch(reg.base)
        body = reg.routes[INDEX].body
        reg.serve(INDEX, b"", "application/json", status=304)
        got = Fetcher(tmp_path).fetch(reg.base)
        last_index_request = [h for p, h in reg.requests if p == INDEX][-1]
        assert last_index_request.get("If-None-Match") == '"v1"'
        assert len(got.skills) == 4 and body


def test_a_tampered_artifact_is_refused_and_the_rest_load(tmp_path: Path) -> None:
    with registry_server() as reg:
        published = publish(reg)
        reg.routes["/cdn/wrangler.tar.gz"].body = tar_gz({"SKILL.md": b"evil"})
        got = Fetcher(tmp_path).fetch(reg.base)
        assert sorted(s.entry.name for s in got.skills) == [
            "code-review", "git-workflow", "pdf-forms"]
        (error,) = got.errors
        assert "skill 'wrangler'" in error and "digest mismatch" in error
        assert digest(published["wrangler"]) in error
        assert digest(reg.routes["/cdn/wrangler.tar.gz"].body) in error
        assert not list((tmp_path / "artifacts").glob(f"{digest(published['wrangler'])[7:]}*"))


def test_a_hostile_archive_is_a_diagnostic(tmp_path: Path) -> None:
    with registry_server() as reg:
        evil = tar_gz({"SKILL.md": skill_md("evil"), "../../escape": b"x"})
        reg.serve("/evil.tar.gz", evil, "application/gzip")
        reg.index([{"name": "evil", "type": "archive", "description": "x",
                    "url": "/evil.tar.gz", "digest": digest(evil)}])
        got = Fetcher(tmp_path).fetch(reg.base)
        assert got.skills == () and "'..' in its path" in got.errors[0]


def test_an_unknown_schema_and_unknown_types(tmp_path: Path) -> None:
    with registry_server() as reg:
        reg.index([], schema="https://schemas.agentskills.io/discovery/0.1.0/schema.json")
        got = Fetcher(tmp_path).fetch(reg.base)
        assert got.skills == () and "unknown index $schema" in got.errors[0]


def test_down_and_slow_registries_fail_only_themselves(tmp_path: Path) -> None:
    down = Fetcher(tmp_path).fetch(f"http://127.0.0.1:{free_port()}")
    assert down.skills == () and "could not be fetched" in down.errors[0]
    with registry_server() as reg:
        publish(reg)
        held = threading.Event()
        reg.routes[f"{WK}/code-review/SKILL.md"].hold = held
        got = Fetcher(tmp_path, timeout=0.5).fetch(reg.base)
        held.set()
        assert sorted(s.entry.name for s in got.skills) == ["git-workflow", "pdf-forms",
                                                            "wrangler"]
        assert "timed out" in got.errors[0] and "'code-review'" in got.errors[0]


def test_a_redirect_loop_is_bounded(tmp_path: Path) -> None:
    with registry_server() as reg:
        reg.serve(INDEX, b"", status=302, headers={"Location": INDEX})
        got = Fetcher(tmp_path).fetch(reg.base)
        assert "more than 5 redirects" in got.errors[0]


def test_a_down_registry_falls_back_to_the_last_index(tmp_path: Path) -> None:
    with registry_server() as reg:
        publish(reg)
        base = reg.base
        Fetcher(tmp_path).fetch(base)
    got = Fetcher(tmp_path).fetch(base)  # the server is gone; the artifacts are cached
    assert len(got.skills) == 4 and "using the copy of the last build" in got.warnings[0]


def test_export_round_trips_through_a_registry(tmp_path: Path) -> None:
    with registry_server() as reg:
        publish(reg)
        fetched = Fetcher(tmp_path / "cache").fetch(reg.base)
    tree = materialize(fetched.skills, tmp_path / "skills")
    assert (tree / "wrangler" / "scripts" / "deploy.sh").read_bytes() == b"echo hi\n"
    index = export([(s.entry.name, s.entry.description, tree / s.entry.name)
                    for s in fetched.skills], tmp_path / "site")
    kinds = {e["name"]: e["type"] for e in index["skills"]}  # type: ignore[attr-defined]
    assert kinds == {"code-review": "skill-md", "git-workflow": "skill-md",
                     "pdf-forms": "archive", "wrangler": "archive"}
    with registry_server() as site:
        for path in (tmp_path / "site").rglob("*"):
            if path.is_file():
                site.serve("/" + path.relative_to(tmp_path / "site").as_posix(),
                           path.read_bytes())
        again = Fetcher(tmp_path / "cache2").fetch(site.base)
    assert again.errors == ()
    assert {s.entry.name: s.files for s in again.skills} == {
        s.entry.name: s.files for s in fetched.skills}


def test_a_refused_update_keeps_the_last_good_version(tmp_path: Path) -> None:
    with registry_server() as reg:
        published = publish(reg)
        Fetcher(tmp_path).fetch(reg.base)
        # the index announces a new version whose bytes do not match it
        new = skill_md("code-review", "Reviews code, now better.")
        reg.routes[f"{WK}/code-review/SKILL.md"].body = new + b"tampered"
        reg.index([{"name": "code-review", "type": "skill-md", "description": "Reviews code.",
                    "url": "code-review/SKILL.md", "digest": digest(new)}])
        got = Fetcher(tmp_path).fetch(reg.base)
    (skill,) = got.skills
    assert skill.files == {"SKILL.md": published["code-review"]}
    assert skill.entry.digest == digest(published["code-review"])
    (error,) = got.errors
    assert "digest mismatch" in error and digest(new) in error
    assert f"serving its last good version ({digest(published['code-review'])})" in error


class Clock:
    """A clock the test moves (no waiting)."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_a_fresh_index_is_not_fetched_again_within_max_age(tmp_path: Path) -> None:
    clock = Clock()
    with registry_server() as reg:
        publish(reg)
        reg.routes[INDEX].headers.update({"Cache-Control": "public, max-age=60", "Age": "10",
                                          "ETag": '"v1"'})
        first = Fetcher(tmp_path, clock=clock).fetch(reg.base)
        clock.now += 45  # within max-age less Age: the cached index, no request
        again = Fetcher(tmp_path, clock=clock).fetch(reg.base)
        assert reg.hits(INDEX) == 1
        assert [s.entry.name for s in again.skills] == [s.entry.name for s in first.skills]
        assert again.errors == () and again.warnings == ()
        clock.now += 10  # stale now: revalidated with the validator
        Fetcher(tmp_path, clock=clock).fetch(reg.base)
        assert reg.hits(INDEX) == 2
        assert [h for p, h in reg.requests if p == INDEX][-1].get("If-None-Match") == '"v1"'
        reg.serve(INDEX, b"", "application/json", status=304,
                  headers={"Cache-Control": "max-age=30"})
        clock.now += 100
        assert len(Fetcher(tmp_path, clock=clock).fetch(reg.base).skills) == 4
        clock.now += 20  # the 304's max-age made the stored copy fresh again
        assert len(Fetcher(tmp_path, clock=clock).fetch(reg.base).skills) == 4
        assert reg.hits(INDEX) == 3


def test_no_cache_revalidates_every_time(tmp_path: Path) -> None:
    clock = Clock()
    with registry_server() as reg:
        publish(reg)
        reg.routes[INDEX].headers.update({"Cache-Control": "no-cache, max-age=600",
                                          "ETag": '"v1"'})
        for _ in range(3):
            assert len(Fetcher(tmp_path, clock=clock).fetch(reg.base).skills) == 4
        assert reg.hits(INDEX) == 3
        assert [h for p, h in reg.requests if p == INDEX][-1].get("If-None-Match") == '"v1"'


def test_no_store_keeps_no_copy_of_the_index(tmp_path: Path) -> None:
    clock = Clock()
    with registry_server() as reg:
        publish(reg)
        reg.routes[INDEX].headers.update({"Cache-Control": "no-store, max-age=600",
                                          "ETag": '"v1"'})
        for _ in range(2):
            assert len(Fetcher(tmp_path, clock=clock).fetch(reg.base).skills) == 4
        assert reg.hits(INDEX) == 2
        assert all("If-None-Match" not in h for p, h in reg.requests if p == INDEX)
        assert not list((tmp_path / "indexes").glob("*.json"))
