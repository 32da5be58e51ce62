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

import contextlib
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


# ─── code generation: the fast path as straight-line Python ────────────────────


def compile_codegen(schema: Any) -> Check:
    """The fast-path subset compiled to the source of one Python function (the way
    fastjsonschema does it): no closure call per keyword, about 3× faster than
    :func:`compile_fast`, with which it agrees (a property test checks both against
    jsonschema). Raises ``_Unsupported`` like it."""
    compile_fast(schema)  # refuses what the subset does not cover, with the same rules
    gen = _Gen()
    gen.emit(schema, "x", 1)
    src = "def _validate(x):\n" + "\n".join(gen.lines) + "\n    return True\n"
    ns: dict[str, Any] = dict(gen.consts)
    ns["_json_equal"] = json_equal
    ns["_search"] = _rx_ok
    # The source holds only the schema's structure; its values are bound as constants.
    exec(compile(src, "<toolgate-schema>", "exec"), ns)
    fn: Check = ns["_validate"]
    return fn


def _rx_ok(rx: Any, text: str) -> bool:
    if rx is None:
        return True  # unreachable: compile_fast refused the pattern
    if isinstance(rx, str):  # `re` accepts it but `regex` does not
        return re.search(rx, text) is not None
    try:
        return rx.search(text, timeout=PATTERN_TIMEOUT_S) is not None
    except TimeoutError:
        return False


_TYPE_EXPR = {
    "string": "type({v}) is str",
    "integer": "(type({v}) is int or (type({v}) is float and {v}.is_integer()))",
    "number": "(type({v}) is int or type({v}) is float)",
    "boolean": "type({v}) is bool",
    "object": "type({v}) is dict",
    "array": "type({v}) is list",
    "null": "{v} is None",
}


class _Gen:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.consts: dict[str, Any] = {}
        self.n = 0

    def const(self, value: Any) -> str:
        self.n += 1
        name = f"_C{self.n}"
        self.consts[name] = value
        return name

    def var(self) -> str:
        self.n += 1
        return f"_v{self.n}"

    def add(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    def emit(self, schema: Any, v: str, d: int) -> None:
        if schema is True:
            return
        if schema is False:
            self.add(d, "return False")
            return
        t = schema.get("type")
        if t is not None:
            names = [t] if isinstance(t, str) else t
            expr = " or ".join(_TYPE_EXPR[n].format(v=v) for n in names)
            self.add(d, f"if not ({expr}): return False")
        if "enum" in schema:
            opts = schema["enum"]
            if opts and all(type(o) is str for o in opts):
                c = self.const(frozenset(opts))
                self.add(d, f"if type({v}) is not str or {v} not in {c}: return False")
            else:
                c = self.const(list(opts))
                self.add(d, f"if not any(_json_equal({v}, _o) for _o in {c}): return False")
        if "const" in schema:
            c = self.const(schema["const"])
            self.add(d, f"if not _json_equal({v}, {c}): return False")
        num = f"(type({v}) is int or type({v}) is float)"
        for key, op in (
            ("minimum", "<"),
            ("maximum", ">"),
            ("exclusiveMinimum", "<="),
            ("exclusiveMaximum", ">="),
        ):
            if key in schema:
                c = self.const(schema[key])
                self.add(d, f"if {num} and {v} {op} {c}: return False")
        string_checks = []
        if "minLength" in schema:
            string_checks.append(f"len({v}) < {int(schema['minLength'])}")
        if "maxLength" in schema:
            string_checks.append(f"len({v}) > {int(schema['maxLength'])}")
        if "pattern" in schema:
            rx = _compiled(schema["pattern"])
            c = self.const(rx if rx is not None else schema["pattern"])
            string_checks.append(f"not _search({c}, {v})")
        if string_checks:
            self.add(d, f"if type({v}) is str and ({' or '.join(string_checks)}): return False")
        array_keys = [k for k in ("minItems", "maxItems", "items") if k in schema]
        if array_keys:
            self.add(d, f"if type({v}) is list:")
            if "minItems" in schema:
                self.add(d + 1, f"if len({v}) < {int(schema['minItems'])}: return False")
            if "maxItems" in schema:
                self.add(d + 1, f"if len({v}) > {int(schema['maxItems'])}: return False")
            if "items" in schema:
                it = self.var()
                self.add(d + 1, f"for {it} in {v}:")
                before = len(self.lines)
                self.emit(schema["items"], it, d + 2)
                if len(self.lines) == before:
                    self.add(d + 2, "pass")
        self._object(schema, v, d)

    def _object(self, schema: Any, v: str, d: int) -> None:
        props = schema.get("properties") or {}
        required = schema.get("required") or []
        additional = schema.get("additionalProperties", True)
        lo, hi = schema.get("minProperties"), schema.get("maxProperties")
        if not props and not required and additional is True and lo is None and hi is None:
            return
        self.add(d, f"if type({v}) is dict:")
        d += 1
        start = len(self.lines)
        for r in required:
            self.add(d, f"if {r!r} not in {v}: return False")
        if lo is not None:
            self.add(d, f"if len({v}) < {int(lo)}: return False")
        if hi is not None:
            self.add(d, f"if len({v}) > {int(hi)}: return False")
        for name, sub in props.items():
            if sub is True or sub == {}:
                continue
            pv = self.var()
            self.add(d, f"{pv} = {v}.get({name!r}, _MISSING)")
            self.consts["_MISSING"] = _MISSING
            self.add(d, f"if {pv} is not _MISSING:")
            before = len(self.lines)
            self.emit(sub, pv, d + 1)
            if len(self.lines) == before:
                self.add(d + 1, "pass")
        if additional is not True:
            names = self.const(frozenset(props))
            k, av = self.var(), self.var()
            self.add(d, f"for {k}, {av} in {v}.items():")
            self.add(d + 1, f"if {k} not in {names}:")
            if additional is False:
                self.add(d + 2, "return False")
            else:
                before = len(self.lines)
                self.emit(additional, av, d + 2)
                if len(self.lines) == before:
                    self.add(d + 2, "pass")
        if len(self.lines) == start:
            self.add(d, "pass")


_MISSING = object()


# ─── messages for invalid arguments (fast-path schemas) ───────────────────────


def explain(schema: Any, x: Any, path: tuple[Any, ...] = ()) -> tuple[tuple[Any, ...], str] | None:
    """(path, message) of the first keyword ``x`` breaks, in jsonschema's wording, or
    None when valid. Interprets the fast-path subset; only runs on invalid arguments."""
    if schema is True:
        return None
    if schema is False:
        return path, "False schema does not allow " + repr(x)
    t = schema.get("type")
    if t is not None:
        names = [t] if isinstance(t, str) else t
        if not any(_TYPE_CHECKS[n](x) for n in names):
            return path, f"{x!r} is not of type {', '.join(repr(n) for n in names)}"
    if "enum" in schema and not any(json_equal(x, o) for o in schema["enum"]):
        return path, f"{x!r} is not one of {schema['enum']!r}"
    if "const" in schema and not json_equal(x, schema["const"]):
        return path, f"{schema['const']!r} was expected"
    if _is_number(x):
        if "minimum" in schema and x < schema["minimum"]:
            return path, f"{x!r} is less than the minimum of {schema['minimum']!r}"
        if "maximum" in schema and x > schema["maximum"]:
            return path, f"{x!r} is greater than the maximum of {schema['maximum']!r}"
        if "exclusiveMinimum" in schema and x <= schema["exclusiveMinimum"]:
            return (
                path,
                f"{x!r} is less than or equal to the minimum of {schema['exclusiveMinimum']!r}",
            )
        if "exclusiveMaximum" in schema and x >= schema["exclusiveMaximum"]:
            return (
                path,
                f"{x!r} is greater than or equal to the maximum of {schema['exclusiveMaximum']!r}",
            )
    if type(x) is str:
        if "minLength" in schema and len(x) < schema["minLength"]:
            return path, f"{x!r} is too short"
        if "maxLength" in schema and len(x) > schema["maxLength"]:
            return path, f"{x!r} is too long"
        if "pattern" in schema and not bounded_search(schema["pattern"], x):
            return path, f"{x!r} does not match {schema['pattern']!r}"
    if type(x) is list:
        if "minItems" in schema and len(x) < schema["minItems"]:
            return path, f"{x!r} is too short"
        if "maxItems" in schema and len(x) > schema["maxItems"]:
            return path, f"{x!r} is too long"
        if "items" in schema:
            for i, item in enumerate(x):
                hit = explain(schema["items"], item, (*path, i))
                if hit is not None:
                    return hit
    if type(x) is dict:
        for r in schema.get("required") or ():
            if r not in x:
                return path, f"{r!r} is a required property"
        if "minProperties" in schema and len(x) < schema["minProperties"]:
            return path, f"{x!r} does not have enough properties"
        if "maxProperties" in schema and len(x) > schema["maxProperties"]:
            return path, f"{x!r} has too many properties"
        props = schema.get("properties") or {}
        additional = schema.get("additionalProperties", True)
        extras = [k for k in x if k not in props]
        if additional is False and extras:
            listed = ", ".join(repr(k) for k in extras)
            verb = "was" if len(extras) == 1 else "were"
            return path, f"Additional properties are not allowed ({listed} {verb} unexpected)"
        for k, v in x.items():
            sub = props.get(k) if k in props else (additional if additional is not True else None)
            if sub is not None:
                hit = explain(sub, v, (*path, k))
                if hit is not None:
                    return hit
    return None


# ─── validators and their cache ───────────────────────────────────────────────


class ArgsValidator:
    """Validates one tool's arguments: ``error(args)`` is None when valid, else the
    reason in jsonschema's wording, with its path (for fast-path schemas from
    :func:`explain`, else jsonschema's ``best_match``)."""

    __slots__ = ("_broken", "_fast", "_full", "_schema", "fast_path")

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
        self._schema = schema
        if cls.__name__ in _FAST_DRAFTS:
            try:
                self._fast = compile_fast(schema)
            except (_Unsupported, RecursionError):
                self._fast = None
            if self._fast is not None:
                # Too deep for generated code (nested-block limits): the closures do.
                with contextlib.suppress(SyntaxError, RecursionError, MemoryError, ValueError):
                    self._fast = compile_codegen(schema)
        self.fast_path = self._fast is not None

    def error(self, args: Any) -> str | None:
        if self._broken is not None:
            return self._broken
        if self._fast is not None:
            if self._fast(args):
                return None
            hit = explain(self._schema, args)
            if hit is not None:
                where = "/".join(str(p) for p in hit[0])
                return f"{where}: {hit[1]}" if where else hit[1]
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
