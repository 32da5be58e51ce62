"""Strict JSON in, canonical JSON out.

Python's ``json`` accepts ``NaN``/``Infinity``, lets the last of two duplicate keys win
silently and raises ``RecursionError`` on very deep nesting. Every JSON input of ToolGate
(dataset, runs, results, tool schemas, provider payloads) goes through :func:`loads_strict`,
which turns each of those into a :class:`JsonInputError` naming what is wrong, so callers
can attach the file, line and field.

Output is ``orjson`` with sorted keys, so identical data gives identical bytes.

:func:`no_gc` and :func:`release` keep large builds from those inputs fast and small.
"""

from __future__ import annotations

import contextlib
import gc
import json
import math
import re
from collections.abc import Iterator
from typing import Any

import orjson

# Re-exported: every reader catches ``jsonio.JsonInputError`` where it calls jsonio.
from gate.errors import JsonInputError as JsonInputError

MAX_DEPTH = 64
"""Deepest nesting of arrays/objects accepted in any JSON input."""


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


INT_MIN = -(2**63)
INT_MAX = 2**64 - 1
"""Integers outside [INT_MIN, INT_MAX] are refused: orjson (every writer) cannot encode
them, and most JSON parsers would silently round them."""


def _parse_int(text: str) -> int:
    value = int(text)
    # Only a literal of 19+ digits can leave the 64-bit range; skip the compare otherwise.
    if len(text) > 18 and not INT_MIN <= value <= INT_MAX:
        raise JsonInputError(f"integer {text[:20]}… is out of range (at most 64 bits)")
    return value


def _parse_float(text: str) -> float:
    value = float(text)
    # `1e400` is valid JSON syntax but overflows to inf: refuse it like `Infinity`.
    if math.isinf(value):
        raise JsonInputError(f"{text[:40]} is not a finite number (it overflows)")
    return value


_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs_no_duplicates,
    parse_constant=_reject_constant,
    parse_int=_parse_int,
    parse_float=_parse_float,
)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _lone_surrogate(value: Any) -> bool:
    """True when a string (or key) in ``value`` holds an unpaired UTF-16 surrogate."""
    if isinstance(value, str):
        if value.isascii():
            return False
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_lone_surrogate(k) or _lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_lone_surrogate(v) for v in value)
    return False


def depth(value: Any, stop: int | None = None) -> int:
    """Nesting depth of a decoded JSON value (a scalar is 0, ``[]`` is 1); with ``stop``,
    the walk ends at the first level past it.

    Iterative: the C decoder accepts nesting (~900 levels) deeper than a recursive walk
    in Python could measure without a ``RecursionError``.
    """
    if not isinstance(value, dict | list):
        return 0
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, level = pop()
        if level > deepest:
            deepest = level
            if stop is not None and level > stop:
                return level
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, dict | list):
                push((child, level + 1))
    return deepest


def deeper_than(value: Any, limit: int) -> bool:
    """Whether a decoded JSON value nests deeper than ``limit`` (:func:`depth`'s count)."""
    return depth(value, limit) > limit


def _class_table() -> bytes:
    table = bytearray(b"." * 256)
    for b in b"0123456789":
        table[b] = ord("0")
    for b in b" \t\n\r":
        table[b] = ord("w")
    for b in b"[{":
        table[b] = ord("b")
    table[ord(":")] = ord("c")
    table[ord('"')] = ord("q")
    table[ord("\\")] = ord("e")
    return bytes(table)


_CLASSES = _class_table()
"""Maps each byte to its class for :func:`_fast`'s checks, made on one translated copy of
the text: ``0`` a digit, ``w`` JSON whitespace, ``b`` an opening bracket, ``c`` a colon,
``q`` a quote, ``e`` a backslash, ``.`` anything else (a run of 19 digits, a whitespace
before a colon, an escaped backslash before a quote are then plain substring searches, far
faster than regular expressions)."""
_NINETEEN = b"0" * 19
_SPACE_BEFORE_COLON = re.compile(rb'"\s+:')


def _fast(data: bytes, max_depth: int) -> Any:
    """:func:`loads_strict` with orjson, when it can vouch for the result; otherwise
    ``_SLOW`` (the caller then takes the slow path, which says what is wrong).

    orjson refuses invalid UTF-8, lone surrogates, ``NaN``/``Infinity``, numbers that
    overflow and syntax errors as the strict decoder does; what it lets through is
    checked here: duplicate keys (the last one wins in orjson) by comparing the keys of
    the text with those of the value written back — every key ends in ``":`` (inside a
    string a quote is escaped, so its ``":`` is a ``\\":``); a duplicate makes the text's
    count larger, and with no whitespace before a colon nothing else can — and integers
    beyond 64 bits (orjson reads them as floats) by refusing any run of 19 digits."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _SLOW
    classes = data.translate(_CLASSES)
    if _NINETEEN in classes:
        return _SLOW
    # Without a backslash there is no escape: every quote is real, and a key's count is
    # that of `":` on both sides (the common case, a single-byte search to know it).
    escaped = b"e" in classes
    if escaped and b"eeq" in classes:
        # (a backslash escaped right before a quote makes that quote real: a key that
        # ends in a backslash would escape the count below)
        return _SLOW
    keys = classes.count(b"qc")
    if (
        b"wc" in classes  # rare, so first: the count below is then seldom needed
        and keys != classes.count(b"c")  # some colon follows something other than a quote
        and _SPACE_BEFORE_COLON.search(data)
    ):
        return _SLOW
    if classes.count(b"b") > max_depth and depth(value) > max_depth:
        return _SLOW
    if isinstance(value, dict | list):
        try:
            again = orjson.dumps(value)
        except orjson.JSONEncodeError:  # nesting orjson reads but will not write (~255)
            return _SLOW
        written = again.count(b'":')
        if escaped:
            keys -= classes.count(b"eqc")
            written -= again.count(b'\\":')
        if keys != written:
            return _SLOW
    return value


_SLOW: Any = object()


def loads_strict(data: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """Decode one JSON text, refusing what plain ``json.loads`` lets through.

    Raises :class:`JsonInputError` for invalid UTF-8, syntax errors, ``NaN``/``Infinity``,
    duplicate keys, integers too long to convert, and nesting deeper than ``max_depth``.
    Bytes are decoded by orjson first (a few µs; :func:`_fast` says when that is enough),
    then, when it cannot vouch for the result, by the strict decoder that names the problem.
    """
    if isinstance(data, bytes | bytearray):
        fast = _fast(bytes(data), max_depth)
        if fast is not _SLOW:
            return fast
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
        raise JsonInputError(
            f"invalid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno
        ) from None
    except RecursionError:
        raise JsonInputError(f"nesting deeper than {max_depth} levels") from None
    except ValueError as exc:  # e.g. int longer than sys.get_int_max_str_digits()
        raise JsonInputError(f"invalid JSON: {exc}") from None
    # Cheap bound first: nesting can't exceed the number of brackets.
    if text.count("[") + text.count("{") > max_depth and depth(value) > max_depth:
        raise JsonInputError(f"nesting deeper than {max_depth} levels")
    # `"\ud800"` decodes to a lone surrogate, which no UTF-8 writer can encode (orjson
    # raises on it later): refuse it here. Only an escape can produce one; look for it first.
    if "\\u" in text and _SURROGATE_ESCAPE.search(text) and _lone_surrogate(value):
        raise JsonInputError("a string holds an unpaired UTF-16 surrogate (\\uD800-\\uDFFF)")
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


def key_text(value: Any) -> str:
    """The JSON text of ``value`` (keys in their order) as a key a memo keeps. A ``str``,
    not orjson's ``bytes``: each ``bytes`` orjson returns holds a 4 KiB buffer however
    short its JSON, so a memo of a few thousand keys held tens of megabytes in every
    scoring worker. Raises ``TypeError`` for what is not JSON."""
    return orjson.dumps(value).decode()


def canonical(value: Any) -> str:
    """A stable text form of a JSON value, for hashing and for equality of arguments."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building large acyclic structures.

    Building 100,000 sample records triggers repeated full collections that scan the
    whole (growing) heap and find nothing: measured at more than half the build time.
    On the way out, what the block built is moved to the collector's permanent
    generation (``gc.freeze``) before collection resumes: otherwise the first
    allocation after it triggers one full collection over all of it (0.4 s at 20,000
    case-samples). Reference counting still frees those objects; only a reference cycle
    made inside the block would outlive its use, and these structures make none.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.freeze()
            gc.enable()


def release() -> None:
    """Collect, then hand the heap's free pages back to the system (glibc's
    ``malloc_trim``; elsewhere a collection only): between stages that let go of large
    structures, so that the next stage — and the workers it forks — start small."""
    gc.collect()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
