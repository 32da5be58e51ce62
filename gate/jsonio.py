"""Strict JSON in, canonical JSON out.

Python's ``json`` accepts ``NaN``/``Infinity``, lets the last of two duplicate keys win
silently and raises ``RecursionError`` on very deep nesting. Every JSON input of ToolGate
(dataset, runs, results, tool schemas, provider payloads) goes through :func:`loads_strict`,
which turns each of those into a :class:`JsonInputError` naming what is wrong, so callers
can attach the file, line and field.

Output is ``orjson`` with sorted keys, so identical data gives identical bytes.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

MAX_DEPTH = 64
"""Deepest nesting of arrays/objects accepted in any JSON input."""


class JsonInputError(ValueError):
    """A JSON text that ToolGate refuses; ``str()`` says why, without location."""


def _pairs_no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise JsonInputError(f"duplicate key {key!r}")
            seen.add(key)
    return obj


def _reject_constant(name: str) -> Any:
    raise JsonInputError(f"{name} is not valid JSON (numbers must be finite)")


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs_no_duplicates, parse_constant=_reject_constant)


def depth(value: Any, _level: int = 0) -> int:
    """Nesting depth of a decoded JSON value (a scalar is 0, ``[]`` is 1)."""
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


def loads_strict(data: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """Decode one JSON text, refusing what plain ``json.loads`` lets through.

    Raises :class:`JsonInputError` for invalid UTF-8, syntax errors, ``NaN``/``Infinity``,
    duplicate keys, integers too long to convert, and nesting deeper than ``max_depth``.
    """
    if isinstance(data, bytes | bytearray):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonInputError(f"not valid UTF-8 (byte {exc.start})") from None
    else:
        text = data
    try:
        value = _DECODER.decode(text)
    except JsonInputError:
        raise
    except json.JSONDecodeError as exc:
        raise JsonInputError(f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise JsonInputError(f"nesting deeper than {max_depth} levels") from None
    except ValueError as exc:  # e.g. int longer than sys.get_int_max_str_digits()
        raise JsonInputError(f"invalid JSON: {exc}") from None
    # Cheap bound first: nesting can't exceed the number of brackets.
    if text.count("[") + text.count("{") > max_depth and depth(value) > max_depth:
        raise JsonInputError(f"nesting deeper than {max_depth} levels")
    return value


def dumps(value: Any, *, indent: bool = False) -> bytes:
    """Canonical JSON bytes: sorted keys, UTF-8, no NaN; a trailing newline when indented."""
    option = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
    if indent:
        option |= orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
    return orjson.dumps(value, option=option)


def dumps_line(value: Any) -> bytes:
    """One JSON Lines record (sorted keys, newline-terminated)."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)


def canonical(value: Any) -> str:
    """A stable text form of a JSON value, for hashing and for equality of arguments."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
