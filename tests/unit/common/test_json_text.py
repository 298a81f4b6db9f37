"""Compact JSON text: one line, no spaces, non-ASCII kept, parsed back to the same value."""

from __future__ import annotations

import json

from router.common.json_text import compact


def test_compact_is_one_line_without_spaces_and_keeps_non_ascii() -> None:
    value = {"b": [1, 2.5, None], "a": "café, naïve — 日本", "nested": {"z": True}}
    text = compact(value)
    assert text == '{"b":[1,2.5,null],"a":"café, naïve — 日本","nested":{"z":true}}'
    assert json.loads(text) == value


def test_sorted_keys_give_canonical_text_for_equal_values() -> None:
    one, other = {"b": 1, "a": {"d": 2, "c": 3}}, {"a": {"c": 3, "d": 2}, "b": 1}
    assert compact(one) != compact(other)
    assert compact(one, sort_keys=True) == compact(other, sort_keys=True) == (
        '{"a":{"c":3,"d":2},"b":1}')
