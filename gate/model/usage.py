"""Token usage, checked once where it enters: an agent's reply, an endpoint's response,
a runs file's line.

docs/agent-protocol.md ("Usage is checked") gives the rules: which names are token
counts, when a sample's usage is **invalid** (never a crash, never a figure), and what
that does. Besides them: what is not a number (a provider's detail object, a tier's
name) is left out; a whole number sent as a float (``12.0``) is that count;
``input_tokens`` and ``output_tokens`` (Anthropic's and OpenAI's Responses API names)
stand for ``prompt_tokens`` and ``completion_tokens`` in the sum check. An invalid usage
is an :class:`InvalidUsage` (no counts, and the reason).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any, final

MAX_TOKENS = 10**12
"""The most one sample may count of any kind, each report and each sum over its turns:
a trillion tokens, far beyond any model's context times any step budget. The sums over a
run's samples then stay exact in a float and within 64 bits (for up to 9 million
samples)."""

_LIMIT = f"{MAX_TOKENS:,}"
_PROMPT = ("prompt_tokens", "input_tokens")
_COMPLETION = ("completion_tokens", "output_tokens")


@final
class InvalidUsage(Mapping[str, int | float]):
    """A sample's usage that could not be used: no counts (an empty mapping, so every
    reader that sums counts sums none), and :attr:`reason`, which the runs file and
    results.json record (``usage_error``) and the reports show."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __getitem__(self, key: str) -> int | float:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, InvalidUsage) and other.reason == self.reason

    def __hash__(self) -> int:
        return hash(("InvalidUsage", self.reason))

    def __repr__(self) -> str:
        return f"InvalidUsage({self.reason!r})"

    def __reduce__(self) -> tuple[type[InvalidUsage], tuple[str]]:
        return (InvalidUsage, (self.reason,))


def _shown(value: int | float) -> str:
    """A figure as the reports show it (a count too long to print whole, by its size)."""
    if isinstance(value, float):
        return f"{value:,.6g}"
    if value.bit_length() > 128:
        return f"a {value.bit_length()}-bit number"
    return f"{value:,}"


def _count(key: str, value: Any) -> int | float | str | None:
    """One figure: its value (a token count as an ``int``), the problem with it, or
    ``None`` when it is not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return f"{key} = {value} is not a finite number"
        if value < 0:
            return f"{key} = {value!r} is negative"
        if value > MAX_TOKENS:
            return f"{key} = {value:.4g} is above {_LIMIT}, the most one sample may count"
        if "token" not in key.lower():
            return value  # another figure (a cost): a fraction is fine
        if not value.is_integer():
            return f"{key} = {value!r} is not a whole number of tokens"
        value = int(value)
    count: int = value
    if count < 0:
        return f"{key} = {_shown(count)} is negative"
    if count > MAX_TOKENS:
        return f"{key} = {_shown(count)} is above {_LIMIT}, the most one sample may count"
    return count


def _first(
    counts: Mapping[str, int | float], keys: tuple[str, ...]
) -> tuple[str, int | float] | None:
    for key in keys:
        if key in counts:
            return key, counts[key]
    return None


def _consistent(counts: Mapping[str, int | float], where: str) -> str | None:
    """The problem when ``total_tokens`` is not the sum of the other two (all three given)."""
    total = counts.get("total_tokens")
    if total is None:
        return None
    prompt = _first(counts, _PROMPT)
    completion = _first(counts, _COMPLETION)
    if prompt is None or completion is None:
        return None
    if total == prompt[1] + completion[1]:
        return None
    return (
        f"total_tokens = {total:,} is not {prompt[0]} + {completion[0]} "
        f"({prompt[1]:,} + {completion[1]:,} = {prompt[1] + completion[1]:,}){where}"
    )


def check_usage(raw: Any) -> tuple[dict[str, int | float], str | None]:
    """One usage report (module docstring): its counts, and the first problem with it
    (``None`` when it is valid). A report that is not an object has no counts."""
    if not isinstance(raw, Mapping):
        return {}, None
    counts: dict[str, int | float] = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            continue
        got = _count(key, value)
        if isinstance(got, str):
            return {}, got
        if got is not None:
            counts[key] = got
    return counts, _consistent(counts, "")


class UsageSum:
    """A sample's usage summed over its turns' reports (module docstring). Once invalid it
    stays so (its first problem kept); :meth:`result` is the run's ``usage``."""

    __slots__ = ("counts", "problem", "reports")

    def __init__(self) -> None:
        self.counts: dict[str, int | float] = {}
        self.problem: str | None = None
        self.reports = 0

    def add(self, raw: Any) -> None:
        """One more report (an agent's reply, an endpoint's response)."""
        if self.problem is not None or not isinstance(raw, Mapping):
            return
        self.reports += 1
        counts, problem = check_usage(raw)
        if problem is not None:
            self.problem = f"report {self.reports}: {problem}" if self.reports > 1 else problem
            return
        for key, value in counts.items():
            total = self.counts.get(key, 0) + value
            if total > MAX_TOKENS:
                self.problem = (
                    f"{key} summed over the sample's reports ({_shown(total)}) is above "
                    f"{_LIMIT}, the most one sample may count"
                )
                return
            self.counts[key] = total

    def result(self) -> Mapping[str, int | float] | None:
        """The summed counts (``None``: nothing reported), or an :class:`InvalidUsage`."""
        if self.problem is not None:
            return InvalidUsage(self.problem)
        problem = _consistent(self.counts, " summed over the sample's reports")
        if problem is not None:
            return InvalidUsage(problem)
        return dict(self.counts) or None


def usage_of(raw: Any, error: Any = None) -> Mapping[str, int | float] | None:
    """A recorded usage (a runs line's, a results.json sample's, a run about to be
    written): an :class:`InvalidUsage` when it is one, when ``error`` (its recorded
    ``usage_error``) says so, or when the counts do not pass :func:`check_usage`; else the
    counts (``None``: none)."""
    if type(raw) is dict and error is None:  # the common case (a runs line's): no call
        for k, v in raw.items():
            if type(k) is not str or type(v) is not int or not 0 <= v <= MAX_TOKENS:
                break
        else:
            get = raw.get
            t, p, c = get("total_tokens"), get("prompt_tokens"), get("completion_tokens")
            if t is None or (p is not None and c is not None and t == p + c):
                return raw or None  # (a decoded report, owned by the caller)
    if type(raw) is InvalidUsage:  # final: no subclass (an ABC's isinstance costs more)
        return raw
    if isinstance(error, str):
        return InvalidUsage(error)
    if raw is None:
        return None
    counts, problem = check_usage(raw)
    if problem is not None:
        return InvalidUsage(problem)
    return counts or None
