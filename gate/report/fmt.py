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

from gate.model import GateOp
from gate.scorers.registry import COST_METRICS, LOWER_IS_BETTER

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


# ─── what a sample cost (the Cost group) ─────────────────────────────────────


def cost(metric: str, value: float | None) -> str:
    """A cost metric's value: ``cost`` with 4 significant digits, counts with 2 decimals
    below 10, 1 below 100, else whole with thousands separators."""
    if value is None or not math.isfinite(value):
        return "n/a"
    if metric == "cost":
        return f"{value:.4g}"
    if abs(value) < 10:
        return f"{value:.2f}"
    if abs(value) < 100:
        return f"{value:.1f}"
    return f"{value:,.0f}"


def percent(fraction: float) -> str:
    """``+31.2 %``, ``−4.0 %``, ``±0 %``."""
    if abs(fraction) < 0.0005:
        return "±0 %"
    return f"{'+' if fraction > 0 else '−'}{abs(fraction) * 100:.1f} %"


def cost_change(
    metric: str,
    change: float | None,
    relative: float | None,
    beyond_noise: bool,
    *,
    plain: bool = False,
) -> str:
    """A cost metric's change in per cent of the base, with the arrow and colour of a
    change beyond noise (``+31.2 % 🔴▲``) or the words "within noise" (``+0.4 % ▲
    (within noise)``); a base of 0 gives the change itself."""
    if change is None:
        return "—"
    shown = percent(relative) if relative is not None else f"+{cost(metric, change)}"
    if abs(change) < 1e-12:
        return f"{shown} ·"
    arrow = "▲" if change > 0 else "▼"
    if not beyond_noise:
        return f"{shown} {arrow} (within noise)"
    if plain:
        return f"{shown} {arrow}"
    return f"{shown} {'🔴' if change > 0 else '🟢'}{arrow}"


def bound(op: str, threshold: float, metric: str) -> str:
    """A gate's bound: ``≥ 0.850``, ``≤ 4,000``, ``≤ +15 %`` (``max_increase``)."""
    if op == GateOp.MAX_INCREASE:
        return f"≤ {percent(threshold)}"
    shown = cost(metric, threshold) if metric in COST_METRICS else num(threshold)
    return f"{'≥' if op == GateOp.MIN else '≤'} {shown}"


def missed(op: str, value: float | None, threshold: float, metric: str) -> str:
    """A missed gate's figures: ``0.423 < 0.800``, ``4,102 > 4,000``, ``+31.2 % > +15 %``."""
    if op == GateOp.MAX_INCREASE:
        return f"{'n/a' if value is None else percent(value)} > {percent(threshold)}"
    show = (lambda v: cost(metric, v)) if metric in COST_METRICS else num
    return f"{show(value)} {'<' if op == GateOp.MIN else '>'} {show(threshold)}"
