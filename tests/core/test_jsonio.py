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
        ('{"a\\\\": 1, "a\\\\": 2}', "duplicate key"),
        ('{"a": 1, "b": {"a": 1, "c": 2, "c": 3}}', "duplicate key 'c'"),
        ('{"a" : 1, "a" : 2}', "duplicate key 'a'"),
        # An escape anywhere: the keys are counted net of escaped quotes on both sides.
        ('{"a": 1, "a": 2, "s": "\\u0022:"}', "duplicate key 'a'"),
        ('{"a": "\\":", "a": 2}', "duplicate key 'a'"),
        ('{"a":1,"a":2,"t":"10:00"}', "duplicate key 'a'"),
        ("[12345678901234567890123]", "out of range|too long|invalid"),
    ],
)
@pytest.mark.parametrize("as_bytes", [False, True], ids=["str", "bytes"])
def test_loads_strict__trap__is_refused_with_reason(text: str, needle: str, as_bytes: bool) -> None:
    """Bytes take orjson's path first: it must refuse every trap the strict decoder does."""
    with pytest.raises(jsonio.JsonInputError, match=needle.replace("[", r"\[")):
        jsonio.loads_strict(text.encode() if as_bytes else text)


def test_loads_strict__bytes_nested_deeper_than_orjson_writes__decoded_not_a_type_error() -> None:
    """orjson reads ~1,000 levels but writes only ~255: the check that writes the value
    back must hand such a text to the strict decoder, not raise."""
    text = ("[" * 300 + "1" + "]" * 300).encode()
    assert jsonio.depth(jsonio.loads_strict(text, max_depth=400)) == 300


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
