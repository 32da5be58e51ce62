"""Number formatting shared by every renderer (deterministic: fixed decimals, no locale).

* values: 3 decimals (``0.912``), ``n/a`` for a metric that did not apply;
* deltas: signed, with an arrow for the direction and a colour for the meaning —
  ``🟢`` better, ``🔴`` worse, by the metric's direction
  (``gate.scorers.registry.LOWER_IS_BETTER``);
  a change smaller than :data:`EPS` is "no change" (``·``);
* pass rates over samples: ``k/n`` with ``k = round(rate × n)``;
* bars: ``round(10 × r)`` full blocks of 10 (``███████░░░``).
"""

from __future__ import annotations

import math

from gate.scorers.registry import LOWER_IS_BETTER

EPS = 5e-4
"""Deltas smaller than this print as no change (below the 3rd decimal)."""


def num(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    return f"{value:.{digits}f}"


def count(value: float | None) -> str:
    if value is None:
        return "n/a"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.1f}"


def signed(value: float, digits: int = 3) -> str:
    if abs(value) < EPS:
        return f"{0:.{digits}f}"
    sign = "+" if value > 0 else "−"
    return f"{sign}{abs(value):.{digits}f}"


def is_worse(metric: str, delta: float | None) -> bool:
    if delta is None or abs(delta) < EPS:
        return False
    return delta > 0 if metric in LOWER_IS_BETTER else delta < 0


def delta(metric: str, value: float | None, *, plain: bool = False) -> str:
    """``+0.050 🟢▲`` (better), ``−0.080 🔴▼`` (worse), ``0.000 ·``; ``plain``: no emoji."""
    if value is None:
        return "—"
    if abs(value) < EPS:
        return f"{signed(value)} ·"
    arrow = "▲" if value > 0 else "▼"
    if plain:
        return f"{signed(value)} {arrow}"
    colour = "🔴" if is_worse(metric, value) else "🟢"
    return f"{signed(value)} {colour}{arrow}"


def rate_fraction(rate: float | None, n: int) -> str:
    """``2/3`` from a pass rate over ``n`` samples; a percentage when ``n`` is unknown."""
    if rate is None:
        return "—"
    if n <= 0:
        return f"{rate * 100:.0f}%"
    return f"{round(rate * n)}/{n}"


def bar(ratio: float | None, width: int = 10) -> str:
    if ratio is None:
        return "░" * width
    full = max(0, min(width, round(ratio * width)))
    return "█" * full + "░" * (width - full)


def pct_change(base: float | None, head: float | None) -> str:
    if base is None or head is None or base == 0:
        return ""
    change = (head - base) / base * 100
    if abs(change) < 0.05:
        return " (±0%)"
    return f" ({'+' if change > 0 else '−'}{abs(change):.1f}%)"
