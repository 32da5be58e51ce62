"""The trajectory-hygiene maths of :mod:`gate.scorers.hygiene`, called directly:
duplicates ``Σ_key max(0, count(key) − max(1, matched(key)))`` and repeated failing calls
``Σ_(key, error) (count − 1)``.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Hashable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gate.scorers.hygiene import duplicate_count, repeated_failures

keys = st.lists(st.sampled_from(["a", "b", "c"]), max_size=8)


@pytest.mark.parametrize(
    ("calls", "matched", "duplicates"),
    [
        ([], [], 0),
        (["a"], [], 0),
        (["a", "b", "c"], [], 0),  # all distinct
        (["a", "a"], [], 1),  # a repeat nothing asked for
        (["a", "a", "a", "a"], ["a"], 3),  # a retry loop against one expected call
        (["a", "a"], ["a", "a"], 0),  # two identical calls that two expectations ask for
        (["a", "a", "a"], ["a", "a"], 1),
        (["a"], ["a", "a"], 0),  # more expectations than calls: never negative
        (["a", "a", "b", "b", "b"], ["b"], 3),  # 1 for a, 2 for b
        (["a", "b", "a", "b"], ["a", "b"], 2),  # order does not matter
        ([("f", '{"k":1}'), ("f", '{"k":1}'), ("f", '{"k":2}')], [], 1),  # keys are tuples
    ],
)
def test_duplicate_count__table__repeats_no_expectation_accounts_for(
    calls: list[Hashable], matched: list[Hashable], duplicates: int
) -> None:
    assert duplicate_count(calls, matched) == duplicates


@pytest.mark.parametrize(
    ("failures", "repeated"),
    [
        ([], 0),
        ([("a", "HTTP 500")], 0),
        ([("a", "HTTP 500")] * 2, 1),  # same call, same error, twice
        ([("a", "HTTP 500"), ("a", "HTTP 404")], 0),  # same call, another error
        ([("a", "HTTP 500"), ("b", "HTTP 500")], 0),  # another call, same error
        ([("a", "E")] * 3 + [("b", "E")] * 2, 3),
    ],
)
def test_repeated_failures__table__same_call_same_error(
    failures: list[Hashable], repeated: int
) -> None:
    assert repeated_failures(failures) == repeated


@given(keys, keys)
def test_duplicate_count__any_calls__between_zero_and_plain_repeats(
    calls: list[str], matched: list[str]
) -> None:
    d = duplicate_count(calls, matched)
    assert 0 <= d <= len(calls) - len(set(calls))


@given(keys, keys)
def test_duplicate_count__any_calls__equals_the_formula(
    calls: list[str], matched: list[str]
) -> None:
    count, m = Counter(calls), Counter(matched)
    assert duplicate_count(calls, matched) == sum(
        max(0, c - max(1, m[k])) for k, c in count.items()
    )


@given(keys)
def test_duplicate_count__every_call_expected__zero(calls: list[str]) -> None:
    assert duplicate_count(calls, calls) == 0


@given(keys, keys, st.randoms(use_true_random=False))
def test_duplicate_count__calls_reordered__same_count(
    calls: list[str], matched: list[str], rnd: random.Random
) -> None:
    shuffled = list(calls)
    rnd.shuffle(shuffled)
    assert duplicate_count(shuffled, matched) == duplicate_count(calls, matched)


@given(keys, keys)
def test_duplicate_count__more_expectations__never_more_duplicates(
    calls: list[str], more: list[str]
) -> None:
    base = calls[: len(calls) // 2]
    assert duplicate_count(calls, base + more) <= duplicate_count(calls, base)


@given(st.lists(st.tuples(st.sampled_from("ab"), st.sampled_from(["E1", "E2"])), max_size=8))
def test_repeated_failures__any_failures__count_minus_distinct(
    failures: list[tuple[str, str]],
) -> None:
    assert repeated_failures(failures) == len(failures) - len(set(failures))
