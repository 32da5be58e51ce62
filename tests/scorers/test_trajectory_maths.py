"""The trajectory maths of :mod:`gate.scorers.trajectory`, called directly: the longest
ordered chain of matched calls, the order score, the four order modes, uncrossing of
interchangeable pairs and the normalised Levenshtein distance over tool names.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gate.model import OrderMode
from gate.scorers.matching import hopcroft_karp
from gate.scorers.trajectory import (
    levenshtein,
    longest_chain,
    name_similarity,
    order_score,
    trajectory_holds,
    uncross,
)

names = st.lists(st.sampled_from("abc"), max_size=6)
turn_lists = st.lists(st.integers(0, 5), max_size=7)


@pytest.mark.parametrize(
    ("turns", "chain"),
    [
        ([], 0),
        ([0], 1),
        ([0, 1, 2], 3),
        ([2, 1, 0], 1),  # fully reversed: one call in order
        ([0, 0, 1], 3),  # two expectations met in one batch: a batch never breaks the chain
        ([1, 0, 2, 3], 3),  # one swapped step costs one pair, not everything after it
        ([0, 5, 1, 2, 3], 4),  # one step done far too late
        ([3, 1, 2, 0, 4], 3),
    ],
)
def test_longest_chain__table__longest_non_decreasing_run_of_turns(
    turns: list[int], chain: int
) -> None:
    assert longest_chain(turns) == chain


@given(turn_lists)
def test_longest_chain__small_lists__equals_brute_force(turns: list[int]) -> None:
    best = max(
        k
        for k in range(len(turns) + 1)
        for idx in itertools.combinations(range(len(turns)), k)
        if all(turns[i] <= turns[j] for i, j in itertools.pairwise(idx))
    )
    assert longest_chain(turns) == best


@pytest.mark.parametrize(
    ("chain", "n_expected", "n_actual", "score"),
    [
        (0, 0, 0, 1.0),  # both empty
        (0, 0, 2, 0.0),  # exactly one empty
        (0, 2, 0, 0.0),
        (2, 4, 4, 0.5),
        (3, 3, 5, 1.0),  # extras do not cost order
        (1, 3, 1, 1 / 3),
    ],
)
def test_order_score__table__chain_over_expected_with_empty_rules(
    chain: int, n_expected: int, n_actual: int, score: float
) -> None:
    assert order_score(chain, n_expected, n_actual) == score


S, U, SUB, SUP = OrderMode.STRICT, OrderMode.UNORDERED, OrderMode.SUBSET, OrderMode.SUPERSET


@pytest.mark.parametrize(
    ("m", "chain", "n_expected", "n_actual", "holds"),
    [
        # (matching size, chain, |E|, |A|) → which modes hold
        (0, 0, 0, 0, {S, U, SUB, SUP}),  # nothing expected, nothing called
        (2, 2, 2, 2, {S, U, SUB, SUP}),  # same calls, same sequence
        (2, 1, 2, 2, {U, SUB, SUP}),  # same calls, another sequence: only strict fails
        (2, 2, 3, 2, {SUB}),  # one expected call missing: A ⊆ E
        (2, 2, 2, 3, {SUP}),  # one extra call: A ⊇ E
        (0, 0, 1, 0, {SUB}),  # nothing called: the empty set is a subset
        (0, 0, 0, 1, {SUP}),  # a call on a no-tool case: a superset of nothing
        (1, 1, 2, 2, set()),  # one missing and one extra
    ],
)
def test_trajectory_holds__table__each_order_mode(
    m: int, chain: int, n_expected: int, n_actual: int, holds: set[OrderMode]
) -> None:
    got = {mode for mode in OrderMode if trajectory_holds(mode, m, chain, n_expected, n_actual)}
    assert got == holds


@given(st.integers(0, 4), st.integers(0, 4), st.integers(0, 4))
def test_trajectory_holds__any_counts__strict_implies_unordered_implies_subset_and_superset(
    m: int, n_expected: int, n_actual: int
) -> None:
    m = min(m, n_expected, n_actual)
    for chain in range(m + 1):
        h = {mode: trajectory_holds(mode, m, chain, n_expected, n_actual) for mode in OrderMode}
        assert all(isinstance(v, bool) for v in h.values())  # every mode is dispatched
        assert not h[S] or h[U]
        assert h[U] == (h[SUB] and h[SUP])


def test_uncross__interchangeable_crossed_pairs__swapped_into_order() -> None:
    # Expected 0 and 1 both match actual 0 and 1; the matching paired them crosswise.
    pairs = uncross([(0, 1), (1, 0)], pos=[0, 1], edge=lambda e, a: True)
    assert pairs == [(0, 0), (1, 1)]
    assert longest_chain([[0, 1][a] for _, a in pairs]) == 2


def test_uncross__swap_not_allowed_by_the_graph__pairs_kept() -> None:
    edges = {(0, 1), (1, 0), (1, 1)}  # expected 0 cannot take actual 0
    pairs = uncross([(0, 1), (1, 0)], pos=[0, 1], edge=lambda e, a: (e, a) in edges)
    assert pairs == [(0, 1), (1, 0)]


def test_uncross__three_interchangeable_calls_reversed__fully_ordered() -> None:
    pairs = uncross([(0, 2), (1, 1), (2, 0)], pos=[0, 1, 2], edge=lambda e, a: True)
    assert pairs == [(0, 0), (1, 1), (2, 2)]


def test_uncross__crossed_pairs_in_one_batch__kept() -> None:
    # Actual calls 0 and 1 are in the same turn: they are not crossed.
    pairs = uncross([(0, 1), (1, 0)], pos=[3, 3], edge=lambda e, a: True)
    assert pairs == [(0, 1), (1, 0)]


@st.composite
def matched_pairs(draw: st.DrawFn) -> tuple[list[tuple[int, int]], list[int], set[tuple[int, int]]]:
    """A perfect matching of n expected to n actual calls, the actual calls' turns, and a
    graph holding the matching plus some other edges."""
    n = draw(st.integers(0, 5))
    actual = draw(st.permutations(range(n)))
    pos = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    pairs = list(enumerate(actual))
    if not n:
        return pairs, pos, set()
    extra = draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))))
    return pairs, pos, set(pairs) | extra


@given(matched_pairs())
def test_uncross__any_matching__still_a_matching_on_the_graph_with_no_swappable_crossing(
    case: tuple[list[tuple[int, int]], list[int], set[tuple[int, int]]],
) -> None:
    pairs, pos, edges = case
    out = uncross(list(pairs), pos, lambda e, a: (e, a) in edges)
    assert [e for e, _ in out] == [e for e, _ in pairs]
    assert sorted(a for _, a in out) == sorted(a for _, a in pairs)
    assert all(p in edges for p in out)
    chain = longest_chain([pos[a] for _, a in out])
    assert chain >= longest_chain([pos[a] for _, a in pairs]), "never a shorter chain"
    if out == pairs:
        return  # kept as matched: uncrossing would have shortened the chain (docstring)
    for (e1, a1), (e2, a2) in itertools.combinations(out, 2):
        assert not (pos[a1] > pos[a2] and (e1, a2) in edges and (e2, a1) in edges)


@given(matched_pairs())
def test_uncross__every_call_interchangeable__chain_is_everything(
    case: tuple[list[tuple[int, int]], list[int], set[tuple[int, int]]],
) -> None:
    pairs, pos, _ = case
    out = uncross(list(pairs), pos, lambda e, a: True)
    assert longest_chain([pos[a] for _, a in out]) == len(pairs)


def test_uncross__partly_interchangeable_calls__chain_never_shorter_than_before() -> None:
    # The maximum matching Hopcroft-Karp finds for five calls of one tool whose expected
    # arguments ($in) accept some of the five calls; the calls sit in turns 0, 1, 2, 2, 3.
    adj = [[1, 2], [0, 1, 2, 4], [0, 1, 3, 4], [4], [0, 1, 3]]
    pos = [0, 1, 2, 2, 3]
    pairs = list(enumerate(hopcroft_karp(adj, 5)))
    assert pairs == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)]
    assert longest_chain([pos[a] for _, a in pairs]) == 4
    out = uncross(list(pairs), pos, lambda e, a: a in adj[e])
    assert longest_chain([pos[a] for _, a in out]) >= 4


@pytest.mark.parametrize(
    ("a", "b", "d"),
    [
        ([], [], 0),
        (["a"], [], 1),
        ([], ["a", "b"], 2),
        (["a", "b", "c"], ["a", "b", "c"], 0),
        (["a", "b", "c"], ["a", "c"], 1),  # one deletion
        (["a", "c"], ["a", "b", "c"], 1),  # one insertion
        (["a", "b", "c"], ["a", "x", "c"], 1),  # one substitution
        (["a", "b"], ["b", "a"], 2),  # a swap is two edits (no transpositions)
        (list("kitten"), list("sitting"), 3),
    ],
)
def test_levenshtein__table__edit_distance_over_whole_names(
    a: list[str], b: list[str], d: int
) -> None:
    assert levenshtein(a, b) == d


@pytest.mark.parametrize(
    ("expected", "actual", "similarity"),
    [
        ([], [], 1.0),  # both empty
        (["a"], [], 0.0),
        ([], ["a"], 0.0),
        (["a", "b"], ["a", "b"], 1.0),
        (["a", "b"], ["a", "c"], 0.5),
        (["a", "b", "c", "d"], ["a", "c", "d"], 0.75),
        (["a", "b"], ["c", "d", "e"], 0.0),
    ],
)
def test_name_similarity__table__one_minus_normalised_levenshtein(
    expected: list[str], actual: list[str], similarity: float
) -> None:
    assert name_similarity(expected, actual) == similarity


@given(names, names)
def test_levenshtein__any_lists__metric_bounds(a: list[str], b: list[str]) -> None:
    d = levenshtein(a, b)
    assert d == levenshtein(b, a)
    assert abs(len(a) - len(b)) <= d <= max(len(a), len(b))
    assert (d == 0) == (a == b)


@given(names, names, names)
def test_levenshtein__any_three_lists__triangle_inequality(
    a: list[str], b: list[str], c: list[str]
) -> None:
    assert levenshtein(a, c) <= levenshtein(a, b) + levenshtein(b, c)


@given(names, names)
def test_name_similarity__any_lists__in_unit_interval_and_symmetric(
    a: list[str], b: list[str]
) -> None:
    s = name_similarity(a, b)
    assert 0.0 <= s <= 1.0
    assert s == name_similarity(b, a)
    assert (s == 1.0) == (a == b)


@given(turn_lists)
def test_order_score__any_chain__in_unit_interval(turns: list[int]) -> None:
    n = len(turns)
    for n_actual in (n, n + 2):
        assert 0.0 <= order_score(longest_chain(turns), n, n_actual) <= 1.0
