"""The fast path of schema validity: the common JSON-Schema subset compiled to closures.

:func:`compile_check` turns a schema into a predicate ``check(instance) -> bool`` that may
say True **only** for instances the draft's jsonschema validator accepts (soundness); a
False is not a verdict — the caller asks jsonschema, which decides and words the error.
It returns None for a schema outside the subset, so that jsonschema validates every
instance of it.

The subset: ``type``, ``enum``, ``const``, ``minimum``, ``maximum``, ``exclusiveMinimum``
and ``exclusiveMaximum`` as numbers, ``minLength``, ``maxLength``, ``pattern``, ``items``
as one schema, ``minItems``, ``maxItems``, ``properties``, ``required``,
``additionalProperties``, ``minProperties``, ``maxProperties`` and ``format`` (an
annotation: the validators run without a format checker), for Draft 6 and later. A
keyword the draft's validator implements and the subset does not (``$ref``, ``anyOf``,
``patternProperties``, ``uniqueItems``, tuple ``items``…) makes the schema unsupported; a
keyword the draft does not implement is ignored, exactly as jsonschema ignores it. The
caller passes the draft's keywords (``Validator.VALIDATORS``) and the pattern search, so
that both paths run the same one.

Measured with ``bench/score_bench.py``, closures cost about as much as source generated
and ``exec``-ed per schema, so there is no code generation.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sized
from typing import Any

Check = Callable[[Any], bool]
Search = Callable[[str, str], bool | None]
"""``search(pattern, text)``: True when found, False when not, None when undecided."""
Fold = Callable[[Any], Any]
"""How ``enum`` and ``const`` see a value before JSON equality (identity by default; the
``bfcl`` profile standardises every string in it, at any depth)."""

_HANDLED = frozenset(
    {
        "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
        "minLength", "maxLength", "pattern", "items", "minItems", "maxItems", "properties",
        "required", "additionalProperties", "minProperties", "maxProperties", "format",
    }
)  # fmt: skip


def compile_check(
    schema: Any, keywords: frozenset[str], search: Search, fold: Fold | None = None
) -> Check | None:
    """The predicate for ``schema`` (see the module docstring), or None when the schema
    is outside the subset. ``keywords`` are the keywords the draft's validator
    implements; ``search`` is the pattern search jsonschema runs too; ``fold``, when
    given, is applied to both sides of ``enum`` and ``const`` comparisons (jsonschema's
    ``enum``/``const`` keywords are given the same one)."""
    try:
        return _Compiler(keywords, search, fold).schema(schema)
    except RecursionError:
        return None


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality as ``enum`` and ``const`` define it: numbers by value, booleans
    distinct from numbers, arrays in order, objects by keys (jsonschema's own rule)."""
    ta, tb = type(a), type(b)
    if ta is bool or tb is bool:
        return ta is tb and a == b
    if ta is dict:
        return tb is dict and a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if ta is list:
        return tb is list and len(a) == len(b) and all(map(json_equal, a, b))
    if tb is dict or tb is list:
        return False
    return bool(a == b)


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _is_integer(x: Any) -> bool:
    # Draft 6 and later: 5.0 is an integer.
    if isinstance(x, bool):
        return False
    return isinstance(x, int) or (isinstance(x, float) and x.is_integer())


_TYPES: dict[str, Check] = {
    "string": lambda x: isinstance(x, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda x: isinstance(x, bool),
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "null": lambda x: x is None,
}


def _always(x: Any) -> bool:
    return True


def _never(x: Any) -> bool:
    return False


class _Compiler:
    """One schema's compilation; every method returns None for "outside the subset"."""

    def __init__(self, keywords: frozenset[str], search: Search, fold: Fold | None):
        self.keywords = keywords
        self.search = search
        self.fold = fold

    def schema(self, schema: Any) -> Check | None:
        if schema is True:
            return _always
        if schema is False:
            return _never
        if not isinstance(schema, Mapping):
            return None
        for key in schema:
            if key in self.keywords and key not in _HANDLED:
                return None
        parts = [
            self.types(schema),
            self.values(schema),
            self.numbers(schema),
            self.strings(schema),
            self.arrays(schema),
            self.objects(schema),
        ]
        checks: list[Check] = []
        for part in parts:
            if part is None:
                return None
            checks.extend(part)
        if not checks:
            return _always
        if len(checks) == 1:
            return checks[0]
        fixed = tuple(checks)

        def every(x: Any) -> bool:
            for f in fixed:  # noqa: SIM110 - a plain loop: no generator per call on the hot path
                if not f(x):
                    return False
            return True

        return every

    def types(self, schema: Mapping[str, Any]) -> list[Check] | None:
        if "type" not in schema:
            return []
        t = schema["type"]
        names = [t] if isinstance(t, str) else t
        if not isinstance(names, list) or not names or not all(n in _TYPES for n in names):
            return None
        fns = tuple(_TYPES[n] for n in names)
        if len(fns) == 1:
            return [fns[0]]
        return [lambda x: any(f(x) for f in fns)]

    def values(self, schema: Mapping[str, Any]) -> list[Check] | None:
        out: list[Check] = []
        fold = self.fold
        if "enum" in schema:
            options = schema["enum"]
            if not isinstance(options, list):
                return None
            if fold is not None:
                folded = [fold(o) for o in options]
                if folded and all(type(o) is str for o in folded):
                    fnames = frozenset(folded)
                    out.append(lambda x: type(x) is str and fold(x) in fnames)
                else:
                    out.append(lambda x: any(json_equal(fold(x), o) for o in folded))
            elif options and all(type(o) is str for o in options):
                names = frozenset(options)
                out.append(lambda x: type(x) is str and x in names)
            else:
                out.append(lambda x: any(json_equal(x, o) for o in options))
        if "const" in schema:
            c = schema["const"]
            if fold is not None:
                fc = fold(c)
                out.append(lambda x: json_equal(fold(x), fc))
            else:
                out.append(lambda x: json_equal(x, c))
        return out

    def numbers(self, schema: Mapping[str, Any]) -> list[Check] | None:
        out: list[Check] = []
        for key, holds in _BOUNDS:
            if key in schema:
                bound = schema[key]
                if not _is_number(bound):
                    return None  # Draft 4's boolean exclusiveMinimum, or junk
                out.append(_within(holds, bound))
        return out

    def strings(self, schema: Mapping[str, Any]) -> list[Check] | None:
        out = _sized(schema, "minLength", "maxLength", str)
        if out is None:
            return None
        if "pattern" in schema:
            p = schema["pattern"]
            if not isinstance(p, str):
                return None
            search = self.search
            out.append(lambda x: not isinstance(x, str) or search(p, x) is True)
        return out

    def arrays(self, schema: Mapping[str, Any]) -> list[Check] | None:
        out = _sized(schema, "minItems", "maxItems", list)
        if out is None:
            return None
        if "items" in schema:
            item = self.schema(schema["items"])  # a list (tuple form) is not a schema: None
            if item is None:
                return None
            if item is not _always:
                out.append(lambda x: not isinstance(x, list) or all(map(item, x)))
        return out

    def objects(self, schema: Mapping[str, Any]) -> list[Check] | None:
        props_schema = schema.get("properties", {})
        required = schema.get("required", [])
        additional = schema.get("additionalProperties", True)
        lo, hi = _count(schema, "minProperties"), _count(schema, "maxProperties")
        if lo is None or hi is None or not isinstance(props_schema, Mapping):
            return None
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            return None
        props: dict[str, Check] = {}
        for name, sub in props_schema.items():
            f = self.schema(sub)
            if f is None:
                return None
            if f is not _always:
                props[name] = f
        extra = self.schema(additional)
        if extra is None:
            return None
        names = frozenset(props_schema)
        req = tuple(required)
        if not props and not req and extra is _always and lo < 0 and hi < 0:
            return []

        def check(x: Any) -> bool:
            if not isinstance(x, dict):
                return True
            for r in req:
                if r not in x:
                    return False
            n = len(x)
            if n < lo or (hi >= 0 and n > hi):
                return False
            for k, v in x.items():
                f = props.get(k)
                if f is not None:
                    if not f(v):
                        return False
                elif k not in names and extra is not _always and not extra(v):
                    return False
            return True

        return [check]


_BOUNDS: tuple[tuple[str, Callable[[Any, Any], bool]], ...] = (
    ("minimum", operator.ge),
    ("maximum", operator.le),
    ("exclusiveMinimum", operator.gt),
    ("exclusiveMaximum", operator.lt),
)
"""The number keywords, each with how an instance must compare with its bound."""


def _within(holds: Callable[[Any, Any], bool], bound: Any) -> Check:
    return lambda x: not _is_number(x) or holds(x, bound)


def _sized(
    schema: Mapping[str, Any], lo_key: str, hi_key: str, kind: type[Sized]
) -> list[Check] | None:
    """The checks of a pair of count keywords on instances of ``kind`` (None: not counts)."""
    lo, hi = _count(schema, lo_key), _count(schema, hi_key)
    if lo is None or hi is None:
        return None
    out: list[Check] = []
    if lo >= 0:
        out.append(lambda x: not isinstance(x, kind) or len(x) >= lo)
    if hi >= 0:
        out.append(lambda x: not isinstance(x, kind) or len(x) <= hi)
    return out


def _count(schema: Mapping[str, Any], key: str) -> int | None:
    """A non-negative count keyword (-1 when absent), or None when it is not one."""
    if key not in schema:
        return -1
    v = schema[key]
    if type(v) is float and v.is_integer():
        v = int(v)
    if type(v) is not int or v < 0:
        return None
    return v
