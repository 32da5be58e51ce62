"""Normalisation of argument values before comparison (docs/dataset.md).

Most argument "misses" logged in practice are normalisation bugs in the scorer, not model
errors (seed 003). A :class:`Normalizer` turns a JSON value into a *canonical form*: a
hashable value that compares equal exactly when the two JSON values should count as the
same argument. Equality is then plain ``==`` on canonical forms, which makes matching
cheap and lets canonical forms be cached and used as dictionary keys (duplicate-call
detection, validation memos).

The rules of the ``default`` profile, each a ``NormalizeConfig`` switch, are in
docs/scoring.md ("Argument matching and normalisation"). What only the code says: a
slashed date is read only when unambiguous (one part above 12); epoch numbers are never
dates; ``numeric_strings`` does not read ``"007"`` as a number; zero-decimal currencies
(JPY, KRW, …) are not scaled to minor units; ``null`` and ``""`` count as absent for
object members at any depth too; an ID prefix is stripped case-insensitively when
``case`` is on.

String rules apply in this order: whitespace, currency, date, ID prefix, number, case.

The ``bfcl`` profile replaces every rule above with the Berkeley Function Calling
Leaderboard's AST checker (``docs/interop.md``): strings are standardised as
``lower(remove(s, " ,./-_*^")).replace("'", '"')``; numbers equal only numbers of the same
kind (int with int, float with float) except that, at the top level, an integer matches an
expected float; lists compare in order; objects need the same keys; an expected ``""``
(plain or among ``$in`` options) means "may be omitted"; every expected call is exact
(``required_args_only: false``). A top-level argument whose schema declares several types
(``null`` aside) compares its strings as written, at any depth: BFCL standardises a string
only where the parameter is declared a string, and compares a value of its answer's own
type but not the declared one (its "variable" rule) exactly; the importer widens a
parameter's type to admit such answers (docs/interop.md).
"""

from __future__ import annotations

import datetime as _dt
import operator
import re
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from gate.config import NormalizeConfig

# ─── canonical atoms ──────────────────────────────────────────────────────────


class _Atom:
    """A canonical value that must not compare equal to any number (JSON booleans, BFCL
    floats). Instances are interned, so identity is equality."""

    __slots__ = ("kind", "value")

    def __init__(self, kind: str, value: Any):
        self.kind = kind
        self.value = value

    def __repr__(self) -> str:
        return f"<{self.kind} {self.value!r}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Atom) and other.kind == self.kind and other.value == self.value

    def __hash__(self) -> int:
        return hash((self.kind, self.value))


TRUE = _Atom("bool", True)
FALSE = _Atom("bool", False)


class _Obj(tuple):  # type: ignore[type-arg]
    """Canonical form of a JSON object: sorted ``(key, canon)`` pairs. A distinct type so
    that an object never equals an array of pairs."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Obj) and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(("obj", tuple.__hash__(self)))


MISSING: Any = _Atom("missing", None)
"""Canonical form of an absent argument (also ``null`` under ``null_equals_absent``)."""


# ─── string rules ─────────────────────────────────────────────────────────────

_WS = re.compile(r"\s+")
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for m in names
}
_ISO_DATE = re.compile(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})")
_DMY_DOT = re.compile(r"(\d{1,2})\.(\d{1,2})\.(\d{4})")
_SLASHED = re.compile(r"(\d{1,2})[/-](\d{1,2})[/-](\d{4})")
_D_MON_Y = re.compile(r"(\d{1,2})(?:st|nd|rd|th)? ([A-Za-z]{3,9})\.?,? (\d{4})")
_MON_D_Y = re.compile(r"([A-Za-z]{3,9})\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})")
_ISO_DATETIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6})\d*)?)?"
    r"\s?(Z|z|UTC|[+-]\d{2}:?\d{2})?"
)
_CURRENCY_SIGNS = {"$": "USD", "£": "GBP", "€": "EUR", "¥": "JPY", "₹": "INR", "₩": "KRW"}
_ZERO_DECIMAL = frozenset({"JPY", "KRW", "VND", "CLP", "ISK", "HUF", "TWD", "UGX", "XAF", "XOF"})
_MONEY = re.compile(
    r"(?P<sign1>-)?(?P<pre>[$£€¥₹₩]|[A-Z]{3} ?)?(?P<sign2>-)?"
    r"(?P<num>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<frac>\d{1,3}))?"
    r"(?P<post> ?[A-Z]{3}|[$£€¥₹₩])?"
)
_BFCL_REMOVE = re.compile(r"[ ,./\-_*^]")


def _date(y: int, m: int, d: int) -> str | None:
    try:
        return _dt.date(y, m, d).isoformat()
    except ValueError:
        return None


def parse_date(s: str) -> str | None:
    """The ISO 8601 form of a date or date-time string, or None if it is neither.

    Accepted forms are listed in the module docstring; anything ambiguous or invalid
    (``05/06/2026``, ``2026-02-30``) gives None and the string is compared as text.
    """
    n = len(s)
    if n < 8 or n > 40 or not s[0].isalnum():
        return None
    # Every accepted form starts with a year and a separator (ISO) or ends with a
    # separator and a year (the others): a cheap test that spares most strings the
    # expressions (``str.isdigit`` accepts every ``\d`` and more, so nothing is lost).
    if not (s[:4].isdigit() and s[4] in "-/.") and not (s[-4:].isdigit() and s[-5] in "./- "):
        return None
    m = _ISO_DATETIME.fullmatch(s)
    if m:
        y, mo, d, hh, mi = (int(m.group(i)) for i in range(1, 6))
        ss = int(m.group(6) or 0)
        frac = (m.group(7) or "").ljust(6, "0") if m.group(7) else ""
        try:
            t = _dt.datetime(y, mo, d, hh, mi, ss, int(frac) if frac else 0)
        except ValueError:
            return None
        tz = m.group(8)
        if tz and tz not in ("Z", "z", "UTC"):
            sign = 1 if tz[0] == "+" else -1
            digits = tz[1:].replace(":", "")
            offset = _dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
            t = t - sign * offset
        text = t.strftime("%Y-%m-%dT%H:%M:%S")
        if t.microsecond:
            text += f".{t.microsecond:06d}"
        return text + ("Z" if tz else "")
    m = _ISO_DATE.fullmatch(s)
    if m:
        return _date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    m = _DMY_DOT.fullmatch(s)
    if m:
        return _date(int(m.group(3)), int(m.group(2)), int(m.group(1)))
    m = _SLASHED.fullmatch(s)
    if m:
        a, b, y = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if a > 12 >= b:
            return _date(y, b, a)
        if b > 12 >= a:
            return _date(y, a, b)
        if a == b:
            return _date(y, a, b)
        return None  # 05/06/2026: day-first or month-first? Never guess.
    m = _D_MON_Y.fullmatch(s)
    if m:
        mon = _MONTHS.get(m.group(2).lower())
        return _date(int(m.group(3)), mon, int(m.group(1))) if mon else None
    m = _MON_D_Y.fullmatch(s)
    if m:
        mon = _MONTHS.get(m.group(1).lower())
        return _date(int(m.group(3)), mon, int(m.group(2))) if mon else None
    return None


def parse_money(s: str) -> int | None:
    """Integer minor units of a money string that carries a currency sign or ISO code
    (``£12.50`` → 1250, ``12.50 EUR`` → 1250, ``¥500`` → 500), else None."""
    m = _MONEY.fullmatch(s)
    if not m:
        return None
    pre = (m.group("pre") or "").strip()
    post = (m.group("post") or "").strip()
    if bool(pre) == bool(post):  # exactly one currency marker: "12.50" alone is a number
        return None
    code = _CURRENCY_SIGNS.get(pre or post, pre or post)
    whole = int(m.group("num").replace(",", ""))
    frac = m.group("frac") or ""
    digits = 0 if code in _ZERO_DECIMAL else 2
    if len(frac) > digits:
        return None
    minor: int = whole * 10**digits + (int(frac.ljust(digits, "0")) if digits else 0)
    negative = bool(m.group("sign1")) or bool(m.group("sign2"))
    return -minor if negative else minor


def parse_number(s: str) -> int | float | None:
    """The number a string holds in JSON syntax (``"5"`` → 5, ``"2.50"`` → 2.5), else None."""
    if not _JSON_NUMBER.fullmatch(s):
        return None
    if "." in s or "e" in s or "E" in s:
        value = float(s)
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    return int(s)


def bfcl_string(s: str) -> str:
    """BFCL's ``standardize_string``: drop `` ,./-_*^``, lower-case, ``'`` → ``"``."""
    return _BFCL_REMOVE.sub("", s).lower().replace("'", '"')


# ─── the normaliser ───────────────────────────────────────────────────────────

_STRING_ONLY = 1
"""Schema hint: the value is declared a string (and not a number): no numeric coercion."""


def schema_hint(schema: Any) -> int:
    """1 when the (sub-)schema declares a string and not a number (no numeric coercion)."""
    # `type() is dict` first: an ABC isinstance check costs more than the rest.
    if type(schema) is not dict and not isinstance(schema, Mapping):
        return 0
    t = schema.get("type")
    if t == "string":
        return _STRING_ONLY
    if isinstance(t, list) and "string" in t and "number" not in t and "integer" not in t:
        return _STRING_ONLY
    return 0


@dataclass(frozen=True, slots=True, eq=False)
class Normalizer:
    """Turns JSON values into canonical forms that compare equal when the values should
    count as the same argument (rules in the module docstring).

    Build one with :meth:`from_config`; :meth:`for_tool` binds a tool's JSON Schema (for
    schema-driven numeric coercion), its per-tool and per-argument overrides and its
    free-text arguments. Instances are immutable and safe to share across threads.
    """

    bfcl: bool = False
    case: bool = True
    whitespace: bool = True
    dates: bool = True
    numeric_strings: bool = True
    null_equals_absent: bool = True
    empty_string_equals_absent: bool = False
    id_prefixes: tuple[str, ...] = ()
    currency_minor_units: bool = False
    properties: Mapping[str, Any] = field(default_factory=dict)
    """The tool schema's ``properties`` (argument name → sub-schema), for coercion."""
    per_arg: Mapping[str, Normalizer] = field(default_factory=dict)
    """Per-argument overrides (config ``scoring.tools.<tool>.args.<arg>``)."""
    free_text: frozenset[str] = frozenset()
    """Arguments compared by lexical similarity (``free_text_similarity``), not equality."""
    free_text_min: float = 0.5
    bfcl_exact: bool = False
    """Under ``bfcl``: strings compare as written, at any depth (BFCL's "variable" rule, for
    an argument whose schema declares several types; see :meth:`for_tool`)."""

    @classmethod
    def from_config(
        cls,
        cfg: NormalizeConfig | None = None,
        *,
        free_text: frozenset[str] | tuple[str, ...] = (),
        free_text_min: float = 0.5,
    ) -> Normalizer:
        """The normaliser a :class:`~gate.config.NormalizeConfig` describes (defaults when
        None)."""
        cfg = cfg or NormalizeConfig()
        prefixes = tuple(sorted(cfg.id_prefixes, key=len, reverse=True))  # longest first
        return cls(
            bfcl=cfg.profile == "bfcl",
            case=cfg.case,
            whitespace=cfg.whitespace,
            dates=cfg.dates,
            numeric_strings=cfg.numeric_strings,
            null_equals_absent=cfg.null_equals_absent,
            empty_string_equals_absent=cfg.empty_string_equals_absent,
            id_prefixes=tuple(p.casefold() for p in prefixes) if cfg.case else prefixes,
            currency_minor_units=cfg.currency_minor_units,
            free_text=frozenset(free_text),
            free_text_min=free_text_min,
        )

    def for_tool(
        self,
        parameters: Mapping[str, Any] | None = None,
        *,
        override: NormalizeConfig | None = None,
        args: Mapping[str, NormalizeConfig] | None = None,
        free_text: frozenset[str] | tuple[str, ...] | None = None,
    ) -> Normalizer:
        """This normaliser specialised for one tool: its schema's properties, a per-tool
        override of the rules, per-argument overrides and its free-text arguments."""
        base = (
            Normalizer.from_config(override, free_text_min=self.free_text_min)
            if override is not None
            else self
        )
        props = parameters.get("properties") if isinstance(parameters, Mapping) else None
        props = props if isinstance(props, Mapping) else {}
        per_arg = {
            name: replace(
                Normalizer.from_config(c, free_text_min=self.free_text_min), properties={}
            )
            for name, c in (args or {}).items()
        }
        if base.bfcl:
            for name, sub in props.items():
                if name not in per_arg and _several_types(sub):
                    per_arg[name] = replace(base, properties={}, bfcl_exact=True)
        return replace(
            base,
            properties=props,
            per_arg=per_arg,
            free_text=frozenset(free_text) if free_text is not None else self.free_text,
        )

    # ── canonical forms ────────────────────────────────────────────────────────

    def arg(self, name: str) -> Normalizer:
        """The normaliser for one argument (its override, or this one)."""
        return self.per_arg.get(name, self)

    def is_absent(self, value: Any) -> bool:
        """Whether a present value counts as absent (``null`` / ``""`` rules)."""
        if value is None:
            return self.null_equals_absent
        if value == "" and isinstance(value, str):
            return self.empty_string_equals_absent
        return False

    def canon(self, value: Any, schema: Any = None) -> Hashable:
        """Canonical form of any JSON value; ``schema`` is its JSON (sub-)schema, if known."""
        if value is None:
            return MISSING if self.null_equals_absent else None
        t = type(value)
        if t is str:
            return self._string(value, schema_hint(schema) if schema is not None else 0)
        if t is bool:
            return TRUE if value else FALSE
        if t is int or t is float:
            if self.bfcl:
                return _Atom("float", value) if t is float else int(value)
            if schema is not None and self.numeric_strings and schema_hint(schema) == _STRING_ONLY:
                # The schema says text: compare a number the dataset wrote as its text.
                return self._string(canon_text(value), _STRING_ONLY)
            return value  # type: ignore[no-any-return]
        if t is dict:
            props = schema.get("properties") if type(schema) is dict else None
            items = []
            for k, v in value.items():
                if v is None and self.null_equals_absent:
                    continue
                if v == "" and self.empty_string_equals_absent and type(v) is str:
                    continue
                sub = props.get(k) if type(props) is dict else None
                items.append((k, self.canon(v, sub)))
            items.sort(key=_first)  # (operator.itemgetter: no Python call per pair)
            return _Obj(items)
        if t is list or t is tuple:
            sub = schema.get("items") if type(schema) is dict else None
            return tuple([self.canon(v, sub) for v in value])
        # Anything else (not produced by a JSON decoder) compares by its repr.
        return ("?", repr(value))

    def _string(self, s: str, hint: int) -> Hashable:
        if self.bfcl:
            return s if self.bfcl_exact else bfcl_string(s)
        return _canon_string(
            s,
            hint,
            self.case,
            self.whitespace,
            self.dates,
            self.numeric_strings,
            self.currency_minor_units,
            self.id_prefixes,
        )

    def equal(self, expected: Any, actual: Any, *, arg: str | None = None) -> bool:
        """Whether two JSON values count as the same (``arg``: the top-level argument they
        belong to, for its schema and override)."""
        if arg is not None:
            norm = self.per_arg.get(arg, self)
            schema = self.properties.get(arg)
            if norm.bfcl and type(expected) is float and type(actual) is int:
                # BFCL converts int → float for float parameters, at the top level only.
                return float(actual) == expected
            return norm.canon(expected, schema) == norm.canon(actual, schema)
        return self.canon(expected) == self.canon(actual)


def _several_types(schema: Any) -> bool:
    """Whether a (sub-)schema's ``type`` lists more than one type besides ``null``."""
    t = schema.get("type") if isinstance(schema, Mapping) else None
    return isinstance(t, list) and len([x for x in t if x != "null"]) > 1


_first = operator.itemgetter(0)


@lru_cache(maxsize=65536)
def _canon_string(
    s: str,
    hint: int,
    case: bool,
    whitespace: bool,
    dates: bool,
    numeric: bool,
    currency: bool,
    prefixes: tuple[str, ...],
) -> Hashable:
    # Cached: the same expected and actual strings recur across samples and cases.
    if whitespace:
        s = _WS.sub(" ", s).strip()
    if currency:
        money = parse_money(s)
        if money is not None:
            return money
    if dates:
        d = parse_date(s)
        if d is not None:
            return d
    if prefixes:
        folded = s.casefold() if case else s
        for p in prefixes:
            if folded.startswith(p) and len(s) > len(p):
                s = s[len(p) :]
                break
    if numeric and hint != _STRING_ONLY:
        num = parse_number(s)
        if num is not None:
            return num
    return s.casefold() if case else s


def canon_text(value: Any) -> str:
    """A number as the text a string-typed argument would hold (``5`` → ``"5"``)."""
    if type(value) is float and value.is_integer():
        return str(int(value))
    return str(value)
