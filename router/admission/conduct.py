"""What a skill tells the model to do, checked (pure): secrets sent away, the human taken out
of the loop, system-wide destructive commands, bundled scripts that send secrets over the
network, and a description written to match everything. Each finding names the rule, the
file (``SKILL.md`` or the bundled file's path) and the line."""

from __future__ import annotations

from collections.abc import Iterator

from router.admission import breadth, codeflow, destructive, oversight, secrets
from router.admission.model import Finding, Severity, SkillText
from router.admission.units import Doc, doc

SKILL_FILE = "SKILL.md"
PROSE_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".rst", ""})


def check(skill: SkillText) -> list[Finding]:
    """Every finding of the instruction, script and description rules for ``skill``."""
    read = list(_read(skill))
    found: list[Finding] = []
    if flow := next(secrets.secret_flows([d for d, script in read if not script]), None):
        source, sink = flow
        found.append(_finding("secret-exfiltration", sink.path,
                              f"{source.what} ({source.path}:{source.line}) is sent to "
                              f"{sink.what} ({sink.path}:{sink.line})"))
    for document, _ in read:
        if hit := oversight.out_of_loop(document):
            unit, words = hit
            found.append(_finding("human-out-of-loop", document.path, "an instruction that "
                                  f"takes the human out of the loop: {_quote(words)} "
                                  f"({document.path}:{unit.line})"))
            break
    for document, _ in read:
        if wide := destructive.system_wide(document):
            unit, why, words = wide
            found.append(_finding("system-destructive", document.path,
                                  f"{why}: {_quote(words)} ({document.path}:{unit.line})"))
            break
    for document, script in read:
        if script and (code := codeflow.script_flow(document)):
            found.append(_finding("script-exfiltration", document.path, (
                f"the script sends {code.source} (read on line {code.source_line}) over the "
                f"network: {_quote(code.call)} ({document.path}:{code.line})")))
            break
    if wide_description := breadth.breadth(skill.description):
        found.append(wide_description)
    return found


def _read(skill: SkillText) -> Iterator[tuple[Doc, bool]]:
    """The skill file's body and each bundled text file, and whether it is a script."""
    yield doc(SKILL_FILE, skill.body, first_line=skill.body_line), False
    for path, text in skill.files:
        name = path.rsplit("/", 1)[-1]
        suffix = name[name.rfind("."):].lower() if "." in name else ""
        if suffix in PROSE_SUFFIXES:
            yield doc(path, text), False
        else:
            yield doc(path, text, code=True), suffix in codeflow.SCRIPT_SUFFIXES


def _finding(rule: str, path: str, message: str) -> Finding:
    return Finding(rule, Severity.HIGH, message, file=path)


def _quote(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "...")
