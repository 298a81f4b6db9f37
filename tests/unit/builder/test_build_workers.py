"""Build worker processes (router.common.workers, ``index.build_workers``): a catalog forced
through them gives the same discovery, digests, examples, BM25 index and version files, byte for
byte, as the serial build, broken skills included; a worker that dies or raises does not change
what the build says; and the setting's bad values are one-line errors."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from router.cli import main
from router.common.workers import Workers, usable_cpus
from router.config import DiscoveryConfig, load_config
from router.errors import InvalidRequest
from router.examples.sources import gather
from router.index.lexical import LexicalIndex, skill_document
from router.skills import digests
from router.skills.discovery import discover
from router.skills.model import Level
from tests.support.indexes import index_argv
from tests.support.skills import add_skill, write_catalog, write_skill

OLD_NS = 1_600_000_000 * 1_000_000_000  # 2020: file times no digest treats as racy


def _catalog(base: Path) -> tuple[Path, Path]:
    """Two roots: 30 plain skills and the awkward ones (a broken SKILL.md, one that is not
    UTF-8, a lower-case skill.md, bundled files, examples good and bad), and a second root
    that shadows one name. Every file is dated in the past, so digests are never racy."""
    first = write_catalog(base / "one", 30)
    (first / "broken").mkdir()
    (first / "broken" / "SKILL.md").write_text("---\nname: broken\ndescription: [unclosed\n"
                                               "---\nbody\n", encoding="utf-8")
    (first / "latin1").mkdir()
    (first / "latin1" / "SKILL.md").write_bytes(b"---\nname: latin1\ndescription: caf\xe9\n---\n")
    write_skill(first / "lower", filename="skill.md")
    tools = add_skill(first, "with-files", "Runs the bundled script on CSV files.").parent
    (tools / "scripts").mkdir()
    (tools / "scripts" / "run.py").write_text("print('run')\n", encoding="utf-8")
    (tools / "evals").mkdir()
    (tools / "evals" / "evals.json").write_text(
        '{"skill_name": "with-files", "evals": [{"id": 1, "prompt": "run it on my CSV"}, {}]}',
        encoding="utf-8")
    (tools / "evals" / "trigger_evals.json").write_text("[not json", encoding="utf-8")
    second = write_catalog(base / "two", 1)  # skill-0 again: shadowed
    for folder in (first, second):
        for path in folder.rglob("*"):
            os.utime(path, ns=(OLD_NS, OLD_NS))
    return first, second


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _catalog(tmp_path_factory.mktemp("catalog"))


@pytest.fixture(scope="module")
def workers() -> Iterator[Workers]:
    """Two processes that take any list, however short."""
    with Workers(2, parallel_from=1) as pool:
        yield pool


def _config(roots: tuple[Path, Path]) -> DiscoveryConfig:
    return DiscoveryConfig(bundled_roots=tuple(str(r) for r in roots))


def test_discovery_digests_examples_and_bm25_match_the_serial_build(
        catalog: tuple[Path, Path], workers: Workers, tmp_path: Path) -> None:
    serial = discover(_config(catalog))
    parallel = discover(_config(catalog), workers=workers)
    assert workers.started
    assert parallel == serial  # same skills, shadowed and diagnostics, in the same order
    errors = [d for d in parallel.diagnostics if d.level is Level.ERROR]
    assert {Path(d.path).parent.name for d in errors} == {"broken", "latin1"}
    assert any("should be named SKILL.md" in d.message for d in parallel.diagnostics)
    assert [s.name for s in parallel.shadowed] == ["skill-0"]

    skills = serial.skills
    assert digests.compute_all(skills, None, workers) == digests.compute_all(skills)
    examples, problems = gather(skills, [], (), workers)
    assert (examples, problems) == gather(skills, [])
    assert [e.query for e in examples] == ["run it on my CSV"] and len(problems) == 2

    documents = [skill_document(s.name, s.description) for s in skills]
    LexicalIndex.build(documents).save(tmp_path / "serial")
    LexicalIndex.build(documents, workers).save(tmp_path / "parallel")
    assert _files(tmp_path / "parallel") == _files(tmp_path / "serial")


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _version(out: Path) -> Path:
    return out / "versions" / (out / "CURRENT").read_text(encoding="utf-8").strip()


def test_a_whole_index_is_the_same_with_workers(
        catalog: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("router.common.workers.PARALLEL_FROM", 1)  # tiny catalogs too
    first, second = catalog
    reports = []
    for name, count in (("serial", "1"), ("parallel", "2")):
        argv = [*index_argv(first, tmp_path / name), "--bundled", str(second),
                "--fine-tune-encoder", "off", "--build-workers", count, "--quiet"]
        assert main(argv) == 0
        reports.append(capsys.readouterr().err)
    assert reports[0] == reports[1] and "error: " in reports[0]  # the same diagnostics
    serial, parallel = _version(tmp_path / "serial"), _version(tmp_path / "parallel")
    files = _files(parallel)
    assert set(files) == set(_files(serial))
    for name, data in _files(serial).items():
        if name != "manifest.json":  # it names the version and the time of the build
            assert files[name] == data, name
    assert b'"broken"' not in files["skills.json"] and b"broken/SKILL.md" in files["skills.json"]


def _upper_unless_fatal(items: list[str]) -> list[str]:
    """Upper-cases ``items``; a worker process given "fatal" dies on the spot."""
    if "fatal" in items and multiprocessing.parent_process() is not None:
        os._exit(3)
    return [item.upper() for item in items]


def _refuse_bad(items: list[str]) -> list[str]:
    if "bad" in items:
        raise ValueError("bad item")
    return items


def test_a_dead_worker_leaves_the_rest_to_this_process(
        caplog: pytest.LogCaptureFixture) -> None:
    items = [f"item-{i}" for i in range(40)]
    items[25] = "fatal"
    with Workers(2, parallel_from=1) as pool:
        assert pool.map(_upper_unless_fatal, items) == [i.upper() for i in items]
        assert "worker process stopped" in caplog.text
        assert not pool.started and not pool.parallel(len(items))  # serial from here on
        assert pool.map(_upper_unless_fatal, ["a", "fatal"]) == ["A", "FATAL"]


def test_an_error_in_a_worker_is_raised_as_it_would_be_serially(workers: Workers) -> None:
    with pytest.raises(ValueError, match="bad item"):
        workers.map(_refuse_bad, [*("ok" for _ in range(20)), "bad"])


def test_short_lists_and_one_process_stay_in_this_process() -> None:
    with Workers(4) as pool:
        assert pool.map(_upper_unless_fatal, ["a", "b"]) == ["A", "B"]
        assert not pool.started
    with Workers(1, parallel_from=1) as pool:
        assert pool.map(_upper_unless_fatal, ["a"] * 50) == ["A"] * 50
        assert not pool.started
    assert Workers(0).processes == usable_cpus() >= 1


def test_the_setting_defaults_to_every_cpu_and_refuses_bad_values() -> None:
    assert load_config(env={}).index.build_workers == 0
    assert load_config(env={"SKILL_ROUTER_INDEX_BUILD_WORKERS": "3"}).index.build_workers == 3
    with pytest.raises(InvalidRequest, match=r"index\.build_workers: -1 is not a number"):
        load_config(env={"SKILL_ROUTER_INDEX_BUILD_WORKERS": "-1"})
    with pytest.raises(InvalidRequest, match="SKILL_ROUTER_INDEX_BUILD_WORKERS"):
        load_config(env={"SKILL_ROUTER_INDEX_BUILD_WORKERS": "many"})


@pytest.mark.parametrize("extra", [("--build-workers", "-1"), ("--build-workers", "two"),
                                   ("--build-workers", "1.5"),
                                   ("--shard", "0/2", "--build-workers", "-3"),
                                   ("--merge", "--build-workers", "x")])
def test_the_cli_refuses_a_bad_count_before_touching_the_index(
        tmp_path: Path, extra: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    skills, out = write_catalog(tmp_path / "skills", 2), tmp_path / "index"
    assert main([*index_argv(skills, out), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --build-workers: ") and "not a number of processes" in err
    assert len(err.strip().splitlines()) == 1 and not out.exists()
