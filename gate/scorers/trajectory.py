"""Trajectory scorers: the calls as a sequence (seed 003 "Order and trajectory"; seed 004
"Approach 3").

docs/scoring.md ("The metrics", "Order modes", "Expectations written with batches")
defines ``order_score``, ``trajectory_match`` (the order modes), ``batching``,
``name_sequence_similarity`` and ``step_budget_exceeded``. Calls in one assistant turn
are a **parallel batch**: every ordering here compares *turn indices*, so a batch
permutation cannot change a score.

What only the code says: for ``order_score``, crossed pairs of the maximum matching
whose calls are interchangeable (each expectation also matches the other's call) are
uncrossed first, so that an arbitrary choice of the matching cannot cost order (the
uncrossed pairing is kept only when its chain is not shorter than the matching's own);
one inserted or skipped step costs one pair, not everything after it. ``strict`` over a
list written with batches is checked by a matching restricted to each batch and its
turn. ``step_budget_exceeded`` counts the assistant turns that made calls (the runner's
own count).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import groupby
from typing import TYPE_CHECKING

from gate.model import BatchingKind, OrderMode
from gate.scorers.prose import Scored, plural

if TYPE_CHECKING:
    from gate.scorers.facts import Analysis, Call


def uncross(
    pairs: list[tuple[int, int]], pos: Sequence[int], edge: Callable[[int, int], bool]
) -> list[tuple[int, int]]:
    """Swap the actual calls of crossed matched pairs when both swapped edges exist.

    ``pairs`` are (expected index, actual index) sorted by expected index; ``pos[j]`` is
    the turn of actual call j. Terminates: every swap removes at least one inversion.

    One swap can break a longer chain elsewhere (calls only partly interchangeable), so
    the better of the two pairings is kept: the uncrossed one unless its longest chain is
    shorter than the matching's own.
    """
    before = list(pairs)
    n = len(pairs)
    changed = True
    while changed:
        changed = False
        for x in range(n):
            e1, a1 = pairs[x]
            for y in range(x + 1, n):
                e2, a2 = pairs[y]
                if pos[a1] > pos[a2] and edge(e1, a2) and edge(e2, a1):
                    pairs[x] = (e1, a2)
                    pairs[y] = (e2, a1)
                    a1 = a2
                    changed = True
    if longest_chain([pos[a] for _, a in pairs]) < longest_chain([pos[a] for _, a in before]):
        return before
    return pairs


def longest_chain(turns: Sequence[int]) -> int:
    """Longest non-decreasing subsequence of the turns of matched calls taken in expected
    order (patience sorting, O(n log n))."""
    import bisect

    tails: list[int] = []
    for t in turns:
        i = bisect.bisect_right(tails, t)
        if i == len(tails):
            tails.append(t)
        else:
            tails[i] = t
    return len(tails)


def longest_batch_chain(steps: Sequence[tuple[int, int]]) -> int:
    """Longest chain of matched pairs given as (expected batch, actual turn): batches in
    order, turns never going backwards, any order inside a batch."""
    return longest_chain([t for _, t in sorted(steps)])


def order_score(chain: int, n_expected: int, n_actual: int) -> float:
    """``chain / |E|``; 1.0 when both lists are empty, 0.0 when exactly one is."""
    if n_expected == 0:
        return 1.0 if n_actual == 0 else 0.0
    if n_actual == 0:
        return 0.0
    return chain / n_expected


def trajectory_holds(mode: OrderMode, m: int, chain: int, n_expected: int, n_actual: int) -> bool:
    """Whether the order mode holds (module docstring)."""
    match mode:
        case OrderMode.STRICT:
            return m == n_expected == n_actual and chain == m
        case OrderMode.UNORDERED:
            return m == n_expected == n_actual
        case OrderMode.SUBSET:
            return m == n_actual
        case OrderMode.SUPERSET:
            return m == n_expected


def levenshtein(a: Sequence[str], b: Sequence[str]) -> int:
    """Edit distance (insertions, deletions, substitutions of whole names)."""
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def name_similarity(expected: Sequence[str], actual: Sequence[str]) -> float:
    """``1 - lev / max(|E|, |A|)``; 1.0 when both are empty."""
    longest = max(len(expected), len(actual))
    if longest == 0:
        return 1.0
    if expected == actual:
        return 1.0
    return 1.0 - levenshtein(expected, actual) / longest


# ─── the metrics (registered in gate.scorers.registry) ────────────────────────


def score_order_score(an: Analysis) -> Scored:
    """Longest chain of matched pairs in expected order (batches unordered) ÷ |E|."""
    v = order_score(an.chain, an.n_e, an.n_a)
    if an.n_e == 0:
        return v, "no call expected" + ("" if an.n_a == 0 else ", but calls were made")
    return v, lambda: f"{an.chain} of {plural(an.n_e, 'expected call')} made in the expected order"


def score_trajectory_match(an: Analysis) -> Scored:
    """1.0 when the case's order mode (strict / unordered / subset / superset) holds."""
    mode = an.cc.order
    if an.order_ok:
        return 1.0, lambda: f"{mode.value}: holds"
    missing = an.n_e - an.m
    extra = an.n_a - an.m
    why = []
    if missing and mode is not OrderMode.SUBSET:
        why.append(f"{missing} expected call(s) missing")
    if extra and mode in (OrderMode.STRICT, OrderMode.UNORDERED, OrderMode.SUBSET):
        why.append(f"{extra} call(s) not expected")
    if mode is OrderMode.STRICT:
        if an.chain < an.m:
            why.append("calls out of the expected order")
        elif not why:  # only a list written with batches fails strict this way
            why.append("calls not in the expected batches")
    return 0.0, f"{mode.value}: fails ({'; '.join(why)})"


def score_batching(an: Analysis) -> Scored:
    """Pairs of matched calls batched as expected ÷ pairs of matched calls (module
    docstring); n/a for a plain expectation list or fewer than two matched calls."""
    if an.best.lst.groups is None:
        return None, "n/a: the expected calls are not written in batches"
    if an.batch_pairs == 0:
        return None, "n/a: fewer than two expected calls were made"
    if not an.batch_problems:
        return 1.0, "every call came in its expected batch"
    v = an.batch_good / an.batch_pairs
    p = an.batch_problems[0]
    more = len(an.batch_problems) - 1
    return v, (
        f"{an.batch_good} of {plural(an.batch_pairs, 'pair')} of calls batched as expected: "
        f"{batching_sentence(p.kind, p.names, p.turns)}" + (f" (and {more} more)" if more else "")
    )


def batching_sentence(kind: BatchingKind, names: Sequence[str], turns: Sequence[int]) -> str:
    """One disagreement in words (turns 1-based, as the reports number them)."""
    who = _and(list(names))
    match kind:
        case BatchingKind.SPLIT:
            shown = _and([str(t + 1) for t in turns])
            return f"{who} were expected in one turn but came in turns {shown}"
        case BatchingKind.MERGED:
            return f"{who} were expected in separate turns but came together in turn {turns[0] + 1}"


def _and(items: list[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def score_name_sequence_similarity(an: Analysis) -> Scored:
    """``1 − lev(names(E), names(A)) / max(|E|, |A|)``; batches in expected order."""
    actual = _names_in_expected_order(an)
    if actual == list(an.e_names):
        return 1.0, "the same tool sequence as expected"
    v = name_similarity(an.e_names, actual)

    def why() -> str:
        longest = max(an.n_e, an.n_a)
        d = round((1.0 - v) * longest) if longest else 0
        return f"{plural(d, 'edit')} between the expected and the actual tool sequence"

    return v, why


def _names_in_expected_order(an: Analysis) -> list[str]:
    # Inside a batch, order the names as the expectation lists them (first occurrence).
    calls = an.calls
    if not calls:
        return []
    if calls[-1].turn - calls[0].turn == len(calls) - 1 and _one_per_turn(calls):
        return [c.name for c in calls]
    rank = an.best.lst.rank
    big = len(an.e_names)
    out: list[str] = []
    for _, batch in groupby(calls, key=lambda c: c.turn):
        out.extend(sorted((c.name for c in batch), key=lambda n: (rank.get(n, big), n)))
    return out


def _one_per_turn(calls: list[Call]) -> bool:
    prev = -1
    for c in calls:
        if c.turn == prev:
            return False
        prev = c.turn
    return True


def over_budget(an: Analysis) -> bool | None:
    """Whether the run went over its step budget (``None``: no budget)."""
    budget = an.cc.step_budget
    if budget is None:
        return None
    return an.steps > budget or _budget_error(an.view.error)


def score_step_budget_exceeded(an: Analysis) -> Scored:
    """1.0 when the run took more assistant turns than the step budget; n/a without one."""
    over = over_budget(an)
    if over is None:
        return None, "n/a: no step budget"
    budget = an.cc.step_budget
    if over:
        return 1.0, lambda: f"{plural(an.steps, 'turn')}, budget {budget}"
    return 0.0, lambda: f"{plural(an.steps, 'turn')} within the budget of {budget}"


def _budget_error(error: str | None) -> bool:
    # The runner's error kinds prefix Run.error ("step_budget: …", gate.replay.session).
    return error is not None and error.startswith("step_budget")
