"""Making untrusted text safe for where it goes (pure, no I/O).

Skill folders, file names and frontmatter come from disk and may hold anything: bytes that are
not UTF-8 (Python keeps them as lone surrogates), C0 control characters, NUL, U+FFFE. Each
helper here answers one question for one destination:

- ``is_unicode`` - can the text be encoded as UTF-8 (a protobuf string, a JSON file)?
- ``xml_chars`` - the text with every character XML 1.0 forbids removed.
- ``one_line`` - the text on a single line (every run of whitespace or control characters
  becomes one space), for Markdown lists and table cells.
- ``printable`` - the text with control characters, line breaks and lone surrogates written as
  escapes, for terminals and text logs (one record stays on one line).
"""

from __future__ import annotations

import os
import re

# XML 1.0 Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_BREAKS = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u2028\u2029]+")
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def is_unicode(text: str) -> bool:
    """True when ``text`` holds no lone surrogate, so it encodes as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def xml_chars(text: str) -> str:
    """``text`` without the characters XML 1.0 does not allow (controls, NUL, U+FFFE/F,
    lone surrogates); markup characters are left for the caller to escape."""
    return _NOT_XML.sub("", text)


def one_line(text: str) -> str:
    """``text`` on one line: whitespace and control characters collapse to single spaces."""
    return _BREAKS.sub(" ", text).strip()


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\n":
        return "\\n"
    if char == "\r":
        return "\\r"
    if char == "\t":
        return "\\t"
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with control characters, line breaks and lone surrogates escaped
    (``\\n``, ``\\x1b``, ``\\udcff``), so it prints on one line and never drives a terminal."""
    return _UNPRINTABLE.sub(_escape, text)


def display_path(path: str) -> str:
    """A file path for messages: bytes that are not UTF-8 shown as ``\\xNN``, controls
    escaped. The result is always valid Unicode."""
    if is_unicode(path):
        return printable(path)
    try:
        raw = os.fsencode(path)  # undoes the surrogate escapes of a file-system name
    except UnicodeEncodeError:
        return printable(path)  # other lone surrogates are escaped as \udXXX
    return printable(raw.decode("utf-8", "backslashreplace"))
