"""Secrets never appear in a report.

docs/reports.md ("Secrets") lists what is removed: the values of the named environment
variables (``[REDACTED:NAME]``, :data:`ALWAYS_SECRET_ENV` always among them) and token
shapes (``[REDACTED]``), from every string before it is rendered and once more from every
finished report. A value shorter than :data:`MIN_SECRET_LEN` characters is not searched
for: masking every ``"1"`` or ``"on"`` would garble the report while protecting nothing.
Besides the raw value, its JSON-escaped form is removed too (a value with a quote or
backslash appears escaped inside rendered JSON).

Redaction runs before escaping and truncation, so a secret is never half-shown because a
long value was cut in the middle of it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gate.config import Config

MIN_SECRET_LEN = 4
"""Shortest environment value that is treated as a secret to search for."""

ALWAYS_SECRET_ENV: tuple[str, ...] = (
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "TOOLGATE_GITHUB_TOKEN",
    "INPUT_GITHUB-TOKEN",
    "INPUT_GITHUB_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "TOOLGATE_JUDGE_API_KEY",
)
"""Variables whose values are redacted whether or not the config names them."""

REDACTED = "[REDACTED]"

_PATTERN = re.compile(
    r"""
      (?P<shape>
          \bgh[pousr]_[A-Za-z0-9]{20,255}             # GitHub classic/OAuth/user/server/refresh
        | \bgithub_pat_[A-Za-z0-9_]{20,255}           # GitHub fine-grained PAT
        | \bsk-[A-Za-z0-9][A-Za-z0-9_\-]{15,255}      # OpenAI-style (sk-, sk-proj-, sk-ant-)
        | \b(?:AKIA|ASIA)[0-9A-Z]{16}\b               # AWS access key id
        | \bxox[abposr]-[A-Za-z0-9\-]{10,255}         # Slack
      )
    | (?P<word>\b(?i:bearer|token))(?P<space>\s+)(?P<cred>[A-Za-z0-9\-._~+/]{8,}=*)
    """,
    re.VERBOSE,
)
"""Token shapes, and credentials after "Bearer" or "token" — one pass over the text."""

_SHAPE_LITERALS = (
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "sk-",
    "AKIA",
    "ASIA",
    "xox",
)
"""The literal prefix of every token shape of :data:`_PATTERN` (case as it matches)."""
_TRIGGER = re.compile("|".join((*_SHAPE_LITERALS, "bearer", "token")), re.IGNORECASE)
"""Literal substrings every match contains."""
_WORD_THEN_SPACE = re.compile(r"(?i:bearer|token)(?=[\s\\])")
"""Where a credential could follow "Bearer"/"token" in JSON text (whitespace, or an
escape)."""


@dataclass(frozen=True, slots=True)
class Redactor:
    """Replaces secret values and token shapes in text; ``Redactor()`` does shapes only."""

    secrets: tuple[tuple[str, str], ...] = ()
    """(variable name, value) pairs, longest value first."""

    @classmethod
    def from_environ(cls, names: Iterable[str], environ: Mapping[str, str]) -> Redactor:
        """The values of ``names`` (and :data:`ALWAYS_SECRET_ENV`) that are set in ``environ``."""
        pairs: dict[str, str] = {}
        for name in (*ALWAYS_SECRET_ENV, *names):
            value = environ.get(name)
            if value and len(value.strip()) >= MIN_SECRET_LEN:
                pairs[value.strip()] = name
                if value != value.strip():
                    pairs[value] = name
        return cls.of(pairs.items())

    @classmethod
    def of(cls, value_name_pairs: Iterable[tuple[str, str]]) -> Redactor:
        forms: dict[str, str] = {}
        for value, name in value_name_pairs:
            if len(value) < MIN_SECRET_LEN:
                continue
            forms.setdefault(value, name)
            escaped = json.dumps(value, ensure_ascii=False)[1:-1]
            forms.setdefault(escaped, name)
        ordered = sorted(forms.items(), key=lambda kv: (-len(kv[0]), kv[0]))
        return cls(tuple((name, value) for value, name in ordered))

    def redact(self, text: str) -> str:
        for name, value in self.secrets:
            if value in text:
                text = text.replace(value, f"[REDACTED:{name}]")
        if not _TRIGGER.search(text):
            return text  # the usual case: a cheap literal scan instead of the full pattern
        return _PATTERN.sub(_sub, text)

    def __call__(self, text: str) -> str:
        return self.redact(text)

    def is_clean(self, text: str) -> bool:
        """True when :meth:`redact` would change no string inside ``text``, a serialised
        JSON document: a check of a whole runs line, much cheaper than walking its
        strings, that only ever errs towards "not clean".

        Every string of the document appears in its text unchanged except for escaped
        characters (which no token shape contains), and each secret's escaped form is
        among :attr:`secrets`. A token shape needs its literal prefix (``ghp_``, ``sk-``,
        ``AKIA``…); a credential after "Bearer" or "token" needs whitespace after the
        word — in JSON text a backslash, when the whitespace is escaped."""
        for _, value in self.secrets:
            if value in text:
                return False
        if any(lit in text for lit in _SHAPE_LITERALS):
            return False
        low = text.lower()
        return not (("token" in low or "bearer" in low) and _WORD_THEN_SPACE.search(text))


def _sub(m: re.Match[str]) -> str:
    if m.group("shape"):
        return REDACTED
    word, space, cred = m.group("word"), m.group("space"), m.group("cred")
    if word.lower() == "token" and not _looks_like_credential(cred):
        # prose such as "token limit exceeded" — but a token shape after it still goes
        return f"{word}{space}{_PATTERN.sub(_sub, cred)}"
    return f"{word}{space}{REDACTED}"


def _looks_like_credential(s: str) -> bool:
    """After the word "token", only something long with both letters and digits counts."""
    return len(s) >= 20 and any(c.isdigit() for c in s) and any(c.isalpha() for c in s)


def redactor_for(
    config: Config | None, environ: Mapping[str, str], names: Iterable[str] = ()
) -> Redactor:
    """The one way a redactor is built: the values in ``environ`` of ``names``, of the
    variables the config names (``reporting.secrets``, the OpenAI agent's and the judge's
    key variables: :meth:`Config.secret_env_names`) and of :data:`ALWAYS_SECRET_ENV` —
    for runs.jsonl as it is written and for every report."""
    all_names = [*names, *(config.secret_env_names() if config is not None else [])]
    return Redactor.from_environ(all_names, environ)
