"""A registry as a skill source, end to end: ``skill-router index --registry`` builds an index
of a loopback registry's skills (a tampered one a diagnostic, the build still exiting 0), and
the index serves them with the registry offline."""

from __future__ import annotations

from pathlib import Path

import pytest

from router.cli import main
from router.config import Config
from router.encoders.hashing import HashEmbedder
from router.engine import Engine
from router.routing.model import RouteQuery
from tests.support.registry_server import digest, registry_server, skill_md, tar_gz


def publish_two(reg: object) -> None:
    md = skill_md("code-review", "Reviews pull requests for bugs and style problems.")
    tgz = tar_gz({"SKILL.md": skill_md("wrangler", "Deploys Cloudflare Workers with wrangler."),
                  "scripts/deploy.sh": b"wrangler deploy\n"})
    bad = skill_md("tampered")
    reg.serve("/s/code-review/SKILL.md", md, "text/markdown")  # type: ignore[attr-defined]
    reg.serve("/s/wrangler.tar.gz", tgz, "application/gzip")  # type: ignore[attr-defined]
    reg.serve("/s/tampered/SKILL.md", bad + b"# evil\n")  # type: ignore[attr-defined]
    reg.index([  # type: ignore[attr-defined]
        {"name": "code-review", "type": "skill-md", "description": "Reviews code.",
         "url": "/s/code-review/SKILL.md", "digest": digest(md)},
        {"name": "wrangler", "type": "archive", "description": "Deploys Workers.",
         "url": "/s/wrangler.tar.gz", "digest": digest(tgz)},
        {"name": "tampered", "type": "skill-md", "description": "x",
         "url": "/s/tampered/SKILL.md", "digest": digest(bad)},
    ])


def test_index_a_registry_and_serve_it_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SKILL_ROUTER_DISCOVERY_REGISTRY_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "index"
    with registry_server() as reg:
        publish_two(reg)
        code = main(["index", "--registry", f"vendor={reg.base}", "--no-project", "--no-home",
                     "--out", str(out), "--model", "hash"])
    assert code == 0
    err = capsys.readouterr().err
    assert "skill 'tampered'" in err and "digest mismatch" in err
    engine = Engine.open(out, Config(), HashEmbedder())  # the registry is gone
    assert sorted(s.key for s in engine.skills()) == ["vendor/code-review", "vendor/wrangler"]
    result = engine.route(RouteQuery(message="deploy my cloudflare worker with wrangler"))
    assert result.skills[0].name == "wrangler"
    assert "# wrangler" in engine.activate("wrangler").content
    resource = engine.read_resource("wrangler", "scripts/deploy.sh")
    assert resource.content == b"wrangler deploy\n"


def test_a_down_registry_fails_no_other_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from tests.support.ports import free_port

    monkeypatch.setenv("SKILL_ROUTER_DISCOVERY_REGISTRY_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "skills" / "notes"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_bytes(skill_md("notes", "Takes meeting notes."))
    out = tmp_path / "index"
    with registry_server() as reg:
        publish_two(reg)
        code = main(["index", "--registry", f"down=http://127.0.0.1:{free_port()}",
                     "--registry", f"vendor={reg.base}", "--bundled", str(tmp_path / "skills"),
                     "--no-project", "--no-home", "--out", str(out), "--model", "hash"])
    assert code == 0
    assert "could not be fetched" in capsys.readouterr().err
    engine = Engine.open(out, Config(), HashEmbedder())
    assert sorted(s.key for s in engine.skills()) == [
        "notes", "vendor/code-review", "vendor/wrangler"]


def test_a_malformed_registry_flag_is_clear(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["index", "--registry", "ftp://x", "--no-project", "--no-home"]) != 0
    assert "expected URL or NAME=URL" in capsys.readouterr().err


def test_export_publishes_what_is_indexed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from router.skills.registry.index import SCHEMA_0_2_0
    from tests.support import REPO

    site = tmp_path / "site"
    assert main(["export", "--well-known", str(site), "--bundled",
                 str(REPO / "examples" / "skills"), "--no-project", "--no-home"]) == 0
    index = json.loads((site / ".well-known" / "agent-skills" / "index.json").read_text())
    assert index["$schema"] == SCHEMA_0_2_0 and len(index["skills"]) >= 40
    assert {e["type"] for e in index["skills"]} == {"skill-md", "archive"}
    assert "exported" in capsys.readouterr().out
    monkeypatch.setenv("SKILL_ROUTER_DISCOVERY_REGISTRY_CACHE", str(tmp_path / "cache"))
    with registry_server() as reg:
        for path in site.rglob("*"):
            if path.is_file():
                reg.serve("/" + path.relative_to(site).as_posix(), path.read_bytes())
        assert main(["index", "--registry", reg.base, "--no-project", "--no-home", "--out",
                     str(tmp_path / "index"), "--model", "hash"]) == 0
    engine = Engine.open(tmp_path / "index", Config(), HashEmbedder())
    assert len(engine.skills()) == len(index["skills"])
    assert not capsys.readouterr().err.count("quarantined")  # the demo passes admission


def test_the_registry_source_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from router.skills.sources.base import create_source

    monkeypatch.setenv("SKILL_ROUTER_DISCOVERY_REGISTRY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SKILL_ROUTER_DISCOVERY_SOURCE", "registry")
    assert create_source("registry").key == "registry"
    folder = tmp_path / "skills" / "notes"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_bytes(skill_md("notes", "Takes meeting notes."))
    out = tmp_path / "index"
    with registry_server() as reg:
        publish_two(reg)
        assert main(["index", "--registry", f"vendor={reg.base}", "--bundled",
                     str(tmp_path / "skills"), "--no-project", "--no-home", "--out", str(out),
                     "--model", "hash"]) == 0
    engine = Engine.open(out, Config(), HashEmbedder())
    assert sorted(s.key for s in engine.skills()) == ["vendor/code-review", "vendor/wrangler"]
    assert engine.read_resource("wrangler", "scripts/deploy.sh").content == b"wrangler deploy\n"
