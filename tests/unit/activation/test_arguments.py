"""Callable-skill arguments: JSON-Schema validation, defaults, model-readable errors."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from router.activation.arguments import (
    ArgumentError,
    fill_defaults,
    parse_arguments_json,
    validate_arguments,
)
from router.errors import InvalidRequest, TooLarge
from router.skills.limits import ARGUMENTS_JSON_CHARS

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "date": {"type": "string", "format": "date"},
        "when": {"type": "string", "format": "date-time"},
        "units": {"type": "string", "enum": ["metric", "imperial"], "default": "metric"},
        "count": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
        "city": {"type": "string", "pattern": "^[A-Z]", "minLength": 2},
        "options": {"type": "object", "default": {},
                    "properties": {"lang": {"type": "string", "default": "en"}}},
        "items": {"type": "array", "items": {
            "type": "object", "required": ["qty"],
            "properties": {"qty": {"type": "integer"}, "note": {"type": "string", "default": ""}},
        }},
    },
    "required": ["date"],
    "additionalProperties": False,
}


def errors_of(arguments: object, schema: dict[str, Any] = SCHEMA) -> list[ArgumentError]:
    result = validate_arguments(schema, arguments)
    assert not result.ok and result.arguments is None
    return list(result.errors)


def only(arguments: object) -> ArgumentError:
    errors = errors_of(arguments)
    assert len(errors) == 1, errors
    return errors[0]


def test_valid_arguments_get_defaults_filled_without_mutating_input() -> None:
    given = {"date": "2024-05-01", "items": [{"qty": 2}]}
    before = copy.deepcopy(given)
    result = validate_arguments(SCHEMA, given)
    assert result.ok and result.errors == ()
    assert result.arguments == {
        "date": "2024-05-01", "units": "metric", "count": 3, "options": {"lang": "en"},
        "items": [{"qty": 2, "note": ""}],
    }
    assert given == before


def test_given_values_win_over_defaults() -> None:
    result = validate_arguments(SCHEMA, {"date": "2024-05-01", "count": 7,
                                         "options": {"lang": "fr"}})
    assert result.arguments["count"] == 7
    assert result.arguments["options"] == {"lang": "fr"}


def test_fill_defaults_leaves_non_objects_alone() -> None:
    assert fill_defaults(SCHEMA, "text") == "text"
    assert fill_defaults({"type": "object"}, {"a": 1}) == {"a": 1}


def test_wrong_type() -> None:
    error = only({"date": "2024-05-01", "count": "three"})
    assert error == ArgumentError(field="count", problem="count must be an integer, not string",
                                  expected="an integer", got='"three"')


def test_missing_required_names_the_property() -> None:
    error = only({})
    assert error.field == "date"
    assert error.problem == "date is required: give a date in YYYY-MM-DD form"
    assert error.expected == "a date in YYYY-MM-DD form"
    assert error.got == "missing"


def test_enum_lists_allowed_values() -> None:
    error = only({"date": "2024-05-01", "units": "kelvin"})
    assert error.field == "units"
    assert error.expected == 'one of "metric", "imperial"'
    assert error.problem == 'units must be one of "metric", "imperial"'
    assert error.got == '"kelvin"'


@pytest.mark.parametrize("bad", ["2024-13-01", "05/01/2024", "2024-5-1", "tomorrow",
                                 "2024-02-30"])
def test_date_format_is_checked(bad: str) -> None:
    error = only({"date": bad})
    assert error.field == "date"
    assert error.problem == "date must be a date in YYYY-MM-DD form"
    assert error.got == f'"{bad}"'


@pytest.mark.parametrize(("value", "ok"), [
    ("2024-05-01T09:30:00Z", True),
    ("2024-05-01T09:30:00.25+02:00", True),
    ("2024-05-01 09:30", False),
    ("2024-05-01T25:00:00Z", False),
    ("2024-05-01", False),
])
def test_date_time_format_is_checked(value: str, ok: bool) -> None:
    result = validate_arguments(SCHEMA, {"date": "2024-05-01", "when": value})
    assert result.ok is ok
    if not ok:
        assert result.errors[0].field == "when"
        assert "RFC 3339" in result.errors[0].problem


def test_additional_property_is_named() -> None:
    error = only({"date": "2024-05-01", "colour": "red"})
    assert error.field == "colour"
    assert error.problem.startswith("colour is not a parameter of this skill; remove it")
    assert "units" in error.expected and error.got == '"red"'


@pytest.mark.parametrize(("count", "problem"), [(0, "count must be at least 1"),
                                                (11, "count must be at most 10")])
def test_bounds(count: int, problem: str) -> None:
    error = only({"date": "2024-05-01", "count": count})
    assert (error.field, error.problem) == ("count", problem)


def test_pattern_and_length_both_reported() -> None:
    errors = errors_of({"date": "2024-05-01", "city": "x"})
    problems = {e.problem for e in errors}
    assert problems == {"city must match the pattern ^[A-Z]",
                        "city must be at least 2 characters long"}
    assert {e.field for e in errors} == {"city"}


def test_nested_paths() -> None:
    errors = errors_of({"date": "2024-05-01", "items": [{"qty": "x"}, {}]})
    assert [(e.field, e.problem) for e in errors] == [
        ("items/0/qty", "items/0/qty must be an integer, not string"),
        ("items/1/qty", "items/1/qty is required: give an integer"),
    ]


def test_every_error_reported_sorted_by_field() -> None:
    errors = errors_of({"units": "kelvin", "count": "x", "extra": 1})
    assert [e.field for e in errors] == ["count", "date", "extra", "units"]


def test_item_count_bounds() -> None:
    schema = {"type": "object", "properties": {"tags": {"type": "array", "maxItems": 1}}}
    errors = errors_of({"tags": ["a", "b"]}, schema)
    assert errors[0].problem == "tags must have at most 1 items"


def test_array_indexes_sort_numerically() -> None:
    items = [{"qty": 1}] * 10 + [{"qty": "x"}]
    errors = errors_of({"date": "2024-05-01", "items": [{"qty": "y"}, *items]})
    assert [e.field for e in errors] == ["items/0/qty", "items/11/qty"]


def test_arguments_that_are_not_an_object() -> None:
    error = only(["2024-05-01"])
    assert error.field == ""
    assert error.problem == "the arguments must be an object, not array"


def test_declared_draft_is_honoured() -> None:
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
              "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": True}}}
    assert validate_arguments(draft4, {"n": 1}).ok
    assert only_field(validate_arguments(draft4, {"n": 0}).errors) == "n"


def only_field(errors: tuple[ArgumentError, ...]) -> str:
    assert len(errors) == 1
    return errors[0].field


def test_unusable_schema_is_invalid_request() -> None:
    with pytest.raises(InvalidRequest):
        validate_arguments({"type": 12}, {})


def test_to_dict() -> None:
    error = only({"date": "x"})
    assert error.to_dict() == {"field": "date", "problem": error.problem,
                               "expected": error.expected, "got": '"x"'}


def test_parse_arguments_json() -> None:
    assert parse_arguments_json('{"a": [1, 2]}') == {"a": [1, 2]}
    assert parse_arguments_json("") == {}
    assert parse_arguments_json("  \n") == {}
    with pytest.raises(InvalidRequest, match="line 1 column 7"):
        parse_arguments_json('{"a": }')
    with pytest.raises(InvalidRequest, match="NaN"):
        parse_arguments_json('{"a": NaN}')
    with pytest.raises(TooLarge):
        parse_arguments_json(" " * (ARGUMENTS_JSON_CHARS + 1))
    with pytest.raises(InvalidRequest):
        parse_arguments_json("[" * 100_000 + "]" * 100_000)
