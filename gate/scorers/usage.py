"""What a sample cost: tokens, money, tool calls and assistant turns (docs/scoring.md,
"What a sample cost", defines each metric and when it is n/a: never 0 for usage not
reported).

In a conversation ``tool_calls`` and ``steps`` are summed over its user turns
(:attr:`gate.scorers.registry.Metric.additive`). A sample without an answer has none of
them (:func:`gate.scorers.sample.earns_nothing`). The token metrics and ``cost`` are not
read from the scoring view — identical runs are scored once, and their usage may differ —
but filled in for every sample from its own usage (:func:`usage_values`): the registry's
functions for them only say so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from gate.scorers.pricing import Price
from gate.scorers.prose import Scored, plural

if TYPE_CHECKING:
    from gate.scorers.facts import Analysis

USAGE_METRICS: tuple[str, ...] = ("prompt_tokens", "completion_tokens", "total_tokens", "cost")
"""The metrics taken from each sample's own usage, in this order (:func:`usage_values`)."""


def _number(v: object) -> float | None:
    """A count as a float (``None``: not a number; a bool is not one)."""
    return None if isinstance(v, bool) or not isinstance(v, int | float) else float(v)


def usage_values(
    usage: Mapping[str, int | float] | None, price: Price | None
) -> tuple[float | None, ...]:
    """The values of :data:`USAGE_METRICS` for one sample's usage (module docstring).
    A count missing under its own name is read under the name other APIs give it
    (``input_tokens``, ``output_tokens``: Anthropic's Messages, OpenAI's Responses)."""
    if not usage:
        return (None, None, None, None)
    get = usage.get
    p = get("prompt_tokens")
    if p is None:
        p = get("input_tokens")
    c = get("completion_tokens")
    if c is None:
        c = get("output_tokens")
    t = get("total_tokens")
    # whole counts, the common case, without a call each
    prompt = float(p) if type(p) is int else None if p is None else _number(p)
    completion = float(c) if type(c) is int else None if c is None else _number(c)
    total = float(t) if type(t) is int else None if t is None else _number(t)
    if total is None and prompt is not None and completion is not None:
        total = prompt + completion
    cost = None
    if price is not None and prompt is not None and completion is not None:
        cost = round(
            (prompt * price.input_per_mtok + completion * price.output_per_mtok) / 1_000_000, 12
        )
    return (prompt, completion, total, cost)


_POSITIONS: dict[tuple[str, ...], tuple[int, ...]] = {}


def usage_positions(names: Sequence[str]) -> tuple[int, ...]:
    """Where the usage metrics stand among ``names`` (all of them, or none)."""
    key = tuple(names)
    hit = _POSITIONS.get(key)
    if hit is None:
        where = {n: i for i, n in enumerate(key)}
        hit = (
            tuple(where[n] for n in USAGE_METRICS) if all(n in where for n in USAGE_METRICS) else ()
        )
        _POSITIONS[key] = hit
    return hit


# ─── the metrics (registered in gate.scorers.registry) ────────────────────────


def score_tool_calls(an: Analysis) -> Scored:
    """Calls made, every one."""
    n = len(an.calls)
    return float(n), lambda: plural(n, "call")


def answered(an: Analysis) -> bool:
    """Whether the agent gave a final answer (a message without calls)."""
    view = an.view
    return view.final is not None or any(not t.calls and t.content for t in view.turns)


def score_steps(an: Analysis) -> Scored:
    """Assistant turns: those with calls, and the answer."""
    n = an.steps + (1 if answered(an) else 0)
    return float(n), lambda: plural(n, "assistant turn")


def _from_usage(an: Analysis) -> Scored:
    """A usage metric: its value is each sample's own (:func:`usage_values`)."""
    return None, "n/a: taken from the sample's reported usage"


def score_prompt_tokens(an: Analysis) -> Scored:
    """Prompt tokens the sample's agent reported (filled in per sample)."""
    return _from_usage(an)


def score_completion_tokens(an: Analysis) -> Scored:
    """Completion tokens the sample's agent reported (filled in per sample)."""
    return _from_usage(an)


def score_total_tokens(an: Analysis) -> Scored:
    """Prompt and completion tokens (filled in per sample)."""
    return _from_usage(an)


def score_cost(an: Analysis) -> Scored:
    """The tokens at the configured prices (filled in per sample)."""
    return _from_usage(an)
