"""Check a callable skill's arguments against its JSON Schema (pure, no I/O).

Validation uses the ``jsonschema`` library with the draft the schema names in ``$schema``
(Draft 2020-12 when it names none) and with format checking on, so ``"format": "date"`` and
``"date-time"`` are enforced. Before validating, missing properties that declare a ``default``
are filled in, at the top level and inside nested objects and arrays of objects (``$ref`` targets
are not followed for defaults). Every problem is reported, not only the first, as an
``ArgumentError`` whose ``problem`` is a sentence a model can act on.
"""

from __future__ import annotations

import copy
import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, time
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError
from jsonschema.validators import validator_for

from router.activation.argument_errors import ArgumentError, describe
from router.errors import InvalidRequest, TooLarge
from router.skills.limits import ARGUMENT_ERRORS, ARGUMENTS_JSON_CHARS

log = logging.getLogger(__name__)

__all__ = ["ArgumentError", "ValidationResult", "fill_defaults", "parse_arguments_json",
           "validate_arguments"]

_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")
_TIME = re.compile(r"\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")

_FORMATS = FormatChecker()


@_FORMATS.checks("date-time", raises=ValueError)
def _is_date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not _DATE_TIME.fullmatch(value):
        return False
    datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    return True


@_FORMATS.checks("time", raises=ValueError)
def _is_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not _TIME.fullmatch(value):
        return False
    time.fromisoformat(value.upper().replace("Z", "+00:00"))
    return True


@dataclass(frozen=True)
class ValidationResult:
    """Either the normalised arguments (defaults filled) or the errors; never both."""

    arguments: Any
    errors: tuple[ArgumentError, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.errors


def parse_arguments_json(text: str) -> object:
    """Decode a tool call's arguments. Empty text means no arguments (``{}``)."""
    if len(text) > ARGUMENTS_JSON_CHARS:
        raise TooLarge(f"arguments are {len(text)} characters; the limit is "
                       f"{ARGUMENTS_JSON_CHARS}")
    if not text.strip():
        return {}

    def refuse_constant(name: str) -> object:
        raise ValueError(f"{name} is not valid JSON")

    try:
        return json.loads(text, parse_constant=refuse_constant)
    except json.JSONDecodeError as exc:
        raise InvalidRequest(f"arguments are not valid JSON: {exc.msg} at line {exc.lineno} "
                             f"column {exc.colno} (character {exc.pos})") from exc
    except (ValueError, RecursionError) as exc:
        raise InvalidRequest(f"arguments are not valid JSON: {exc}") from exc


def fill_defaults(schema: Mapping[str, Any], instance: Any) -> Any:
    """A copy of ``instance`` with missing properties set to their schema ``default``."""
    if isinstance(instance, dict):
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            return dict(instance)
        filled = dict(instance)
        for key, sub in properties.items():
            if not isinstance(sub, Mapping):
                continue
            if key not in filled and "default" in sub:
                filled[key] = copy.deepcopy(sub["default"])
            if key in filled:
                filled[key] = fill_defaults(sub, filled[key])
        return filled
    if isinstance(instance, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            return [fill_defaults(items, item) for item in instance]
    return instance


def _field_key(error: ArgumentError) -> tuple[tuple[int, int, str], ...]:
    """Order by path; array indexes numerically ("items/2" before "items/10")."""
    parts = error.field.split("/") if error.field else []
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts)


def _sort_key(error: ValidationError) -> tuple[tuple[str, ...], str]:
    return tuple(str(p) for p in error.absolute_path), str(error.validator)


def validate_arguments(schema: Mapping[str, Any], arguments: object) -> ValidationResult:
    """Validate ``arguments`` against ``schema`` after filling defaults; report every error."""
    cls = validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(dict(schema))
    except Exception as exc:  # the schema comes from a skill folder, not from the caller
        raise InvalidRequest(f"the skill's parameters schema is not usable: {exc}") from exc
    filled = fill_defaults(schema, arguments)
    validator = cls(schema, format_checker=_FORMATS)
    try:
        raw = sorted(validator.iter_errors(filled), key=_sort_key)
    except Exception as exc:  # e.g. an unresolvable $ref
        raise InvalidRequest(f"the skill's parameters schema could not be applied: {exc}") from exc
    # De-duplicated through a dict (insertion-ordered): linear in the number of problems,
    # where a list membership test was quadratic (10,000 unknown keys took seconds).
    unique: dict[ArgumentError, None] = {}
    for error in raw:
        unique.update(dict.fromkeys(describe(error)))
    errors = list(unique)
    if errors:
        log.debug("arguments rejected: %d problem(s)", len(errors))
        errors.sort(key=_field_key)
        return ValidationResult(arguments=None, errors=tuple(errors[:ARGUMENT_ERRORS]))
    return ValidationResult(arguments=filled)

