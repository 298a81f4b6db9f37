"""The router's own text checks of one skill (pure): instructions aimed at the router or the
model in a name or description, invisible and bidirectional control characters anywhere, a
download piped into a shell or an interpreter in the body or a bundled file, and what the skill
tells the model to do (``conduct``: secrets sent away, the human out of the loop, system-wide
commands, scripts that send secrets, a description aimed at everything)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from router.admission import conduct
from router.admission.model import Finding, Severity, SkillText

# Bidirectional embeddings, overrides and isolates (the "Trojan Source" characters).
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
# Zero-width and otherwise invisible characters that carry no text of their own.
_INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad\u180e"
                       "\u034f\u115f\u1160\u3164\uffa0")
_TAG_RANGE = range(0xE0000, 0xE0080)  # Unicode tag characters: ASCII smuggled invisibly
_VARIATION_SUPPLEMENT = range(0xE0100, 0xE01F0)

# Phrases that address the router or the model rather than describe a task.
_STEERING = [
    (r"\balways\s+(?:use|select|choose|call|invoke|pick|prefer|route\s+to)\s+this\s+(?:skill|tool)"
     r"(?!\s+(?:when|whenever|if|for\s+(?!any|every|all\b)))",
     "an unconditional 'always use this skill'"),
    (r"\buse\s+this\s+(?:skill|tool)\s+(?:first|for\s+(?:any|every|all)\s*(?:thing|request|"
     r"task|question|query|prompt)s?\b(?!\s+(?:that|which|who|involving|with|related|about|"
     r"where|in|on|of|to)\b)|regardless|no\s+matter)", "a claim on every request"),
    (r"\b(?:for|with)\s+(?:any(?:thing)?|every(?:thing)?)\s+(?:at\s+all|whatsoever)\b",
     "a claim on every request"),
    (r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|"
     r"above|earlier|other|system)\s+(?:instructions?|prompts?|rules?|skills?|tools?|messages?)",
     "an instruction to ignore other instructions"),
    (r"\b(?:do\s+not|don't|never)\s+(?:use|select|choose|call|consider)\s+(?:any\s+)?(?:other|"
     r"another)\s+(?:skills?|tools?)", "an instruction against other skills"),
    (r"\b(?:you|the\s+(?:model|assistant|agent|router))\s+(?:must|should|shall)\s+(?:always\s+)?"
     r"(?:select|choose|call|invoke|activate|rank|prefer)\s+this\b",
     "an instruction to the model to pick this skill"),
    (r"\b(?:system\s+prompt|developer\s+message|<\s*/?\s*(?:system|instructions?)\s*>)",
     "text posing as a system or developer message"),
    (r"\b(?:highest|top)\s+priority\s+(?:skill|tool)\b|\brank\s+this\s+(?:skill|tool)\s+first\b",
     "a claim to outrank other skills"),
]
_STEERING_RE = [(re.compile(p, re.IGNORECASE), why) for p, why in _STEERING]

# A download fed straight to a shell or an interpreter.
_FETCH = r"(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|aria2c)\b"
_RUN = (r"(?:sudo\s+)?(?:ba|z|k|da|fi)?sh\b|python[23]?\b|perl\b|ruby\b|node\b|php\b|iex\b|"
        r"invoke-expression\b|pwsh\b|powershell\b|source\b")
_PIPES = [
    (rf"{_FETCH}\s+[^\s|;&][^\n|;&]*\|\s*(?:{_RUN})",
     "a download piped into a shell or interpreter"),
    (rf"(?:ba|z)?sh\s+-c\s+[\"']?\$\(\s*{_FETCH}", "a download run through sh -c"),
    (rf"(?:ba|z)?sh\s+<\(\s*{_FETCH}", "a download run through process substitution"),
    (rf"\b(?:iex|invoke-expression)\b[^\n]*\b(?:{_FETCH}|downloadstring)",
     "a download run through Invoke-Expression"),
    (rf"base64\s+(?:-d|--decode|-D)\b[^\n|]*\|\s*(?:{_RUN})", "decoded base64 piped into a shell "
     "or interpreter"),
    (r"\b(?:exec|eval)\s*\(\s*(?:base64\.b64decode|__import__\(\s*['\"]base64)",
     "decoded base64 executed"),
    (r"\beval\s+[\"']?\$\(\s*(?:curl|wget)", "a download run through eval"),
]
_PIPES_RE = [(re.compile(p, re.IGNORECASE), why) for p, why in _PIPES]


def check(skill: SkillText) -> list[Finding]:
    """Every finding of the text rules for ``skill``, in a stable order."""
    found: list[Finding] = []
    found.extend(_hidden(skill))
    found.extend(_steering(skill))
    found.extend(_pipes(skill))
    found.extend(conduct.check(skill))
    return found


def hidden_characters(text: str) -> list[tuple[int, str]]:
    """(offset, kind) of each bidirectional control, invisible or tag character in ``text``;
    a zero-width joiner inside an emoji sequence is text, not hidden."""
    out = []
    for i, ch in enumerate(text):
        code = ord(ch)
        if ch in _BIDI:
            out.append((i, "bidi"))
        elif code in _TAG_RANGE or code in _VARIATION_SUPPLEMENT:
            out.append((i, "tag"))
        elif ch in _INVISIBLE and not (ch == "\u200d" and _emoji_joined(text, i)):
            if ch == "\ufeff" and i == 0:
                continue  # a byte-order mark at the start is an encoding artefact
            out.append((i, "invisible"))
    return out


def _emoji_joined(text: str, i: int) -> bool:
    before = text[i - 1] if i > 0 else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    return bool(before and after) and all(
        unicodedata.category(c) == "So" or 0x1F000 <= ord(c) <= 0x1FAFF or c == "\ufe0f"
        for c in (before, after))


def _hidden(skill: SkillText) -> Iterator[Finding]:
    fields = [("name", skill.name), ("description", skill.description), ("body", skill.body),
              *((f"file {path}", text) for path, text in skill.files)]
    for where, text in fields:
        hits = hidden_characters(text)
        if not hits:
            continue
        kinds = sorted({kind for _, kind in hits})
        meta = where in ("name", "description")
        severity = (Severity.HIGH if meta or "bidi" in kinds or "tag" in kinds
                    else Severity.MEDIUM)
        codes = ", ".join(f"U+{ord(text[i]):04X}" for i, _ in hits[:5])
        yield Finding("hidden-characters", severity,
                      f"{len(hits)} {'/'.join(kinds)} control character(s) in the {where} "
                      f"(first at offset {hits[0][0]}: {codes})")


def _steering(skill: SkillText) -> Iterator[Finding]:
    for where, text in (("name", skill.name.replace("-", " ")),
                        ("description", skill.description)):
        for pattern, why in _STEERING_RE:
            if match := pattern.search(text):
                yield Finding("router-instructions", Severity.HIGH,
                              f"the {where} addresses the router or model: {why} "
                              f"({_quote(match.group(0))})")
                break


def _pipes(skill: SkillText) -> Iterator[Finding]:
    for where, text in (("body", skill.body), *((f"file {p}", t) for p, t in skill.files)):
        for pattern, why in _PIPES_RE:
            if match := pattern.search(text):
                yield Finding("download-to-shell", Severity.HIGH,
                              f"the {where} has {why} ({_quote(match.group(0))})")
                break


def _quote(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "...")
