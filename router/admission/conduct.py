"""What a skill tells the model to do, checked (pure): secrets sent away, the human taken out
of the loop, system-wide destructive commands, bundled scripts that send secrets over the
network, and a description written to match everything. Each finding names the rule, the
file (``SKILL.md`` or the bundled file's path) and the line."""

from __future__ import annotations

from collections.abc import Iterator

from router.admission import breadth, codeflow, destructive, oversight, secrets
from router.admission.model import Finding, Severity, SkillText
from router.admission.units import Unit, units

SKILL_FILE = "SKILL.md"
PROSE_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".rst", ""})


def check(skill: SkillText) -> list[Finding]:
    """Every finding of the instruction, script and description rules for ``skill``."""
    read = list(_read(skill))
    found: list[Finding] = []
    prose = [(path, u) for path, u, is_script in read if not is_script]
    if flow := next(secrets.secret_flows(prose), None):
        source, sink = flow
        found.append(_finding("secret-exfiltration", sink.path,
                              f"{source.what} ({source.path}:{source.line}) is sent to "
                              f"{sink.what} ({sink.path}:{sink.line})"))
    for path, file_units, _ in read:
        if hit := oversight.out_of_loop(file_units):
            unit, words = hit
            found.append(_finding("human-out-of-loop", path, "an instruction that takes the "
                                  f"human out of the loop: {_quote(words)} ({path}:{unit.line})"))
            break
    for path, file_units, _ in read:
        if wide := destructive.system_wide(file_units):
            unit, why, words = wide
            found.append(_finding("system-destructive", path,
                                  f"{why}: {_quote(words)} ({path}:{unit.line})"))
            break
    for path, text in skill.files:
        if code := codeflow.script_flow(path, text):
            found.append(_finding("script-exfiltration", path, (
                f"the script sends {code.source} (read on line {code.source_line}) over the "
                f"network: {_quote(code.call)} ({path}:{code.line})")))
            break
    if wide_description := breadth.breadth(skill.description):
        found.append(wide_description)
    return found


def _read(skill: SkillText) -> Iterator[tuple[str, list[Unit], bool]]:
    """(path, units, is a script) of the skill file's body and each bundled text file."""
    yield SKILL_FILE, _shifted(units(skill.body), skill.body_line - 1), False
    for path, text in skill.files:
        name = path.rsplit("/", 1)[-1]
        suffix = name[name.rfind("."):].lower() if "." in name else ""
        if suffix in PROSE_SUFFIXES:
            yield path, list(units(text)), False
        else:
            yield path, list(units(text, code=True)), suffix in codeflow.SCRIPT_SUFFIXES


def _shifted(found: Iterator[Unit], by: int) -> list[Unit]:
    return [Unit(u.text, u.line + by, u.code, u.warned) for u in found] if by else list(found)


def _finding(rule: str, path: str, message: str) -> Finding:
    return Finding(rule, Severity.HIGH, message, file=path)


def _quote(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "...")
