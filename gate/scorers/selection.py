"""Tool-selection scorers: which tools were called, by name (seeds 001, 002, 003).

docs/scoring.md ("The metrics") gives each formula. With a_n and e_n the calls of tool
n in A and in E, ``m = Σ_n min(a_n, e_n)`` is the multiset intersection of names.
``partial_credit_accuracy`` pairs only calls of the same name, so per name the best
pairing has ``min(a_n, e_n)`` pairs of which as many are exact as the maximum matching
allows: ``(0.5·m + 0.5·M) / max(|E|, |A|)``.

A call whose arguments did not parse still names a tool: it counts for selection (a
parse failure is its own score, never a wrong-tool miss).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from gate.scorers.prose import Scored, plural

if TYPE_CHECKING:
    from gate.scorers.facts import Analysis


def name_overlap(a_counts: Mapping[str, int], e_counts: Mapping[str, int]) -> int:
    """``m = Σ_n min(a_n, e_n)``."""
    if len(a_counts) > len(e_counts):
        a_counts, e_counts = e_counts, a_counts
    return sum(min(c, e_counts.get(n, 0)) for n, c in a_counts.items())


def precision(m: float, n_actual: float, n_expected: float) -> float:
    """``m / |A|``; empty A: 1.0 when E is empty, else 0.0."""
    if n_actual == 0:
        return 1.0 if n_expected == 0 else 0.0
    return m / n_actual


def recall(m: float, n_actual: float, n_expected: float) -> float:
    """``m / |E|``; empty E: 1.0 when A is empty, else 0.0."""
    if n_expected == 0:
        return 1.0 if n_actual == 0 else 0.0
    return m / n_expected


def f1(p: float, r: float) -> float:
    """``2pr / (p + r)``; 0.0 when p + r = 0."""
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def set_iou(
    actual_names: Sequence[str], expected_names: Sequence[str], *, ordered: bool = False
) -> float:
    """``|A ∩ E| / |A ∪ E|`` over sets of names (ordered variant in the module docstring)."""
    sa, se = set(actual_names), set(expected_names)
    union = len(sa | se)
    if union == 0:
        return 1.0
    if not ordered:
        return len(sa & se) / union
    fa = list(dict.fromkeys(actual_names))
    fe = list(dict.fromkeys(expected_names))
    return lcs(fa, fe, lambda x, y: x == y) / union


def lcs(a: Sequence[str], b: Sequence[str], eq: Callable[[str, str], bool]) -> int:
    """Length of the longest common subsequence (dynamic programming, O(|a|·|b|))."""
    if not a or not b:
        return 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if eq(x, y) else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def partial_credit(m: int, exact: int, n_actual: int, n_expected: int) -> float:
    """``(0.5·m + 0.5·M) / max(|E|, |A|)``: exact pairs 1.0, name-only pairs 0.5."""
    denom = max(n_actual, n_expected)
    if denom == 0:
        return 1.0
    return (0.5 * m + 0.5 * exact) / denom


def risk_weighted_precision(
    a_counts: Mapping[str, int], e_counts: Mapping[str, int], weight: Callable[[str], float]
) -> float:
    """``Σ w_n·min(a_n, e_n) / Σ w_n·a_n``; empty A as for precision."""
    total = 0.0
    hit = 0.0
    for n, c in a_counts.items():
        w = weight(n)
        total += w * c
        hit += w * min(c, e_counts.get(n, 0))
    if total == 0:
        return 1.0 if not e_counts else 0.0
    return hit / total


def confusion_pair(expected_name: str, actual_names: Sequence[str]) -> tuple[str, str | None]:
    """For a case with exactly one expected call: (expected tool, the tool the agent
    chose) — the expected tool itself if any call named it, else the first tool called,
    else None (no call; the policy layer counts it under ``"(none)"``)."""
    if expected_name in actual_names:
        return expected_name, expected_name
    return expected_name, actual_names[0] if actual_names else None


def missing_names(a: Mapping[str, int], b: Mapping[str, int]) -> list[str]:
    """The multiset ``a − b`` of names, sorted."""
    out: list[str] = []
    for n, k in a.items():
        extra = k - b.get(n, 0)
        if extra > 0:
            out.extend([n] * extra)
    out.sort()
    return out


# ─── the metrics (registered in gate.scorers.registry) ────────────────────────


def score_tool_selection_precision(an: Analysis) -> Scored:
    """``m / |A|`` over the multiset of names (empty A: 1.0 if E empty, else 0.0)."""
    v = precision(an.name_m, an.n_a, an.n_e)
    if an.n_a == 0:
        return v, "no call made and none expected" if an.n_e == 0 else (
            lambda: f"no call made; {an.n_e} expected"
        )
    return v, lambda: f"{an.name_m} of {plural(an.n_a, 'call')} named an expected tool"


def score_tool_selection_recall(an: Analysis) -> Scored:
    """``m / |E|`` over the multiset of names (empty E: 1.0 if A empty, else 0.0)."""
    v = recall(an.name_m, an.n_a, an.n_e)
    if an.n_e == 0:
        return v, "no call expected" if an.n_a == 0 else (
            lambda: f"no call expected, {plural(an.n_a, 'call')} made"
        )

    def why() -> str:
        missing = missing_names(an.e_counts, an.a_counts) if v < 1 else []
        tail = f"; missing: {', '.join(missing)}" if missing else ""
        return f"{an.name_m} of {plural(an.n_e, 'expected tool call')} made{tail}"

    return v, why


def score_tool_selection_f1(an: Analysis) -> Scored:
    """``2pr / (p + r)``; 0.0 when p + r = 0."""
    p = precision(an.name_m, an.n_a, an.n_e)
    r = recall(an.name_m, an.n_a, an.n_e)
    return f1(p, r), lambda: f"precision {p:.2f}, recall {r:.2f}"


def score_tool_set_iou(an: Analysis) -> Scored:
    """``|set(A) ∩ set(E)| / |set(A) ∪ set(E)|``; 1.0 both empty, 0.0 one empty (ordered
    variant with ``order_matters_for_iou``)."""
    a_counts, e_counts = an.a_counts, an.e_counts
    if a_counts.keys() == e_counts.keys() and not an.ordered_iou:
        n = len(a_counts)
        return 1.0, lambda: f"{n} shared of {n} distinct tools"
    v = set_iou([c.name for c in an.calls], an.e_names, ordered=an.ordered_iou)

    def why() -> str:
        sa, se = set(a_counts), set(e_counts)
        parts = [f"{len(sa & se)} shared of {len(sa | se)} distinct tools"]
        missing = sorted(se - sa)
        if missing:
            parts.append("missing " + ", ".join(missing))
        extra = sorted(sa - se)
        if extra:
            parts.append("unexpected " + ", ".join(extra))
        return "; ".join(parts)

    return v, why


def score_partial_credit_accuracy(an: Analysis) -> Scored:
    """``(1.0·exact + 0.5·name_only) / max(|E|, |A|)`` over an optimal pairing."""
    v = partial_credit(an.name_m, an.m, an.n_a, an.n_e)
    return v, lambda: summary(an)


def summary(an: Analysis) -> str:
    """Seed 002's line: ``2 exact, 1 name-only; 3 expected, 4 actual``."""
    return f"{an.m} exact, {an.name_m - an.m} name-only; {an.n_e} expected, {an.n_a} actual"


def score_risk_weighted_precision(an: Analysis) -> Scored:
    """``Σ w_n·min(a_n, e_n) / Σ w_n·a_n`` (read 1, write 3, irreversible 10)."""
    unexpected = missing_names(an.a_counts, an.e_counts)
    if not unexpected:
        # Every call's tool was expected: the weighted ratio is 1 (or the empty rule).
        v = 1.0 if an.n_a else (1.0 if an.n_e == 0 else 0.0)
        return v, "no unexpected call"
    tools = an.weight

    def weight(name: str) -> float:
        entry = tools.get(name)
        return entry.weight if entry is not None else 1.0

    v = risk_weighted_precision(an.a_counts, an.e_counts, weight)
    return v, lambda: "unexpected: " + ", ".join(f"{n} (weight {weight(n):g})" for n in unexpected)


def score_unnecessary_call_rate(an: Analysis) -> Scored:
    """This sample's calls on a no-tool case ÷ its calls (n/a without calls). The dataset
    value is pooled by the policy layer: Σ ``tallies.calls_on_no_tool`` ÷ Σ
    ``tallies.calls``, never a mean of these. A no-tool case judged by its effects needs
    no *write*: its writes made count, its reads do not."""
    if an.n_a == 0:
        return None, "n/a: no call made"
    if an.cc.no_tool:
        unneeded = unneeded_calls(an)
        if an.effects is not None and not unneeded:
            return 0.0, "reads only, on a case that needs no write"
        return (
            unneeded / an.n_a,
            lambda: (
                f"{plural(unneeded, 'call')} made on a case that needs no tool"
                if an.effects is None
                else f"{plural(unneeded, 'write')} made on a case that needs no write"
            ),
        )
    return 0.0, "the case needs tools"


def unneeded_calls(an: Analysis) -> int:
    """The calls a no-tool case did not need: every call, or — judged by its effects —
    the writes made (reads are free)."""
    return an.n_a if an.effects is None else an.effects.n_a


def score_no_tool_respected(an: Analysis) -> Scored:
    """No-tool cases: 1.0 when no call was made (judged by effects: no write), else 0.0;
    n/a on other cases."""
    if not an.cc.no_tool:
        return None, "n/a: the case expects tool calls"
    if an.n_a == 0:
        return 1.0, "answered without calling a tool"
    if an.effects is not None and an.effects.n_a == 0:
        return 1.0, "wrote nothing (reads are free when judged by effects)"
    return (
        0.0,
        lambda: (
            f"called {', '.join(sorted({c.name for c in an.calls}))} although no tool was needed"
        ),
    )
