"""Strict JSON decoding: the traps of Python's json module are input errors."""

from __future__ import annotations

import pytest

from gate import jsonio


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"a": NaN}', "NaN"),
        ('{"a": Infinity}', "Infinity"),
        ('{"a": -Infinity}', "-Infinity"),
        ('{"a": 1, "a": 2}', "duplicate key 'a'"),
        ('{"a": {"b": 1, "b": 1}}', "duplicate key 'b'"),
        ("[" * 65 + "]" * 65, "nesting deeper than 64"),
        ("[" * 5000 + "]" * 5000, "nesting deeper"),
        ('{"a": 1,}', "invalid JSON"),
        ("1" * 5000, "invalid JSON"),
    ],
)
def test_loads_strict__trap__is_refused_with_reason(text: str, needle: str) -> None:
    with pytest.raises(jsonio.JsonInputError, match=needle.replace("[", r"\[")):
        jsonio.loads_strict(text)


def test_loads_strict__invalid_utf8__names_the_byte() -> None:
    with pytest.raises(jsonio.JsonInputError, match="not valid UTF-8 \\(byte 7\\)"):
        jsonio.loads_strict(b'{"a": "\xff"}')


def test_loads_strict__depth_at_limit__is_accepted() -> None:
    assert jsonio.depth(jsonio.loads_strict("[" * 64 + "]" * 64)) == 64


def test_loads_strict__many_flat_brackets__not_mistaken_for_depth() -> None:
    text = "[" + ",".join(["[]"] * 200) + "]"
    assert len(jsonio.loads_strict(text)) == 200


def test_dumps__sorted_and_stable() -> None:
    a = jsonio.dumps({"b": 1, "a": [1, 2.5, None]})
    b = jsonio.dumps({"a": [1, 2.5, None], "b": 1})
    assert a == b == b'{"a":[1,2.5,null],"b":1}'
    assert jsonio.canonical({"x": "é"}) == '{"x":"é"}'
