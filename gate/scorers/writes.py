"""Judging effects: what a run wrote (docs/scoring.md, "Judging effects", says when a case
judged by its effects passes and defines the four metrics, n/a for a case judged by its
calls); each tool's effect comes from :mod:`gate.scorers.effects`.

The matching is the calls' own (:mod:`gate.scorers.analysis`: Hopcroft–Karp over the
argument matchers), run over the subsequence of the writes made; the analysis holds it
as an :class:`~gate.scorers.facts.EffectsMatch`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gate.scorers.prose import Scored, plural

if TYPE_CHECKING:
    from gate.scorers.facts import Analysis, EffectsMatch

__all__ = [
    "BY_CALLS",
    "score_extra_writes",
    "score_missing_writes",
    "score_write_precision",
    "score_write_recall",
    "summary",
]


def summary(fx: EffectsMatch) -> str:
    """The evidence's one line for a case judged by its effects: ``1 of 2 expected writes
    made; 1 extra write; 1 failed write (made nothing)``."""
    parts = [f"{fx.m} of {fx.n_e} expected writes made"]
    if fx.n_a > fx.m:
        parts.append(plural(fx.n_a - fx.m, "extra write"))
    if fx.reads_missing:
        parts.append(plural(fx.reads_missing, "required read") + " not made")
    if fx.failed:
        parts.append(plural(len(fx.failed), "failed write") + " (made nothing)")
    return "; ".join(parts)


# ─── the metrics (registered in gate.scorers.registry) ────────────────────────

BY_CALLS = "n/a: the case is judged by its calls (pass_on: calls)"


def score_write_precision(an: Analysis) -> Scored:
    """Matched writes ÷ writes made (none made: 1.0 when none was expected, else 0.0)."""
    fx = an.effects
    if fx is None:
        return None, BY_CALLS
    if fx.n_a == 0:
        return (1.0, "no write made, none expected") if fx.n_e == 0 else (0.0, "no write made")
    v = fx.m / fx.n_a
    return v, lambda: f"{fx.m} of {fx.n_a} writes made were expected"


def score_write_recall(an: Analysis) -> Scored:
    """Matched writes ÷ expected writes (none expected: 1.0 when none was made, else 0.0)."""
    fx = an.effects
    if fx is None:
        return None, BY_CALLS
    if fx.n_e == 0:
        return (
            (1.0, "no write expected, none made")
            if fx.n_a == 0
            else (0.0, lambda: f"no write expected, {fx.n_a} made")
        )
    v = fx.m / fx.n_e
    return v, lambda: f"{fx.m} of {fx.n_e} expected writes made"


def score_extra_writes(an: Analysis) -> Scored:
    """Writes made that no expected write holds (count)."""
    fx = an.effects
    if fx is None:
        return None, BY_CALLS
    extra = fx.n_a - fx.m
    return float(extra), (lambda: f"{extra} write(s) made that the case does not expect")


def score_missing_writes(an: Analysis) -> Scored:
    """Expected writes not made (count); a write whose response was an error made nothing."""
    fx = an.effects
    if fx is None:
        return None, BY_CALLS
    missing = fx.n_e - fx.m
    return float(missing), (lambda: f"{missing} expected write(s) not made")
