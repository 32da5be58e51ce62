"""Escaping of every string that came from a dataset, a model or a tool response.

A report mixes our own Markdown with text we do not control: case ids, tool names,
arguments the model made up, tool responses, free-text reasons. Rendered carelessly such
text can ping people (``@org/team``), embed images or links, close our hidden HTML marker,
break a table or a code fence, run a terminal escape sequence, or print a line that looks
like our own "✅ passed". The rules, applied in this order:

1. **redact** secrets (``gate.report.redact``) — before anything can cut a secret in half;
2. **make invisible characters visible**: C0/C1 controls, bidi overrides (U+202A–U+202E,
   U+2066–U+2069, "Trojan Source"), zero-width and other format characters and line/paragraph
   separators become ``\\uXXXX``; CR/LF become ``⏎`` — so data can never start a new line
   of its own (no forged headings, list items or verdict lines) nor reorder what is shown;
3. **truncate** to a limit, saying how much was cut (``…(+123 chars)``);
4. escape for the target (docs/reports.md, "Escaping", gives the Markdown rules):
   :func:`code` — an inline code span (the default for data values; in tables ``|``
   becomes ``\\|``; the fence one backtick longer than the longest run inside);
   :func:`text` — prose (entities, backslashes, zero-width spaces after ``@``, ``#`` and
   ``GH-`` before a digit, inside ``://`` and ``www.``, after ``:`` before a word
   character); :meth:`Escaper.console` — terminals: step 2 is all it takes;
   :meth:`Escaper.xml` — characters XML 1.0 forbids made visible.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from gate.report.redact import Redactor

ZWSP = "\u200b"
NEWLINE_MARK = "⏎"
_KEEP_FORMAT = {"\u200d"}  # ZWJ joins emoji sequences; harmless on its own

# Markdown punctuation with meaning inline; backslash-escaping any ASCII punctuation is
# valid CommonMark, so over-escaping is safe. `-` `+` `.` only matter at a line start and
# are handled there, to keep raw reports readable.
_MD_PUNCT = re.compile(r"([\\`*_{}\[\]()#|~$!^])")
_MENTION = re.compile(r"@(?=[\w-])")
_ISSUE_REF = re.compile(r"#(?=\d)")
_GH_REF = re.compile(r"(?i)\bGH-(?=\d)")
_SCHEME = re.compile(r":(?=//)")
_WWW = re.compile(r"(?i)\bwww(?=\.)")
_SHORTCODE = re.compile(r":(?=[\w+-])")
_LINE_START = re.compile(r"^(\s*)([-+](?=\s|$)|\d{1,9}(?=[.)](?:\s|$)))")
_XML_BAD = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

DEFAULT_LIMIT = 200


def visible(text: str, *, newline: str = NEWLINE_MARK) -> str:
    """Make control, format and separator characters visible; CR/LF → ``newline``."""
    if text.isprintable() and "\u200d" not in text:
        return text  # fast path: the usual case (isprintable is False for Cc/Cf/Zl/Zp/…)
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\r" and i + 1 < len(text) and text[i + 1] == "\n":
            out.append(newline)
            i += 2
            continue
        if ch in "\r\n":
            out.append(newline)
        elif ch == "\t":
            out.append(" ")
        elif ch in _KEEP_FORMAT or ch.isprintable() or ch == " ":
            out.append(ch)
        elif unicodedata.category(ch) in ("Zs",):
            out.append(" ")
        else:
            out.append(f"\\u{ord(ch):04x}")
        i += 1
    return "".join(out)


def truncate(text: str, limit: int) -> str:
    """At most about ``limit`` characters, saying how many were cut."""
    if limit <= 0 or len(text) <= limit:
        return text
    cut = len(text) - limit
    return f"{text[:limit]}…(+{cut} chars)"


def text(value: str, *, limit: int = DEFAULT_LIMIT, redactor: Redactor | None = None) -> str:
    """Inert Markdown prose for a data string (see the module docstring)."""
    s = (redactor or _NO_SECRETS).redact(value)
    s = truncate(visible(s), limit)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _MD_PUNCT.sub(r"\\\1", s)
    s = _MENTION.sub("@" + ZWSP, s)
    s = _ISSUE_REF.sub("#" + ZWSP, s)
    s = _GH_REF.sub(lambda m: m.group(0) + ZWSP, s)
    s = _SCHEME.sub(":" + ZWSP, s)
    s = _WWW.sub("www" + ZWSP, s)
    s = _SHORTCODE.sub(":" + ZWSP, s)
    return _LINE_START.sub(_escape_line_start, s)


def _escape_line_start(m: re.Match[str]) -> str:
    return f"{m.group(1)}\\{m.group(2)}" if m.group(2) in "-+" else m.group(0) + "\\"


def code(
    value: str,
    *,
    limit: int = DEFAULT_LIMIT,
    table: bool = True,
    redactor: Redactor | None = None,
) -> str:
    """An inline code span showing ``value`` literally (``table``: safe inside a table)."""
    s = (redactor or _NO_SECRETS).redact(value)
    s = truncate(visible(s), limit)
    if not s:
        return "*(empty)*"
    if table:
        s = s.replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    if s.startswith("`") or s.endswith("`") or (s.startswith(" ") and s.endswith(" ")):
        s = f" {s} "
    return f"{fence}{s}{fence}"


_XML_INVISIBLE = re.compile(
    "[\u061c\u200b\u200c\u200e\u200f\u202a-\u202e\u2060-\u2069\u2028\u2029\ufeff]"
)


# ─── values and calls as text (before escaping) ──────────────────────────────


def json_compact(value: Any) -> str:
    """One-line JSON, keys in their stored order (results.json is already canonical)."""
    if isinstance(value, str):
        # orjson escapes like json.dumps(ensure_ascii=False), several times faster; it
        # refuses lone surrogates, which the stdlib (below) writes as \ud800.
        try:
            return orjson.dumps(value).decode()
        except orjson.JSONEncodeError:
            pass
    elif value is None:
        return "null"
    elif isinstance(value, bool):
        return "true" if value else "false"
    elif isinstance(value, int):
        return str(value)
    try:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    except (TypeError, ValueError):
        return repr(value)


def call_repr(call: Any) -> str:
    """``name(arg=value, …)`` for a call in evidence, whatever its exact shape.

    Accepts ``{"name", "arguments"}`` (actual calls), ``{"name", "args"}`` (expected calls),
    a call that did not parse (``parse_ok: false`` with ``raw_arguments``), a bare name, or
    a list of those (a parallel batch, joined with ``‖``).
    """
    if isinstance(call, str):
        return call
    if isinstance(call, Sequence) and not isinstance(call, str | bytes):
        return " ‖ ".join(call_repr(c) for c in call)
    if not isinstance(call, Mapping):
        return json_compact(call)
    name = call.get("name") or call.get("tool") or "?"
    if call.get("parse_ok") is False or ("arguments" in call and call["arguments"] is None):
        raw = call.get("raw_arguments")
        return f"{name}(⚠ unparsed: {raw if isinstance(raw, str) else json_compact(raw)})"
    args = call.get("arguments", call.get("args"))
    if args is None:
        return f"{name}()"
    if isinstance(args, Mapping):
        inner = ", ".join(f"{k}={json_compact(v)}" for k, v in args.items())
        return f"{name}({inner})"
    return f"{name}({json_compact(args)})"


def calls_repr(calls: Any) -> str:
    """A list of calls, comma-separated; ``—`` for none."""
    if calls is None:
        return "—"
    if isinstance(calls, Sequence) and not isinstance(calls, str | bytes):
        if not calls:
            return "(no calls)"
        return ", ".join(call_repr(c) for c in calls)
    return call_repr(calls)


_NO_SECRETS = Redactor()


@dataclass(frozen=True, slots=True)
class Escaper:
    """The escaping functions with one redactor and one length limit bound in."""

    redactor: Redactor = field(default_factory=Redactor)
    limit: int = DEFAULT_LIMIT

    def text(self, value: Any, limit: int | None = None) -> str:
        return text(_s(value), limit=self.limit if limit is None else limit, redactor=self.redactor)

    def code(self, value: Any, limit: int | None = None, *, table: bool = True) -> str:
        return code(
            _s(value),
            limit=self.limit if limit is None else limit,
            table=table,
            redactor=self.redactor,
        )

    def console(self, value: Any, limit: int | None = None) -> str:
        """A data string safe to print on a terminal (one line, no escape sequences)."""
        lim = self.limit if limit is None else limit
        return truncate(visible(self.redactor.redact(_s(value))), lim)

    def xml(self, value: Any, limit: int = 0) -> str:
        """A string XML 1.0 can hold (ElementTree escapes ``& < > "``), with bidi controls
        and zero-width characters made visible too: CI tools show JUnit names and messages
        as text, where a right-to-left override would reorder what a reviewer reads."""
        s = self.redactor.redact(_s(value))
        s = _XML_BAD.sub(lambda m: f"\\u{ord(m.group(0)):04x}", s)
        s = _XML_INVISIBLE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", s)
        return truncate(s, limit)


def _s(value: Any) -> str:
    return value if isinstance(value, str) else json_compact(value)
