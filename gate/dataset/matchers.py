"""Argument matchers: the dataset's ``args`` syntax → :class:`gate.model.ArgMatcher`.

An expected (or frozen-response) argument is either a plain JSON value — equal after
normalisation — or an object holding exactly one matcher (docs/dataset.md):

* ``{"$in": [v1, v2, ...]}`` — one of several values (non-empty list);
* ``{"$regex": "..."}`` — ``re.fullmatch`` on the actual string; the pattern must compile
  and be at most :data:`MAX_REGEX_LENGTH` characters (the scorer bounds the match time);
* ``{"$approx": x, "tol": t}`` — ``|actual - x| <= t``; both finite numbers, ``t >= 0``;
* ``{"$absent": true}`` — the argument must not be present;
* ``{"$any": true}`` — the argument is present, with any value.

Matchers apply to top-level arguments only: a matcher key nested inside a plain object
value would silently be compared as literal data, so it is an error.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from gate.errors import did_you_mean as did_you_mean  # re-exported: the dataset's readers
from gate.model import ArgMatcher, MatcherKind

MAX_REGEX_LENGTH = 512
"""Longest ``$regex`` pattern accepted (characters)."""

MATCHER_KEYS: tuple[str, ...] = ("$in", "$regex", "$approx", "$absent", "$any")
_ALL_KEYS = (*MATCHER_KEYS, "tol")

Report = Callable[[str, str], None]
"""``report(field, message)``: where the caller collects problems."""


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def is_matcher_object(value: Any) -> bool:
    """True when ``value`` is an object whose keys look like matcher syntax."""
    return isinstance(value, dict) and any(isinstance(k, str) and k.startswith("$") for k in value)


def parse_matcher(value: Any, field: str, report: Report) -> ArgMatcher | None:
    """One argument's expected value → an :class:`ArgMatcher`, or None after reporting."""
    if not isinstance(value, dict | list):  # a scalar: never a matcher, and it holds none
        return ArgMatcher(MatcherKind.EQUAL, value=value)
    if not is_matcher_object(value):
        nested = _nested_matcher(value, field)
        if nested is not None:
            report(
                nested,
                "matchers ($in, $regex, ...) work on top-level arguments only; write the "
                "whole value, or put one matcher on the top-level argument",
            )
            return None
        return ArgMatcher(MatcherKind.EQUAL, value=value)

    assert isinstance(value, dict)
    keys = list(value)
    unknown = [k for k in keys if k not in _ALL_KEYS]
    if unknown:
        key = unknown[0]
        hint = did_you_mean(key, MATCHER_KEYS) if key.startswith("$") else ""
        what = (
            f"unknown matcher {key!r}"
            if key.startswith("$")
            else f"unexpected key {key!r} beside a matcher"
        )
        report(field, f"{what}{hint} (matchers: {', '.join(MATCHER_KEYS)})")
        return None
    kinds = [k for k in keys if k in MATCHER_KEYS]
    # At least one key starts with "$" and every key is known, so `kinds` is not empty.
    if len(kinds) != 1:
        report(field, f"one matcher per argument, found {', '.join(kinds)}")
        return None
    kind = kinds[0]
    arg = value[kind]
    if "tol" in value and kind != "$approx":
        report(field, f"`tol` goes with `$approx`, not with {kind}")
        return None
    sub = f"{field}.{kind}"
    if kind == "$in":
        if not isinstance(arg, list) or not arg:
            report(sub, "must be a non-empty array of the accepted values")
            return None
        for i, option in enumerate(arg):
            nested = _nested_matcher(option, f"{sub}[{i}]")
            if nested is not None:
                report(nested, "the options of $in are plain values, not matchers")
                return None
        return ArgMatcher(MatcherKind.IN, options=tuple(arg))
    if kind == "$regex":
        if not isinstance(arg, str):
            report(sub, "must be a string (a regular expression, matched in full)")
            return None
        if len(arg) > MAX_REGEX_LENGTH:
            report(sub, f"pattern is {len(arg)} characters long; at most {MAX_REGEX_LENGTH}")
            return None
        try:
            re.compile(arg)
        except re.error as exc:
            report(sub, f"not a valid regular expression: {exc}")
            return None
        return ArgMatcher(MatcherKind.REGEX, pattern=arg)
    if kind == "$approx":
        if not _is_number(arg):
            report(sub, f"must be a finite number, not {arg!r}")
            return None
        if "tol" not in value:
            report(field, '`$approx` needs a tolerance: {"$approx": x, "tol": t}')
            return None
        tol = value["tol"]
        if not _is_number(tol) or tol < 0:
            report(f"{field}.tol", f"must be a finite number >= 0, not {tol!r}")
            return None
        return ArgMatcher(MatcherKind.APPROX, value=arg, tol=float(tol))
    # $absent / $any take exactly `true`: `false` would read as "not absent", which is
    # what a missing matcher already means, so it is almost certainly a mistake.
    if arg is not True:
        report(sub, f"must be true, not {arg!r}")
        return None
    return ArgMatcher(MatcherKind.ABSENT if kind == "$absent" else MatcherKind.ANY)


def parse_args(value: Any, field: str, report: Report) -> dict[str, ArgMatcher] | None:
    """An ``args`` object → name → matcher. None (after reporting) when it is not an
    object or any argument is malformed; every malformed argument is reported."""
    if not isinstance(value, dict):
        report(
            field, f"must be an object of argument name → expected value, not {json_kind(value)}"
        )
        return None
    out: dict[str, ArgMatcher] = {}
    ok = True
    for name, raw in value.items():
        m = parse_matcher(raw, f"{field}.{name}", report)
        if m is None:
            ok = False
        else:
            out[name] = m
    return out if ok else None


def check_against_schema(
    args: Mapping[str, ArgMatcher],
    parameters: Mapping[str, Any],
    tool: str,
    field: str,
    report: Report,
) -> None:
    """Catch expectations no valid call could meet: an argument the tool's schema does not
    accept (``additionalProperties: false``), or a value outside the property's ``enum``.
    Enum values are compared case-insensitively, since normalisation may fold case."""
    shape = _shape(parameters)
    if shape is None:
        return
    props, closed, enums = shape
    for name, matcher in args.items():
        enum = enums.get(name)
        if enum is None:
            if closed and matcher.kind is not MatcherKind.ABSENT and props.get(name) is None:
                report(
                    f"{field}.{name}",
                    f"{tool} has no parameter {name!r}{did_you_mean(name, props)}",
                )
            continue
        folded = _folded(enum)
        values = (
            [matcher.value]
            if matcher.kind is MatcherKind.EQUAL
            else list(matcher.options)
            if matcher.kind is MatcherKind.IN
            else []
        )
        for v in values:
            if matcher.kind is MatcherKind.IN and (v is None or v == ""):
                # Among `$in` options, null / "" stand for "may be omitted" (the bfcl
                # profile; null_equals_absent), not for a value the enum must list.
                continue
            if _fold(v) not in folded:
                choices = [e for e in enum if isinstance(e, str)]
                hint = did_you_mean(v, choices) if isinstance(v, str) else ""
                report(
                    f"{field}.{name}",
                    f"{v!r} is not one of {tool}.{name}'s values {enum}{hint}",
                )


_Shape = tuple[dict[str, Any], bool, dict[str, list[Any]]]
_SHAPES: dict[int, tuple[Mapping[str, Any], _Shape | None]] = {}


def _shape(parameters: Mapping[str, Any]) -> _Shape | None:
    """A parameters schema as :func:`check_against_schema` reads it — its properties,
    whether it is closed, and the properties that list an ``enum`` — or None when it has
    no properties object; computed once per schema (kept in the entry, as in
    :func:`_folded`), since every case of a tools file shares its schemas."""
    hit = _SHAPES.get(id(parameters))
    if hit is not None and hit[0] is parameters:
        return hit[1]
    props = parameters.get("properties")
    shape: _Shape | None = None
    if isinstance(props, dict):
        enums = {}
        for name, sub in props.items():
            enum = sub.get("enum") if isinstance(sub, dict) else None
            if isinstance(enum, list):
                enums[name] = enum
        shape = (props, parameters.get("additionalProperties") is False, enums)
    if len(_SHAPES) > 4096:
        _SHAPES.clear()
    _SHAPES[id(parameters)] = (parameters, shape)
    return shape


_FOLDED: dict[int, tuple[list[Any], frozenset[Any]]] = {}


def _folded(enum: list[Any]) -> frozenset[Any]:
    """The folded enum values, computed once per enum list (tool schemas are shared by
    every case that references them). The list itself is kept in the cache entry so its
    id cannot be reused by another list while the entry lives."""
    hit = _FOLDED.get(id(enum))
    if hit is not None and hit[0] is enum:
        return hit[1]
    folded = frozenset(_fold(e) for e in enum)
    if len(_FOLDED) > 4096:
        _FOLDED.clear()
    _FOLDED[id(enum)] = (enum, folded)
    return folded


def _fold(v: Any) -> Any:
    return v.strip().casefold() if isinstance(v, str) else repr(v)


def _nested_matcher(value: Any, field: str) -> str | None:
    """The field of the first matcher object nested inside ``value``, if any."""
    if isinstance(value, dict):
        if any(k in MATCHER_KEYS for k in value):
            return field
        for k, v in value.items():
            hit = _nested_matcher(v, f"{field}.{k}")
            if hit:
                return hit
    elif isinstance(value, list):
        for i, v in enumerate(value):
            hit = _nested_matcher(v, f"{field}[{i}]")
            if hit:
                return hit
    return None


def json_kind(value: Any) -> str:
    """A JSON type name for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
