"""Structured, model-readable descriptions of JSON-Schema validation errors (pure).

Each ``jsonschema`` error becomes one or more ``ArgumentError`` records: the argument's path,
a sentence saying what to change ("date must be a date in YYYY-MM-DD form"), what was expected,
and what was received. A missing required property and an unexpected extra property are reported
under that property's own path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from jsonschema.exceptions import ValidationError


@dataclass(frozen=True)
class ArgumentError:
    """One problem with one argument. ``field`` is a slash path ("date", "items/0/qty");
    the empty string means the arguments as a whole."""

    field: str
    problem: str
    expected: str
    got: str

    def to_dict(self) -> dict[str, str]:
        return {"field": self.field, "problem": self.problem, "expected": self.expected,
                "got": self.got}


_TYPES = {"string": "a string", "integer": "an integer", "number": "a number",
          "boolean": "true or false", "array": "an array", "object": "an object", "null": "null"}
_FORMAT_PHRASES = {
    "date": "a date in YYYY-MM-DD form",
    "date-time": "a date and time in RFC 3339 form, such as 2024-05-01T09:30:00Z",
    "time": "a time in HH:MM:SS form with a UTC offset, such as 09:30:00Z",
    "email": "an email address",
    "uuid": "a UUID such as 123e4567-e89b-12d3-a456-426614174000",
    "ipv4": "an IPv4 address",
    "ipv6": "an IPv6 address",
    "hostname": "a host name",
    "uri": "an absolute URI",
    "regex": "a regular expression",
}
_BOUNDS = {"minimum": "at least", "maximum": "at most", "exclusiveMinimum": "greater than",
           "exclusiveMaximum": "less than"}
_SIZES = {"minLength": ("be", "at least", "characters long"),
          "maxLength": ("be", "at most", "characters long"),
          "minItems": ("have", "at least", "items"), "maxItems": ("have", "at most", "items"),
          "minProperties": ("have", "at least", "properties"),
          "maxProperties": ("have", "at most", "properties")}


def _show(value: object, limit: int = 80) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _type_phrase(types: object) -> str:
    names = types if isinstance(types, list) else [types]
    return " or ".join(_TYPES.get(str(t), str(t)) for t in names)


def _expected_for(schema: object) -> str:
    """What a (sub)schema asks for, in words."""
    if not isinstance(schema, Mapping):
        return "a value"
    if "enum" in schema and isinstance(schema["enum"], list):
        return "one of " + ", ".join(_show(v) for v in schema["enum"])
    if "format" in schema:
        return _FORMAT_PHRASES.get(str(schema["format"]), f"a string in {schema['format']} format")
    return _type_phrase(schema["type"]) if "type" in schema else "a value"


def _properties(schema: object) -> Mapping[str, Any]:
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    return props if isinstance(props, Mapping) else {}


def _join(path: list[str], extra: str = "") -> str:
    return "/".join([*path, extra] if extra else path)


def _missing(error: ValidationError, path: list[str]) -> list[ArgumentError]:
    instance: Any = error.instance
    wanted: Any = error.validator_value
    props = _properties(error.schema)
    names = [str(n) for n in wanted if isinstance(instance, dict) and n not in instance]
    return [ArgumentError(_join(path, n), f"{_join(path, n)} is required: give "
                          f"{_expected_for(props.get(n))}", _expected_for(props.get(n)),
                          "missing") for n in names]


def _matches_any(patterns: list[str], key: str) -> bool:
    for pattern in patterns:
        try:
            if re.search(pattern, key):
                return True
        except re.error:
            continue
    return False


def _extra(error: ValidationError, path: list[str]) -> list[ArgumentError]:
    instance: Any = error.instance
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    props = _properties(schema)
    patterns = [str(p) for p in schema.get("patternProperties", {}) or {}]
    allowed = ", ".join(sorted(props)) or "none"
    extras = sorted(str(k) for k in instance
                    if k not in props and not _matches_any(patterns, str(k)))
    return [ArgumentError(_join(path, k), f"{_join(path, k)} is not a parameter of this skill; "
                          f"remove it (allowed: {allowed})", f"only these properties: {allowed}",
                          _show(instance[k])) for k in extras]


def _sentence(error: ValidationError, label: str) -> tuple[str, str]:
    """``(problem, expected)`` for single-value keywords."""
    kind, value = str(error.validator), cast(Any, error.validator_value)
    if kind == "type":
        expected = _type_phrase(value)
        return f"{label} must be {expected}, not {_json_type(error.instance)}", expected
    if kind == "enum":
        expected = "one of " + ", ".join(_show(v) for v in value)
        return f"{label} must be {expected}", expected
    if kind == "const":
        return f"{label} must be exactly {_show(value)}", f"exactly {_show(value)}"
    if kind == "format":
        expected = _FORMAT_PHRASES.get(str(value), f"a string in {value} format")
        return f"{label} must be {expected}", expected
    if kind == "pattern":
        expected = f"a string matching the pattern {value}"
        return f"{label} must match the pattern {value}", expected
    if kind in _BOUNDS:
        expected = f"a number {_BOUNDS[kind]} {value}"
        return f"{label} must be {_BOUNDS[kind]} {value}", expected
    if kind in _SIZES:
        verb, word, unit = _SIZES[kind]
        return f"{label} must {verb} {word} {value} {unit}", f"{word} {value} {unit}"
    if kind == "multipleOf":
        return f"{label} must be a multiple of {value}", f"a multiple of {value}"
    if kind == "uniqueItems":
        return f"{label} must not contain duplicate items", "unique items"
    return f"{label}: {error.message}", f"{kind}: {_show(value)}"


def describe(error: ValidationError) -> list[ArgumentError]:
    """One jsonschema error as structured, model-readable argument errors."""
    path = [str(p) for p in error.absolute_path]
    if error.validator == "required":
        return _missing(error, path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        return _extra(error, path)
    field = _join(path)
    problem, expected = _sentence(error, field or "the arguments")
    return [ArgumentError(field, problem, expected, _show(error.instance))]
