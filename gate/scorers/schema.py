"""JSON-Schema validation of call arguments: one fast path, jsonschema as the authority.

``schema_validity`` (seed 003: the first deterministic check to add; seed 004: a missing
``order_id``, a string where a boolean is expected, an undeclared ``customer_email`` under
``additionalProperties: false``) validates each parsed call's arguments against the
``parameters`` schema of the tool it names.

* **The draft** is the schema's ``$schema`` when it names one, else **Draft 2020-12**.
  Formats are annotations, as the drafts say.
* **jsonschema decides.** Each distinct schema gets its draft's validator, compiled once
  (:class:`SchemaCache`, keyed by the schema's canonical JSON). An invalid instance's
  message is jsonschema's most relevant error (``best_match``), prefixed with the JSON
  path of the bad field: ``address/country: 'United Kingdom' does not match '^[A-Z]{2}$'``.
* **One fast path** (:mod:`gate.scorers._schema_fast`) compiles the common subset of
  keywords to closures. It may only say *valid*, and only for instances jsonschema
  accepts; when it cannot prove validity — the schema uses a keyword outside the subset,
  or the check fails — jsonschema decides. Most calls are valid, so most calls never
  reach jsonschema.
* **Bounded patterns.** ``pattern`` and ``patternProperties`` come from the dataset and
  run on strings a model wrote; stdlib ``re`` backtracks without bound (``^(a+)+$`` on
  ``"aaa…a!"`` takes hours). Both paths search with the ``regex`` module and a
  :data:`PATTERN_TIMEOUT_S` timeout: the validators are jsonschema's own drafts extended
  (``jsonschema.validators.extend``) with bounded ``pattern``, ``patternProperties`` and
  ``additionalProperties`` keywords. A search that does not finish in time is not a
  match: the arguments are invalid, with a message saying the search was stopped.
  ``unevaluatedProperties`` matches ``patternProperties`` through jsonschema internals
  that cannot be bounded, so a schema combining the two is refused (:func:`usage_problems`).
* **String rules.** ``enum`` and ``const`` compare by JSON equality (:attr:`StringRule.EXACT`).
  Under the ``bfcl`` normalisation profile (:attr:`StringRule.BFCL`) every string on both
  sides is first standardised the way BFCL's checker does (``bfcl_string``: no spaces,
  no ``,./-_*^``, lower case, ``'`` → ``"``), so ``"FAHRENHEIT"``, ``"fahrenheit."`` and
  ``" Saturday "`` are in an enum of ``"fahrenheit"`` and ``"saturday"``. Both paths run
  the same fold: the drafts' ``enum`` and ``const`` keywords are replaced in an extended
  validator class (``jsonschema.validators.extend``, as for the patterns), and the fast
  path folds the same way. Every other keyword is unchanged.
* **A schema that cannot be used** (not a valid schema for its draft, an unknown dialect, a
  ``$ref`` that resolves nowhere, the combination above) makes every call of that tool a
  ``SchemaMismatch`` whose detail says why; the dataset loader refuses such schemas with
  the same checks (:func:`dialect`, :func:`meta_errors`, :func:`usage_problems`).
"""

from __future__ import annotations

import difflib
import enum
import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

import referencing
import referencing.exceptions
import referencing.jsonschema
import regex
from jsonschema import (
    Draft6Validator,
    Draft7Validator,
    Draft201909Validator,
    Draft202012Validator,
    FormatChecker,
    ValidationError,
)
from jsonschema import exceptions as js_exceptions
from jsonschema import validators as js_validators
from jsonschema.protocols import Validator

from gate.jsonio import canonical, key_text
from gate.scorers import _schema_fast
from gate.scorers.normalize import bfcl_string

PATTERN_TIMEOUT_S = 0.05
"""Most time one schema pattern search may take (seconds); longer is not a match."""

JsonPath = tuple[str | int, ...]


# ─── bounded pattern search ───────────────────────────────────────────────────


@lru_cache(maxsize=4096)
def _compiled(pattern: str) -> regex.Pattern[str] | None:
    try:
        return regex.compile(pattern)
    except (regex.error, ValueError, RecursionError, OverflowError):
        return None


_MEMO: dict[tuple[str, str], bool | None] = {}
_MEMO_SIZE = 20_000
_MEMO_TEXT = 1024
"""Searches remembered, on texts of at most ``_MEMO_TEXT`` characters (bounded memory):
the samples of a case repeat their arguments, and the fast path and then jsonschema ask
about an invalid one twice. A stopped search, asked again, is undecided at once."""


def search(pattern: str, text: str) -> bool | None:
    """Whether ``pattern`` matches somewhere in ``text`` (``re.search`` semantics), run
    by the ``regex`` module within :data:`PATTERN_TIMEOUT_S`; None when undecided (the
    search was stopped, or the pattern is one the ``regex`` module cannot compile)."""
    key = (pattern, text)
    found = _MEMO.get(key, _UNKNOWN)
    if found is not _UNKNOWN:
        return found  # type: ignore[return-value]
    rx = _compiled(pattern)
    if rx is None:
        found = None
    else:
        try:
            found = rx.search(text, timeout=PATTERN_TIMEOUT_S) is not None
        except TimeoutError:
            found = None
    if len(text) <= _MEMO_TEXT:
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.clear()
        _MEMO[key] = found
    return found


_UNKNOWN = object()


def _undecided(pattern: str) -> str:
    if _compiled(pattern) is None:
        return f"{pattern!r} cannot be run by the bounded regular-expression engine"
    return f"the search for {pattern!r} was stopped after {PATTERN_TIMEOUT_S * 1000:.0f} ms"


# ─── string rules of enum and const ───────────────────────────────────────────


class StringRule(enum.Enum):
    """How ``enum`` and ``const`` compare strings (the dataset's normalisation profile)."""

    EXACT = "exact"
    """JSON equality, as the drafts define it (the ``default`` profile)."""
    BFCL = "bfcl"
    """Every string on both sides standardised by BFCL's ``standardize_string`` first, at
    any depth (the ``bfcl`` profile: BFCL compares strings so, enum values included)."""


def bfcl_fold(value: Any) -> Any:
    """``value`` with every string in it (list items and object values, at any depth)
    standardised as BFCL's checker does; object keys are left alone (BFCL keeps them)."""
    t = type(value)
    if t is str:
        return bfcl_string(value)
    if t is list:
        return [bfcl_fold(v) for v in value]
    if t is dict:
        return {k: bfcl_fold(v) for k, v in value.items()}
    return value


def _fold_of(rule: StringRule) -> _schema_fast.Fold | None:
    return bfcl_fold if rule is StringRule.BFCL else None


def in_enum(value: Any, enum: list[Any], strings: StringRule) -> bool:
    """Whether ``value`` is one of ``enum`` as the ``enum`` keyword compares under
    ``strings``."""
    fold = _fold_of(strings)
    if fold is None:
        return any(_schema_fast.json_equal(value, each) for each in enum)
    folded = fold(value)
    return any(_schema_fast.json_equal(folded, fold(each)) for each in enum)


def _folded_enum(
    validator: Any, enums: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not in_enum(instance, enums, StringRule.BFCL):
        yield ValidationError(f"{instance!r} is not one of {enums!r} (compared as BFCL does)")


def _folded_const(
    validator: Any, const: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not _schema_fast.json_equal(bfcl_fold(instance), bfcl_fold(const)):
        yield ValidationError(f"{const!r} was expected (compared as BFCL does)")


# ─── the authority: jsonschema's drafts with bounded pattern keywords ─────────
# Each function keeps jsonschema's own messages; only the search differs.


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "string"):
        return
    found = search(pattern, instance)
    if found is None:
        yield ValidationError(f"{instance!r} does not match {pattern!r} ({_undecided(pattern)})")
    elif not found:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for k, v in instance.items():
            found = search(pattern, k)
            if found is None:
                yield ValidationError(f"property name {k!r}: {_undecided(pattern)}")
            elif found:
                yield from validator.descend(v, subschema, path=k, schema_path=pattern)


def _additional_properties(original: Any) -> Any:
    def additional_properties(
        validator: Any, additional: Any, instance: Any, schema: Any
    ) -> Iterator[ValidationError]:
        if "patternProperties" not in schema:  # no pattern involved: jsonschema's own
            yield from original(validator, additional, instance, schema)
            return
        if not validator.is_type(instance, "object"):
            return
        properties = schema.get("properties", {})
        extras = []
        for k in instance:
            if k in properties:
                continue
            matched = False
            for pattern in schema["patternProperties"]:
                found = search(pattern, k)
                if found is None:
                    yield ValidationError(f"property name {k!r}: {_undecided(pattern)}")
                    return
                if found:
                    matched = True
                    break
            if not matched:
                extras.append(k)
        if validator.is_type(additional, "object"):
            for k in extras:
                yield from validator.descend(instance[k], additional, path=k)
        elif not additional and extras:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {patterns}")

    return additional_properties


_BOUNDED: dict[tuple[type[Validator], StringRule], type[Validator]] = {}


def _bounded(cls: type[Validator], strings: StringRule = StringRule.EXACT) -> type[Validator]:
    """``cls`` with bounded pattern keywords and the string rule's ``enum``/``const``
    (one class per draft and rule, made once)."""
    hit = _BOUNDED.get((cls, strings))
    if hit is not None:
        return hit
    keywords = cls.VALIDATORS
    overrides: dict[str, Any] = {"pattern": _pattern, "patternProperties": _pattern_properties}
    if strings is StringRule.BFCL:
        overrides |= {"enum": _folded_enum, "const": _folded_const}
    overrides = {k: v for k, v in overrides.items() if k in keywords}
    if "additionalProperties" in keywords:
        overrides["additionalProperties"] = _additional_properties(keywords["additionalProperties"])
    extended: type[Validator] = js_validators.extend(cls, overrides)
    _BOUNDED[(cls, strings)] = extended
    return extended


# ─── is the schema usable? (shared with the dataset loader) ───────────────────

_DEFAULT: type[Validator] = Draft202012Validator


def dialect(schema: Mapping[str, Any]) -> type[Validator] | None:
    """The validator class of the schema's draft (``$schema``, default Draft 2020-12);
    None for a ``$schema`` that is not a known dialect URI."""
    uri = schema.get("$schema")
    if uri is None:
        return _DEFAULT
    if not isinstance(uri, str):
        return None
    cls: type[Validator] | None = js_validators.validator_for(schema, default=None)
    return cls


def authority(schema: Mapping[str, Any], strings: StringRule = StringRule.EXACT) -> Validator:
    """The jsonschema validator that decides for ``schema`` (its draft, bounded patterns,
    the string rule), for a schema known to be valid (no meta-schema check)."""
    return _bounded(dialect(schema) or _DEFAULT, strings)(schema)


def _is_regex(pattern: object) -> bool:
    if not isinstance(pattern, str):
        return True
    re.compile(pattern)
    if _compiled(pattern) is None:
        raise re.error("the bounded regular-expression engine cannot compile it")
    return True


_META: dict[type[Validator], Validator] = {}


def _meta(cls: type[Validator]) -> Validator:
    """A validator of schemas of ``cls``'s draft: its meta-schema, with ``format: regex``
    checked by both engines (jsonschema's ``re`` and the bounded search's ``regex``)."""
    hit = _META.get(cls)
    if hit is not None:
        return hit
    formats = FormatChecker(formats=())
    formats.checkers.update(cls.FORMAT_CHECKER.checkers)
    formats.checks("regex", raises=re.error)(_is_regex)
    meta_cls = js_validators.validator_for(cls.META_SCHEMA, default=cls)
    meta: Validator = meta_cls(cls.META_SCHEMA, format_checker=formats)
    _META[cls] = meta
    return meta


def meta_errors(cls: type[Validator], schema: Any) -> list[ValidationError]:
    """Why ``schema`` is not a valid schema of ``cls``'s draft, by JSON path."""
    return sorted(_meta(cls).iter_errors(schema), key=lambda e: [str(p) for p in e.absolute_path])


_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_ONE = (
    "additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems",
    "contains", "propertyNames", "not", "if", "then", "else", "contentSchema",
)  # fmt: skip
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")


def _subschemas(schema: Any, path: JsonPath = ()) -> Iterator[tuple[JsonPath, Mapping[str, Any]]]:
    """Every subschema (object form) with its JSON path, ``schema`` first: the positions
    the drafts read as schemas, not the data inside ``enum``, ``const`` or ``default``."""
    if not isinstance(schema, Mapping):
        return
    stack: list[tuple[JsonPath, Any]] = [(path, schema)]
    while stack:
        at, node = stack.pop()
        if not isinstance(node, Mapping):
            continue
        yield at, node
        children: list[tuple[JsonPath, Any]] = []
        for key in _SCHEMA_MAPS:
            value = node.get(key)
            if isinstance(value, Mapping):
                children.extend(((*at, key, k), v) for k, v in value.items())
        deps = node.get("dependencies")
        if isinstance(deps, Mapping):
            children.extend(((*at, "dependencies", k), v) for k, v in deps.items())
        for key in _SCHEMA_ONE:
            if key in node:
                children.append(((*at, key), node[key]))
        for key in (*_SCHEMA_LISTS, "items", "extends"):
            value = node.get(key)
            if isinstance(value, list):
                children.extend(((*at, key, i), v) for i, v in enumerate(value))
            elif key in ("items", "extends") and value is not None:
                children.append(((*at, key), value))
        stack.extend(reversed(children))


def usage_problems(cls: type[Validator], schema: Any) -> list[tuple[JsonPath, str]]:
    """What makes a valid schema unusable for scoring, as (JSON path, message): a
    ``$ref`` to another document (the gate never fetches one) or to nothing in this
    one, and ``unevaluatedProperties`` with ``patternProperties`` (see the module
    docstring). Meant for schemas :func:`meta_errors` accepts."""
    problems: list[tuple[JsonPath, str]] = []
    spec = referencing.jsonschema.DRAFT202012.detect(schema)
    resolver = referencing.Registry().resolver_with_root(spec.create_resource(schema))
    scoped: list[JsonPath] = []  # subschemas with a base URI of their own
    pattern_props: JsonPath | None = None
    unevaluated: JsonPath | None = None
    for at, node in _subschemas(schema):
        if at and spec.id_of(node) is not None:
            scoped.append(at)
        for key in ("$ref", "$dynamicRef", "$recursiveRef"):
            ref = node.get(key)
            if not isinstance(ref, str):
                continue
            if not ref.startswith("#"):
                problems.append(
                    (
                        (*at, key),
                        'only local references ("#/...") are allowed: the gate never fetches '
                        "schemas",
                    )
                )
            elif key == "$ref" and not any(at[: len(s)] == s for s in scoped):
                try:
                    resolver.lookup(ref)
                except referencing.exceptions.Unresolvable:
                    hint = _nearest(ref, schema)
                    problems.append(((*at, key), f"{ref!r} points at nothing in this schema{hint}"))
        if "patternProperties" in node and pattern_props is None:
            pattern_props = (*at, "patternProperties")
        if "unevaluatedProperties" in node and unevaluated is None:
            unevaluated = (*at, "unevaluatedProperties")
    if (
        pattern_props is not None
        and unevaluated is not None
        and "unevaluatedProperties" in (cls.VALIDATORS)
    ):
        problems.append(
            (
                unevaluated,
                "cannot be combined with patternProperties (at "
                f"{_show(pattern_props) or 'the top'}): the time its patterns take on a "
                "model's property names cannot be bounded; use additionalProperties",
            )
        )
    return problems


def _nearest(ref: str, schema: Any) -> str:
    """`` (did you mean '#/...'?)`` naming the subschema whose pointer is nearest ``ref``."""
    pointers = [
        "#/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in at)
        for at, _ in _subschemas(schema)
        if at
    ]
    close = difflib.get_close_matches(ref, pointers, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _show(path: JsonPath) -> str:
    return "/".join(str(p) for p in path)


# ─── validators and their cache ───────────────────────────────────────────────


class ArgsValidator:
    """Validates one tool's arguments: ``error(args)`` is None when valid, else
    jsonschema's most relevant error, prefixed with the JSON path of the bad field.
    ``strings`` is how ``enum`` and ``const`` compare strings (:class:`StringRule`)."""

    __slots__ = ("_authority", "_broken", "_fast", "_seen", "fast_path")

    def __init__(self, schema: Any, strings: StringRule = StringRule.EXACT):
        self._seen: dict[str, str | None] = {}
        self._broken: str | None = None
        self._fast: _schema_fast.Check | None = None
        self._authority: Validator | None = None
        self.fast_path = False
        schema = schema if schema is not None else {}
        why = self._unusable(schema)
        if why is not None:
            self._broken = f"the tool's parameters schema is invalid: {why}"
            return
        cls = dialect(schema) if isinstance(schema, Mapping) else _DEFAULT
        assert cls is not None
        self._authority = _bounded(cls, strings)(schema)
        if cls in _FAST_DRAFTS:
            self._fast = _schema_fast.compile_check(
                schema, frozenset(cls.VALIDATORS), search, _fold_of(strings)
            )
        self.fast_path = self._fast is not None

    @staticmethod
    def _unusable(schema: Any) -> str | None:
        if isinstance(schema, bool):
            return None
        if not isinstance(schema, Mapping):
            return f"{schema!r} is not a schema"
        cls = dialect(schema)
        if cls is None:
            return f"unknown JSON Schema dialect {schema.get('$schema')!r}"
        errors = meta_errors(cls, schema)
        if errors:
            best = js_exceptions.best_match(errors)
            assert best is not None
            return _message(best)
        problems = usage_problems(cls, schema)
        if problems:
            at, message = problems[0]
            return f"{_show(at)}: {message}" if at else message
        return None

    def error(self, args: Any) -> str | None:
        """None when ``args`` are valid, else the error (remembered by the arguments' JSON
        text, keys in their order: the samples of a case repeat their calls, and the
        slow path's answer is the expensive one)."""
        try:
            key = key_text(args)
        except TypeError:  # not JSON (a caller's own object): not remembered
            return self._error(args)
        return self.error_text(args, key)

    def error_text(self, args: Any, key: str) -> str | None:
        """:meth:`error` of ``args``, whose JSON text (keys in their order) is ``key``."""
        seen = self._seen
        if key in seen:
            return seen[key]
        why = self._error(args)
        if len(seen) >= _SEEN_SIZE:
            seen.clear()
        seen[key] = why
        return why

    def _error(self, args: Any) -> str | None:
        fast = self._fast
        if fast is not None and fast(args):
            return None
        if self._authority is None:
            return self._broken
        try:
            err = js_exceptions.best_match(self._authority.iter_errors(args))
        except referencing.exceptions.Unresolvable as exc:
            return f"the tool's parameters schema is invalid: a $ref does not resolve ({exc})"
        except RecursionError:
            return _LOOPS
        except BaseException as exc:
            # Met inside a native extension (rpds, under referencing), the recursion limit
            # comes back as that extension's panic, a BaseException that says so.
            if _is_recursion_panic(exc):
                return _LOOPS
            raise
        return None if err is None else _message(err)


_LOOPS = "the tool's parameters schema is invalid: its references loop without end"


def _is_recursion_panic(exc: BaseException) -> bool:
    """pyo3's ``PanicException`` carrying a ``RecursionError`` (:meth:`ArgsValidator._error`)."""
    return type(exc).__name__ == "PanicException" and "RecursionError" in str(exc)


_SEEN_SIZE = 4096
"""Arguments whose answer one validator remembers (cleared when full: bounded memory)."""

_FAST_DRAFTS: frozenset[type[Validator]] = frozenset(
    {Draft6Validator, Draft7Validator, Draft201909Validator, Draft202012Validator}
)
"""Drafts the fast path knows (Draft 3 and 4 differ in ``integer``, ``exclusiveMinimum``,
``required``): the rest are validated by jsonschema alone."""


def _message(err: ValidationError) -> str:
    where = _show(tuple(err.absolute_path))
    return f"{where}: {err.message}" if where else str(err.message)


class SchemaCache:
    """One compiled :class:`ArgsValidator` per distinct schema (by canonical JSON), all
    with one :class:`StringRule`."""

    def __init__(self, strings: StringRule = StringRule.EXACT) -> None:
        self.strings = strings
        self._by_text: dict[str, ArgsValidator] = {}
        # id → (schema object kept alive, validator): skips re-serialising shared schemas.
        self._by_id: dict[int, tuple[Any, ArgsValidator]] = {}

    def get(self, schema: Mapping[str, Any] | None) -> ArgsValidator:
        hit = self._by_id.get(id(schema))
        if hit is not None and hit[0] is schema:
            return hit[1]
        key = canonical(schema)
        v = self._by_text.get(key)
        if v is None:
            v = ArgsValidator(schema, self.strings)
            self._by_text[key] = v
        self._by_id[id(schema)] = (schema, v)
        return v

    def __len__(self) -> int:
        return len(self._by_text)
