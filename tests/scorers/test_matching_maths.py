"""The maximum bipartite matching of :mod:`gate.scorers.matching` (Hopcroft–Karp), called
directly: the pairing of expected to actual calls is a *maximum* matching, never
first-match-wins, and it is deterministic (lower indices first).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gate.scorers.matching import greedy_matching, hopcroft_karp, matching_size


def brute_force_maximum(adj: Sequence[Sequence[int]], used: frozenset[int] = frozenset()) -> int:
    """The largest matching, by trying every choice for the first left vertex."""
    if not adj:
        return 0
    best = brute_force_maximum(adj[1:], used)  # leave the first one unmatched
    for v in adj[0]:
        if v not in used:
            best = max(best, 1 + brute_force_maximum(adj[1:], used | {v}))
    return best


def assert_valid(adj: Sequence[Sequence[int]], match: Sequence[int]) -> None:
    assert len(match) == len(adj)
    right = [v for v in match if v >= 0]
    assert len(right) == len(set(right)), "a right vertex used twice"
    assert all(v in adj[u] for u, v in enumerate(match) if v >= 0), "a pair without an edge"


@pytest.mark.parametrize(
    ("adj", "n_right", "match"),
    [
        ([], 0, []),
        ([[]], 0, [-1]),
        ([[], []], 3, [-1, -1]),
        ([[0]], 1, [0]),
        ([[0], [0]], 1, [0, -1]),  # one call, two expectations: the lower index wins
        ([[0, 1], [0, 1]], 2, [0, 1]),
        # An expectation without arguments matches any call of its name; first-match-wins
        # lets it take the only call the specific expectation accepts.
        ([[0, 1], [0]], 2, [1, 0]),
        # An augmenting path of length 5: greedy pairs 0-0 and 1-1; 2 needs 0.
        ([[0, 1], [1, 2], [0]], 3, [1, 2, 0]),
        ([[0, 1], [0, 2], [0]], 3, [1, 2, 0]),
        ([[0], [0, 1], [1, 2], [2, 3]], 4, [0, 1, 2, 3]),
    ],
)
def test_hopcroft_karp__table__maximum_and_deterministic(
    adj: list[list[int]], n_right: int, match: list[int]
) -> None:
    got = hopcroft_karp(adj, n_right)
    assert_valid(adj, got)
    assert got == match


@pytest.mark.parametrize(
    ("adj", "n_right", "greedy", "maximum"),
    [
        ([[0, 1], [0]], 2, 1, 2),
        ([[0, 1], [0, 2], [0]], 3, 2, 3),
        ([[0, 1, 2], [0], [1]], 3, 2, 3),
    ],
)
def test_hopcroft_karp__first_match_wins_trap__maximum_beats_greedy(
    adj: list[list[int]], n_right: int, greedy: int, maximum: int
) -> None:
    assert matching_size(greedy_matching(adj, n_right)) == greedy
    assert matching_size(hopcroft_karp(adj, n_right)) == maximum


@pytest.mark.parametrize(("match", "size"), [([], 0), ([-1], 0), ([2, -1, 0], 2), ([0, 1, 2], 3)])
def test_matching_size__table__pairs_counted(match: list[int], size: int) -> None:
    assert matching_size(match) == size


@st.composite
def graphs(draw: st.DrawFn) -> tuple[list[list[int]], int]:
    n_right = draw(st.integers(0, 6))
    n_left = draw(st.integers(0, 6))
    adj = [
        sorted(draw(st.sets(st.integers(0, n_right - 1), max_size=n_right))) if n_right else []
        for _ in range(n_left)
    ]
    return adj, n_right


@given(graphs())
def test_hopcroft_karp__small_graphs__size_equals_brute_force_maximum(
    g: tuple[list[list[int]], int],
) -> None:
    adj, n_right = g
    match = hopcroft_karp(adj, n_right)
    assert_valid(adj, match)
    assert matching_size(match) == brute_force_maximum(adj)


@given(graphs())
def test_hopcroft_karp__small_graphs__never_smaller_than_greedy(
    g: tuple[list[list[int]], int],
) -> None:
    adj, n_right = g
    greedy = greedy_matching(adj, n_right)
    assert_valid(adj, greedy)
    assert matching_size(hopcroft_karp(adj, n_right)) >= matching_size(greedy)


@given(graphs())
def test_hopcroft_karp__same_graph_twice__same_pairs(g: tuple[list[list[int]], int]) -> None:
    adj, n_right = g
    assert hopcroft_karp(adj, n_right) == hopcroft_karp([list(a) for a in adj], n_right)


@given(graphs(), st.randoms(use_true_random=False))
def test_hopcroft_karp__expectations_reordered__same_size(
    g: tuple[list[list[int]], int], rnd: random.Random
) -> None:
    adj, n_right = g
    shuffled = list(adj)
    rnd.shuffle(shuffled)
    assert matching_size(hopcroft_karp(shuffled, n_right)) == matching_size(
        hopcroft_karp(adj, n_right)
    )


@given(graphs())
def test_hopcroft_karp__transposed_graph__same_size(g: tuple[list[list[int]], int]) -> None:
    adj, n_right = g
    transposed: list[list[int]] = [[] for _ in range(n_right)]
    for u, vs in enumerate(adj):
        for v in vs:
            transposed[v].append(u)
    assert matching_size(hopcroft_karp(transposed, len(adj))) == matching_size(
        hopcroft_karp(adj, n_right)
    )
