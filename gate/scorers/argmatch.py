"""Argument matching: does an actual call's arguments satisfy an expected call's?

Used by the scorers (call accuracy, required-argument match, partial credit) and by the
runner to pick the frozen response that answers a call, so both agree on what
"these arguments match" means.

docs/scoring.md ("Argument matching and normalisation") defines the rule
(:func:`args_match`: ``exact=False`` is ``subset``, ``exact=True`` is ``exact`` and, with
``except_defaults``, ``exact_except_defaults``; the ``bfcl`` profile is always exact)
and the matchers (``ArgMatcher``). What only the code says: ``present`` is false for a
value that counts as absent (``null`` under ``null_equals_absent``), and an expected
``null`` then also accepts absence; under ``bfcl`` an expected ``""`` means "may be
omitted"; a ``$regex`` refused by one of its bounds never matches, and
:func:`explain_value` says which bound refused it; :func:`arg_diffs` names each refused
argument.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import field
from functools import lru_cache
from typing import Any

import regex

from gate.jsonio import canonical
from gate.model import ArgMatcher, ArgProblem, ArgsMatch, MatcherKind, value
from gate.scorers.normalize import MISSING, Normalizer, canon_text, parse_number, schema_hint
from gate.scorers.textsim import token_set_ratio

__all__ = [
    "REGEX_MAX_INPUT",
    "REGEX_MAX_PATTERN",
    "REGEX_TIMEOUT_S",
    "CompiledArgs",
    "Normalizer",
    "arg_diffs",
    "args_match",
    "compile_args",
    "explain_value",
    "match_flags",
    "match_value",
    "regex_fullmatch",
]

REGEX_MAX_PATTERN = 512
"""Longest ``$regex`` pattern accepted (characters)."""
REGEX_MAX_INPUT = 10_000
"""Longest string a ``$regex`` is run on (characters)."""
REGEX_TIMEOUT_S = 0.05
"""Most time one ``$regex`` match may take (seconds)."""


# ─── bounded regular expressions ──────────────────────────────────────────────


@lru_cache(maxsize=4096)
def _compile(pattern: str) -> regex.Pattern[str] | str:
    """The compiled pattern, or the reason it is refused."""
    if len(pattern) > REGEX_MAX_PATTERN:
        return f"pattern longer than {REGEX_MAX_PATTERN} characters"
    try:
        return regex.compile(pattern)
    except (regex.error, ValueError, RecursionError, OverflowError) as exc:
        return f"invalid pattern: {exc}"


def regex_fullmatch(pattern: str, text: str) -> tuple[bool, str | None]:
    """(matched, why not) for ``pattern`` matching the whole of ``text``, bounded in
    pattern length, input length and time (module docstring)."""
    compiled = _compile(pattern)
    if isinstance(compiled, str):
        return False, compiled
    if len(text) > REGEX_MAX_INPUT:
        return False, f"input longer than {REGEX_MAX_INPUT} characters"
    try:
        ok = compiled.fullmatch(text, timeout=REGEX_TIMEOUT_S) is not None
    except TimeoutError:
        return False, f"pattern took longer than {int(REGEX_TIMEOUT_S * 1000)} ms"
    return ok, None if ok else "does not match the pattern"


def regex_subject(value: Any) -> str | None:
    """The text a pattern is run on: a string, or a number's JSON text (else None)."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return canon_text(value)
    return None


# ─── one value ────────────────────────────────────────────────────────────────


def _present(value: Any, present: bool, norm: Normalizer) -> bool:
    return present and not norm.is_absent(value)


def explain_value(
    matcher: ArgMatcher, present: bool, value: Any, norm: Normalizer, *, arg: str | None = None
) -> str | None:
    """None when the actual value satisfies ``matcher``; otherwise why not, in words.

    ``present`` says whether the argument was sent; ``value`` is what was sent (ignored
    when not present); ``arg`` names the top-level argument, so that its schema-driven
    coercion, per-argument override and free-text setting apply.
    """
    n = norm.per_arg.get(arg, norm) if arg is not None else norm
    here = _present(value, present, n)
    kind = matcher.kind
    if kind is MatcherKind.ABSENT:
        return None if not here else "must be absent but was sent"
    if kind is MatcherKind.ANY:
        return None if here else "missing"
    if kind is MatcherKind.EQUAL:
        exp = matcher.value
        if not here:
            if n.is_absent(exp) or (n.bfcl and exp == "" and isinstance(exp, str)):
                return None
            return "missing"
        if arg is not None and arg in norm.free_text and isinstance(exp, str):
            if not isinstance(value, str):
                return "free text expected, got a non-string"
            sim = token_set_ratio(exp, value)
            if sim >= norm.free_text_min:
                return None
            return f"text similarity {sim:.2f} below {norm.free_text_min:.2f}"
        return None if norm.equal(exp, value, arg=arg) else "differs"
    if kind is MatcherKind.IN:
        if not here:
            for o in matcher.options:
                if n.is_absent(o) or (n.bfcl and o == "" and isinstance(o, str)):
                    return None
            return "missing"
        for o in matcher.options:
            if norm.equal(o, value, arg=arg):
                return None
        return "not one of the allowed values"
    if kind is MatcherKind.REGEX:
        if not here:
            return "missing"
        subject = regex_subject(value)
        if subject is None:
            return "not a string"
        ok, why = regex_fullmatch(matcher.pattern or "", subject)
        return None if ok else why
    if kind is MatcherKind.APPROX:
        if not here:
            return "missing"
        num = _number(value, n)
        if num is None:
            return "not a number"
        target = matcher.value
        if not isinstance(target, int | float) or isinstance(target, bool):
            return "expected value is not a number"
        diff = abs(num - target)
        return None if diff <= matcher.tol else f"off by {diff:g} (tolerance {matcher.tol:g})"
    raise AssertionError(f"unhandled matcher kind {kind!r}")  # pragma: no cover


def _number(value: Any, norm: Normalizer) -> float | int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str) and norm.numeric_strings and not norm.bfcl:
        return parse_number(value.strip())
    return None


def match_value(
    matcher: ArgMatcher, present: bool, value: Any, norm: Normalizer, *, arg: str | None = None
) -> bool:
    """Whether the actual value (``present``: whether it was sent) satisfies ``matcher``."""
    return explain_value(matcher, present, value, norm, arg=arg) is None


# ─── a whole argument object ──────────────────────────────────────────────────


def match_flags(mode: ArgsMatch) -> tuple[bool, bool]:
    """``(exact, except_defaults)`` for an expected call's ``args_match``."""
    match mode:
        case ArgsMatch.SUBSET:
            return False, False
        case ArgsMatch.EXACT:
            return True, False
        case ArgsMatch.EXACT_EXCEPT_DEFAULTS:
            return True, True


_NO_DEFAULT: Any = object()


def schema_default(norm: Normalizer, arg: str) -> Any:
    """The ``default`` the tool's schema declares for top-level argument ``arg``, or
    :data:`_NO_DEFAULT`."""
    prop = norm.properties.get(arg)
    if isinstance(prop, Mapping) and "default" in prop:
        return prop["default"]
    return _NO_DEFAULT


def _is_default(norm: Normalizer, arg: str, value: Any) -> bool:
    default = schema_default(norm, arg)
    return default is not _NO_DEFAULT and norm.equal(default, value, arg=arg)


def _extra_keys(
    expected: Mapping[str, ArgMatcher],
    actual: Mapping[str, Any],
    norm: Normalizer,
    except_defaults: bool = False,
) -> list[str]:
    """Actual arguments an exact expectation does not allow (sorted)."""
    out = []
    for k, v in actual.items():
        m = expected.get(k)
        if m is not None and m.kind is not MatcherKind.ABSENT:
            continue
        if norm.per_arg.get(k, norm).is_absent(v):
            continue
        if m is None and not (except_defaults and _is_default(norm, k, v)):
            out.append(k)
    return sorted(out)


def args_match(
    expected: Mapping[str, ArgMatcher],
    actual: Mapping[str, Any] | None,
    *,
    exact: bool,
    norm: Normalizer,
    except_defaults: bool = False,
) -> bool:
    """Whether ``actual`` satisfies every matcher of ``expected`` (module docstring).

    ``actual`` None (arguments that did not parse) never matches. ``exact`` (the
    expectation's ``args_match: exact``) also refuses arguments the expectation does not
    name, except — with ``except_defaults`` — those equal to their schema default; the
    ``bfcl`` profile is always exact.
    """
    return not arg_diffs(expected, actual, exact=exact, norm=norm, except_defaults=except_defaults)


def arg_diffs(
    expected: Mapping[str, ArgMatcher],
    actual: Mapping[str, Any] | None,
    *,
    exact: bool,
    norm: Normalizer,
    except_defaults: bool = False,
) -> tuple[ArgProblem, ...]:
    """Every argument that keeps ``actual`` from matching, as evidence (``actual`` only
    meaningful when ``present``); an extra argument says why it is refused."""
    if actual is None:
        return (ArgProblem(argument=None, expected=None, why="arguments did not parse"),)
    out: list[ArgProblem] = []
    for k in sorted(expected):
        m = expected[k]
        present = k in actual
        why = explain_value(m, present, actual.get(k), norm, arg=k)
        if why is None:
            continue
        value = actual.get(k)
        if (
            why == "differs"
            and m.kind is MatcherKind.EQUAL
            and isinstance(m.value, dict)
            and isinstance(value, dict)
        ):
            # Point at the members that differ (``address.country``), not the whole object.
            n = norm.per_arg.get(k, norm)
            nested = _object_diffs(k, m.value, value, n, norm.properties.get(k))
            if nested:
                out.extend(nested)
                continue
        out.append(
            ArgProblem(argument=k, expected=m.to_json(), why=why, actual=value, present=present)
        )
    if exact or norm.bfcl:
        defaults = except_defaults and not norm.bfcl
        for k in _extra_keys(expected, actual, norm, defaults):
            why = "not expected (the expectation lists its arguments exactly)"
            if defaults:
                default = schema_default(norm, k)
                why = (
                    "not expected, and the tool's schema gives it no default"
                    if default is _NO_DEFAULT
                    else f"not expected, and not the schema's default ({canonical(default)})"
                )
            out.append(
                ArgProblem(
                    argument=k,
                    expected={"$absent": True},
                    why=why,
                    actual=actual[k],
                    present=True,
                )
            )
    return tuple(out)


def _object_diffs(
    path: str, expected: Mapping[str, Any], actual: Mapping[str, Any], n: Normalizer, schema: Any
) -> list[ArgProblem]:
    """The members of two objects that differ after normalisation, by dotted path."""
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    out: list[ArgProblem] = []
    for key in sorted(set(expected) | set(actual)):
        sub = props.get(key) if isinstance(props, Mapping) else None
        e = expected.get(key)
        a = actual.get(key)
        if n.canon(e, sub) == n.canon(a, sub):
            continue
        where = f"{path}.{key}"
        if isinstance(e, dict) and isinstance(a, dict):
            out.extend(_object_diffs(where, e, a, n, sub))
            continue
        present = key in actual
        why = "missing" if not present else ("not expected" if key not in expected else "differs")
        out.append(ArgProblem(argument=where, expected=e, why=why, actual=a, present=present))
    return out


# ─── compiled expectations (the scorer's hot path) ────────────────────────────

_EQ, _IN, _OTHER = 0, 1, 2
_MISSING: Any = object()
_SEEN_SIZE = 256
"""Answers one compiled expectation remembers (cleared when full: bounded memory)."""


@value
class CompiledArgs:
    """An expected argument object compiled once per case: expected values are
    canonicalised up front and whether absence is acceptable is decided up front, so
    checking a call is a few dictionary look-ups and ``==`` on canonical forms.
    ``matches(actual)`` equals :func:`args_match` (a property test checks it)."""

    checks: tuple[tuple[str, int, Any, ArgMatcher, Normalizer, Any, bool, int], ...]
    exact: bool
    allowed: frozenset[str]
    norm: Normalizer
    except_defaults: bool = False
    _seen: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)
    """Answers by the actual arguments' JSON text (:meth:`matches_text`): the samples of a
    case repeat their calls."""

    def matches_text(self, actual: Mapping[str, Any], text: str) -> bool:
        """:meth:`matches` of ``actual``, whose JSON text (keys in their order) is ``text``."""
        seen = self._seen
        hit = seen.get(text)
        if hit is None:
            hit = self.matches(actual)
            if len(seen) >= _SEEN_SIZE:
                seen.clear()
            seen[text] = hit
        return hit

    def matches(self, actual: Mapping[str, Any] | None) -> bool:
        if actual is None:
            return False
        for name, mode, target, matcher, n, schema, absent_ok, hint in self.checks:
            v = actual.get(name, _MISSING)
            if v is _MISSING:
                if not absent_ok:
                    return False
                continue
            if v is None or (type(v) is str and not v and n.empty_string_equals_absent):
                # Counts as absent under the null / "" rules: the full rule decides.
                if explain_value(matcher, True, v, self.norm, arg=name) is not None:
                    return False
                continue
            if mode == _EQ:
                cv = n._string(v, hint) if type(v) is str else n.canon(v, schema)
                if cv != target:
                    return False
            elif mode == _IN:
                if n.canon(v, schema) not in target and (
                    explain_value(matcher, True, v, self.norm, arg=name) is not None
                ):
                    return False
            elif explain_value(matcher, True, v, self.norm, arg=name) is not None:
                return False
        if self.exact:
            allowed = self.allowed
            norm = self.norm
            for k, v in actual.items():
                if k not in allowed and not norm.per_arg.get(k, norm).is_absent(v):
                    if self.except_defaults and _is_default(norm, k, v):
                        continue
                    return False
        return True


def compile_args(
    expected: Mapping[str, ArgMatcher],
    *,
    exact: bool,
    norm: Normalizer,
    except_defaults: bool = False,
) -> CompiledArgs:
    """Compile an expected argument object for repeated matching (see :class:`CompiledArgs`)."""
    checks: list[tuple[str, int, Any, ArgMatcher, Normalizer, Any, bool, int]] = []
    for name in sorted(expected):
        m = expected[name]
        n = norm.per_arg.get(name, norm)
        schema = norm.properties.get(name)
        target: Any = None
        mode = _OTHER
        value = m.value
        if (
            m.kind is MatcherKind.EQUAL
            and value is not None
            and not n.is_absent(value)
            and not (n.bfcl and (value == "" or type(value) is float))
            and name not in norm.free_text
        ):
            # A plain expected value: equality of canonical forms (the BFCL int → float
            # exception and free text keep the full rule).
            mode = _EQ
            target = n.canon(value, schema)
        elif m.kind is MatcherKind.IN and not n.bfcl:
            mode = _IN
            canon: set[Hashable] = set()
            for o in m.options:
                canon.add(n.canon(o, schema))
            canon.discard(MISSING)
            target = frozenset(canon)
        absent_ok = explain_value(m, False, None, norm, arg=name) is None
        hint = schema_hint(schema) if schema is not None else 0
        checks.append((name, mode, target, m, n, schema, absent_ok, hint))
    allowed = frozenset(k for k, m in expected.items() if m.kind is not MatcherKind.ABSENT)
    return CompiledArgs(
        tuple(checks),
        exact or norm.bfcl,
        allowed,
        norm,
        exact and except_defaults and not norm.bfcl,
    )
