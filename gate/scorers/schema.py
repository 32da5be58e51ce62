"""JSON-Schema validation of call arguments, compiled once per tool schema.

``schema_validity`` (seed 003: the first deterministic check to add; seed 004: a missing
``order_id``, a string where a boolean is expected, an undeclared ``customer_email`` under
``additionalProperties: false``) validates each parsed call's arguments against the
``parameters`` schema of the tool it names.

* The draft is the schema's ``$schema`` when it names one, else **Draft 2020-12**
  (``jsonschema.validators.validator_for``). Formats are annotations, as the drafts say.
* Every distinct schema is compiled **once** per run (:class:`SchemaCache`), keyed by its
  canonical JSON, however many cases and calls share it.
* **Fast path**: a schema that only uses the common keywords (``type``, ``properties``,
  ``required``, ``additionalProperties``, ``enum``, ``const``, ``items`` as a schema,
  ``min``/``maxItems``, ``min``/``maxLength``, ``minimum``/``maximum``,
  ``exclusiveMinimum``/``exclusiveMaximum`` as numbers, ``pattern``,
  ``min``/``maxProperties`` — plus annotations) under Draft 6 or later is compiled into
  plain Python closures, about 20× faster than a general validator on the hot path.
  Anything else (``$ref``, ``anyOf``, ``oneOf``, ``allOf``, ``not``, ``if``,
  ``patternProperties``, ``uniqueItems``, ``multipleOf``, tuple ``items``, older drafts…)
  uses ``jsonschema`` itself. When the fast path rejects an instance, ``jsonschema``
  produces the message (its ``best_match``) — and has the last word, so the two can
  never disagree on a verdict.
* A schema that is itself invalid makes every call of that tool a ``SchemaMismatch``
  whose detail says so (the dataset loader should have refused it).
* **Bounded patterns.** ``pattern`` and ``patternProperties`` come from the dataset and
  are run on strings a model wrote; stdlib ``re`` backtracks without bound (``^(a+)+$``
  on ``"aaa…a!"`` takes hours). Both paths search with the ``regex`` module and a
  :data:`PATTERN_TIMEOUT_S` timeout instead (jsonschema's own ``re.search`` calls are
  routed through :class:`_BoundedRe`); a search that times out counts as *no match*, as a
  ``$regex`` matcher does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

import jsonschema
import orjson
import regex
from jsonschema import exceptions as js_exceptions
from jsonschema import validators as js_validators

Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
        "contentMediaType",
        "contentEncoding",
        "$anchor",
        "nullable",  # OpenAPI's keyword: jsonschema ignores it, and so do we.
    }
)
_FAST_DRAFTS = frozenset(
    {"Draft6Validator", "Draft7Validator", "Draft201909Validator", "Draft202012Validator"}
)
_VALIDATION_KEYWORDS = frozenset(
    {
        "$ref", "$dynamicRef", "$recursiveRef", "additionalItems", "additionalProperties",
        "allOf", "anyOf", "const", "contains", "dependencies", "dependentRequired",
        "dependentSchemas", "enum", "exclusiveMaximum", "exclusiveMinimum", "if", "items",
        "maxContains", "maxItems", "maxLength", "maxProperties", "maximum", "minContains",
        "minItems", "minLength", "minProperties", "minimum", "multipleOf", "not", "oneOf",
        "pattern", "patternProperties", "prefixItems", "properties", "propertyNames",
        "required", "type", "unevaluatedItems", "unevaluatedProperties", "uniqueItems",
        "$defs", "definitions", "then", "else", "$dynamicAnchor", "$recursiveAnchor",
        "$vocabulary", "extends", "disallow", "divisibleBy",
    }
)  # fmt: skip


class _Unsupported(Exception):
    """The schema uses something the fast path does not compile."""


# ─── JSON equality (booleans are not numbers) ─────────────────────────────────


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality as JSON Schema's ``enum``/``const`` define it: numbers by value,
    booleans distinct from numbers, arrays in order, objects by keys."""
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


# ─── the compiler ─────────────────────────────────────────────────────────────


def _is_number(x: Any) -> bool:
    t = type(x)
    return t is int or t is float


_TYPE_CHECKS: dict[str, Check] = {
    "string": lambda x: type(x) is str,
    "integer": lambda x: type(x) is int or (type(x) is float and x.is_integer()),
    "number": _is_number,
    "boolean": lambda x: type(x) is bool,
    "object": lambda x: type(x) is dict,
    "array": lambda x: type(x) is list,
    "null": lambda x: x is None,
}


def compile_fast(schema: Any) -> Check:
    """A predicate equivalent to validating against ``schema`` (fast-path subset only);
    raises ``_Unsupported`` for anything outside it."""
    if schema is True:
        return lambda x: True
    if schema is False:
        return lambda x: False
    if not isinstance(schema, Mapping):
        raise _Unsupported("schema is not an object")
    checks: list[Check] = []
    for key in schema:
        if key in _ANNOTATIONS or key in ("properties", "required", "additionalProperties"):
            continue
        if key in _VALIDATION_KEYWORDS and key not in _SIMPLE:
            raise _Unsupported(key)
    t = schema.get("type")
    if t is not None:
        names = [t] if isinstance(t, str) else t
        if not isinstance(names, list) or not all(n in _TYPE_CHECKS for n in names):
            raise _Unsupported("type")
        fns = [_TYPE_CHECKS[n] for n in names]
        if len(fns) == 1:
            checks.append(fns[0])
        else:
            checks.append(lambda x, fns=fns: any(f(x) for f in fns))  # type: ignore[misc]
    if "enum" in schema:
        options = schema["enum"]
        if not isinstance(options, list):
            raise _Unsupported("enum")
        checks.append(lambda x, o=options: any(json_equal(x, v) for v in o))  # type: ignore[misc]
    if "const" in schema:
        c = schema["const"]
        checks.append(lambda x, c=c: json_equal(x, c))  # type: ignore[misc]
    checks.extend(_number_checks(schema))
    checks.extend(_string_checks(schema))
    checks.extend(_array_checks(schema))
    obj = _object_check(schema)
    if obj is not None:
        checks.append(obj)
    if not checks:
        return lambda x: True
    if len(checks) == 1:
        return checks[0]
    fixed = tuple(checks)

    def all_of(x: Any) -> bool:
        for f in fixed:  # noqa: SIM110 - a plain loop: no generator per call on the hot path
            if not f(x):
                return False
        return True

    return all_of


_SIMPLE = frozenset(
    {
        "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
        "minLength", "maxLength", "pattern", "items", "minItems", "maxItems", "minProperties",
        "maxProperties", "$defs", "definitions",
    }
)  # fmt: skip
# ``$defs``/``definitions`` only hold schemas for ``$ref``; without a ``$ref`` (which is
# refused above) they validate nothing.


def _num(schema: Mapping[str, Any], key: str) -> float | int | None:
    v = schema.get(key)
    if v is None:
        return None
    if not _is_number(v):
        raise _Unsupported(key)  # Draft 4's boolean exclusiveMinimum, or junk
    return v  # type: ignore[no-any-return]


def _number_checks(schema: Mapping[str, Any]) -> list[Check]:
    out: list[Check] = []
    lo, hi = _num(schema, "minimum"), _num(schema, "maximum")
    xlo, xhi = _num(schema, "exclusiveMinimum"), _num(schema, "exclusiveMaximum")
    if lo is not None:
        out.append(lambda x: not _is_number(x) or x >= lo)
    if hi is not None:
        out.append(lambda x: not _is_number(x) or x <= hi)
    if xlo is not None:
        out.append(lambda x: not _is_number(x) or x > xlo)
    if xhi is not None:
        out.append(lambda x: not _is_number(x) or x < xhi)
    return out


def _int(schema: Mapping[str, Any], key: str) -> int | None:
    v = schema.get(key)
    if v is None:
        return None
    if type(v) is float and v.is_integer():
        v = int(v)
    if type(v) is not int or v < 0:
        raise _Unsupported(key)
    return v


def _string_checks(schema: Mapping[str, Any]) -> list[Check]:
    out: list[Check] = []
    lo, hi = _int(schema, "minLength"), _int(schema, "maxLength")
    if lo is not None:
        out.append(lambda x: type(x) is not str or len(x) >= lo)
    if hi is not None:
        out.append(lambda x: type(x) is not str or len(x) <= hi)
    if "pattern" in schema:
        p = schema["pattern"]
        if not isinstance(p, str):
            raise _Unsupported("pattern")
        try:
            re.compile(p)
        except re.error:
            raise _Unsupported("pattern") from None
        out.append(lambda x: type(x) is not str or bounded_search(p, x))
    return out


def _array_checks(schema: Mapping[str, Any]) -> list[Check]:
    out: list[Check] = []
    lo, hi = _int(schema, "minItems"), _int(schema, "maxItems")
    if lo is not None:
        out.append(lambda x: type(x) is not list or len(x) >= lo)
    if hi is not None:
        out.append(lambda x: type(x) is not list or len(x) <= hi)
    if "items" in schema:
        if isinstance(schema["items"], list):
            raise _Unsupported("items")  # tuple form (pre-2020-12)
        item = compile_fast(schema["items"])
        out.append(lambda x: type(x) is not list or all(map(item, x)))
    return out


def _object_check(schema: Mapping[str, Any]) -> Check | None:
    props_schema = schema.get("properties")
    required = schema.get("required")
    additional = schema.get("additionalProperties", True)
    lo, hi = _int(schema, "minProperties"), _int(schema, "maxProperties")
    if (
        props_schema is None
        and required is None
        and additional is True
        and lo is None
        and hi is None
    ):
        return None
    if props_schema is not None and not isinstance(props_schema, Mapping):
        raise _Unsupported("properties")
    if required is not None and not (
        isinstance(required, list) and all(isinstance(r, str) for r in required)
    ):
        raise _Unsupported("required")
    props = {k: compile_fast(v) for k, v in (props_schema or {}).items()}
    req = tuple(required or ())
    extra: Check | None
    if additional is True:
        extra = None
    elif additional is False:
        extra = _never
    else:
        extra = compile_fast(additional)

    def check(x: Any) -> bool:
        if type(x) is not dict:
            return True
        for r in req:
            if r not in x:
                return False
        if lo is not None and len(x) < lo:
            return False
        if hi is not None and len(x) > hi:
            return False
        for k, v in x.items():
            f = props.get(k)
            if f is not None:
                if not f(v):
                    return False
            elif extra is not None and not extra(v):
                return False
        return True

    return check


def _never(x: Any) -> bool:
    return False


# ─── bounded pattern search ───────────────────────────────────────────────────

PATTERN_TIMEOUT_S = 0.05
"""Most time one schema ``pattern`` search may take (seconds); longer counts as no match."""


@lru_cache(maxsize=4096)
def _compiled(pattern: str) -> Any:
    try:
        return regex.compile(pattern)
    except (regex.error, ValueError, RecursionError, OverflowError):
        return None


def bounded_search(pattern: str, text: str) -> bool:
    """``re.search(pattern, text) is not None``, bounded by :data:`PATTERN_TIMEOUT_S`."""
    rx = _compiled(pattern)
    if rx is None:  # a pattern `re` accepts but `regex` does not: rare, keep `re` semantics
        return re.search(pattern, text) is not None
    try:
        return rx.search(text, timeout=PATTERN_TIMEOUT_S) is not None
    except TimeoutError:
        return False


class _BoundedRe:
    """Stands in for the ``re`` module inside jsonschema: ``search`` is bounded in time
    (returning a truthy object or None, as jsonschema expects), the rest is ``re``."""

    def search(self, pattern: str, string: str, flags: int = 0) -> object | None:
        if flags:
            return re.search(pattern, string, flags)
        return True if bounded_search(pattern, string) else None

    def __getattr__(self, name: str) -> Any:
        return getattr(re, name)


def _bound_jsonschema_patterns() -> None:
    import importlib

    for mod in ("jsonschema._keywords", "jsonschema._utils", "jsonschema._legacy_keywords"):
        try:
            module = importlib.import_module(mod)
        except ImportError:  # pragma: no cover - other jsonschema layouts
            continue
        if getattr(module, "re", None) is re:
            module.re = _BoundedRe()  # type: ignore[attr-defined]


_bound_jsonschema_patterns()


# ─── validators and their cache ───────────────────────────────────────────────


class ArgsValidator:
    """Validates one tool's arguments: ``error(args)`` is None when valid, else the
    reason (jsonschema's best-matching error message, with its path)."""

    __slots__ = ("_broken", "_fast", "_full", "fast_path")

    def __init__(self, schema: Any):
        self._broken: str | None = None
        self._fast: Check | None = None
        schema = schema if schema is not None else {}
        try:
            cls = js_validators.validator_for(schema, default=jsonschema.Draft202012Validator)
            cls.check_schema(schema)
            self._full: Any = cls(schema)
        except js_exceptions.SchemaError as exc:
            self._broken = f"the tool's parameters schema is invalid: {exc.message}"
            self._full = None
            self.fast_path = False
            return
        if cls.__name__ in _FAST_DRAFTS:
            try:
                self._fast = compile_fast(schema)
            except (_Unsupported, RecursionError):
                self._fast = None
        self.fast_path = self._fast is not None

    def error(self, args: Any) -> str | None:
        if self._broken is not None:
            return self._broken
        if self._fast is not None and self._fast(args):
            return None
        err = js_exceptions.best_match(self._full.iter_errors(args))
        if err is None:
            return None
        where = "/".join(str(p) for p in err.absolute_path)
        return f"{where}: {err.message}" if where else str(err.message)


class SchemaCache:
    """One compiled :class:`ArgsValidator` per distinct schema (by canonical JSON)."""

    def __init__(self) -> None:
        self._by_text: dict[bytes, ArgsValidator] = {}
        # id → (schema object kept alive, validator): skips re-serialising shared schemas.
        self._by_id: dict[int, tuple[Any, ArgsValidator]] = {}

    def get(self, schema: Mapping[str, Any] | None) -> ArgsValidator:
        hit = self._by_id.get(id(schema))
        if hit is not None and hit[0] is schema:
            return hit[1]
        key = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
        v = self._by_text.get(key)
        if v is None:
            v = ArgsValidator(schema)
            self._by_text[key] = v
        self._by_id[id(schema)] = (schema, v)
        return v

    def __len__(self) -> int:
        return len(self._by_text)
