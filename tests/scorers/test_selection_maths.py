"""The tool-selection maths of :mod:`gate.scorers.selection`, called directly.

Tables follow the settled definitions (A actual calls, E expected calls, m the multiset
overlap of names): precision m/|A| (A empty: 1.0 when E is empty, else 0.0), recall m/|E|
(E empty: 1.0 when A is empty, else 0.0), F1 = 0 when p + r = 0, IoU and partial credit
1.0 when both lists are empty and 0.0 when exactly one is.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gate.scorers.selection import (
    confusion_pair,
    f1,
    lcs,
    name_overlap,
    partial_credit,
    precision,
    recall,
    risk_weighted_precision,
    set_iou,
)

names = st.lists(st.sampled_from("abcd"), max_size=6)


def _eq(x: str, y: str) -> bool:
    return x == y


@pytest.mark.parametrize(
    ("actual", "expected", "m"),
    [
        ({}, {}, 0),
        ({"a": 1}, {}, 0),
        ({}, {"a": 1}, 0),
        ({"a": 2}, {"a": 1}, 1),
        ({"a": 1}, {"a": 3}, 1),
        ({"a": 1, "b": 3}, {"b": 2, "c": 1}, 2),
        ({"a": 2, "b": 2}, {"a": 2, "b": 2}, 4),
    ],
)
def test_name_overlap__counts__sum_of_per_name_minimum(
    actual: dict[str, int], expected: dict[str, int], m: int
) -> None:
    assert name_overlap(actual, expected) == m


@pytest.mark.parametrize(
    ("m", "n_actual", "n_expected", "p"),
    [
        (0, 0, 0, 1.0),  # nothing called, nothing expected
        (0, 0, 2, 0.0),  # nothing called, something expected
        (0, 3, 0, 0.0),  # calls on a no-tool case
        (1, 2, 1, 0.5),
        (2, 2, 5, 1.0),  # every call expected, some missing: precision stays 1
    ],
)
def test_precision__table__m_over_actual_with_empty_rules(
    m: int, n_actual: int, n_expected: int, p: float
) -> None:
    assert precision(m, n_actual, n_expected) == p


@pytest.mark.parametrize(
    ("m", "n_actual", "n_expected", "r"),
    [
        (0, 0, 0, 1.0),  # nothing expected, nothing called
        (0, 2, 0, 0.0),  # nothing expected, something called
        (0, 0, 3, 0.0),
        (1, 3, 2, 0.5),
        (2, 7, 2, 1.0),  # every expectation met, extras: recall stays 1
    ],
)
def test_recall__table__m_over_expected_with_empty_rules(
    m: int, n_actual: int, n_expected: int, r: float
) -> None:
    assert recall(m, n_actual, n_expected) == r


@pytest.mark.parametrize(
    ("p", "r", "f"),
    [
        (0.0, 0.0, 0.0),  # p + r = 0: 0, never a division by zero
        (0.0, 1.0, 0.0),
        (1.0, 0.0, 0.0),
        (1.0, 1.0, 1.0),
        (0.5, 1.0, 2 / 3),
        (0.25, 0.75, 0.375),
    ],
)
def test_f1__table__harmonic_mean_and_zero_when_both_zero(p: float, r: float, f: float) -> None:
    assert f1(p, r) == pytest.approx(f, abs=1e-12)


@pytest.mark.parametrize(
    ("actual", "expected", "ordered", "iou"),
    [
        ([], [], False, 1.0),
        ([], [], True, 1.0),
        (["a"], [], False, 0.0),
        ([], ["a"], False, 0.0),
        ([], ["a"], True, 0.0),
        (["a", "a", "b"], ["a", "c"], False, 1 / 3),  # sets: {a, b} vs {a, c}
        (["a", "b"], ["b", "a"], False, 1.0),
        (["b", "a"], ["a", "b"], True, 0.5),  # first calls in the wrong order: LCS 1
        (["a", "b", "a"], ["a", "b"], True, 1.0),  # a repeat does not move a's first call
        (["b", "a", "b"], ["a", "b"], True, 0.5),
        (["a", "x", "b"], ["a", "b"], True, 2 / 3),
    ],
)
def test_set_iou__table__sets_of_names_and_first_call_order(
    actual: list[str], expected: list[str], ordered: bool, iou: float
) -> None:
    assert set_iou(actual, expected, ordered=ordered) == pytest.approx(iou, abs=1e-12)


@pytest.mark.parametrize(
    ("a", "b", "n"),
    [
        ([], [], 0),
        (["a"], [], 0),
        ([], ["a"], 0),
        (["a", "b", "c"], ["a", "b", "c"], 3),
        (["a", "b", "c"], ["c", "b", "a"], 1),
        (["a", "x", "b", "y", "c"], ["a", "b", "c"], 3),
        (["a", "b", "c", "b", "d", "a", "b"], ["b", "d", "c", "a", "b", "a"], 4),  # CLRS
    ],
)
def test_lcs__table__longest_common_subsequence(a: list[str], b: list[str], n: int) -> None:
    assert lcs(a, b, _eq) == n


@pytest.mark.parametrize(
    ("m", "exact", "n_actual", "n_expected", "credit"),
    [
        (0, 0, 0, 0, 1.0),  # both empty
        (0, 0, 1, 0, 0.0),  # exactly one empty
        (0, 0, 0, 1, 0.0),
        (1, 1, 1, 1, 1.0),  # one exact pair
        (1, 0, 1, 1, 0.5),  # one name-only pair
        (2, 1, 2, 3, 0.5),  # (1.0 + 0.5) / 3
        (2, 2, 4, 2, 0.5),  # extras dilute: ÷ max(|E|, |A|)
    ],
)
def test_partial_credit__table__exact_one_name_only_half(
    m: int, exact: int, n_actual: int, n_expected: int, credit: float
) -> None:
    assert partial_credit(m, exact, n_actual, n_expected) == credit


WEIGHTS = {"read": 1.0, "write": 3.0, "delete": 10.0}


@pytest.mark.parametrize(
    ("actual", "expected", "value"),
    [
        ({}, {}, 1.0),
        ({}, {"read": 1}, 0.0),
        ({"read": 1}, {"read": 1}, 1.0),
        ({"read": 1, "delete": 1}, {"read": 1}, 1 / 11),  # an unexpected delete costs 10
        ({"read": 2, "write": 1}, {"write": 1}, 3 / 5),  # an unexpected read costs 1
    ],
)
def test_risk_weighted_precision__table__unexpected_calls_cost_their_weight(
    actual: dict[str, int], expected: dict[str, int], value: float
) -> None:
    assert risk_weighted_precision(actual, expected, WEIGHTS.__getitem__) == pytest.approx(value)


@pytest.mark.parametrize(
    ("expected", "actual", "pair"),
    [
        ("a", ["b", "a"], ("a", "a")),  # the expected tool was called: no confusion
        ("a", ["b", "c"], ("a", "b")),  # else the first tool called
        ("a", [], ("a", None)),  # no call at all
    ],
)
def test_confusion_pair__table__expected_tool_and_tool_chosen(
    expected: str, actual: list[str], pair: tuple[str, str | None]
) -> None:
    assert confusion_pair(expected, actual) == pair


# Properties over any two lists of names.


def _scores(a: Sequence[str], e: Sequence[str]) -> tuple[float, float, float]:
    m = name_overlap(Counter(a), Counter(e))
    p, r = precision(m, len(a), len(e)), recall(m, len(a), len(e))
    return p, r, f1(p, r)


@given(names, names)
def test_selection__any_lists__every_score_in_unit_interval(a: list[str], e: list[str]) -> None:
    p, r, f = _scores(a, e)
    m = name_overlap(Counter(a), Counter(e))
    values = [p, r, f, set_iou(a, e), set_iou(a, e, ordered=True)]
    values += [partial_credit(m, exact, len(a), len(e)) for exact in range(m + 1)]
    assert all(0.0 <= v <= 1.0 for v in values), values


@given(names, names)
def test_selection__swapped_lists__overlap_iou_f1_symmetric_precision_recall_swap(
    a: list[str], e: list[str]
) -> None:
    assert name_overlap(Counter(a), Counter(e)) == name_overlap(Counter(e), Counter(a))
    assert set_iou(a, e) == set_iou(e, a)
    assert set_iou(a, e, ordered=True) == set_iou(e, a, ordered=True)
    p, r, f = _scores(a, e)
    p2, r2, f2 = _scores(e, a)
    assert (p, r) == (r2, p2)
    assert f == pytest.approx(f2, abs=1e-12)


@given(names, names)
def test_name_overlap__any_lists__equals_multiset_intersection(a: list[str], e: list[str]) -> None:
    assert name_overlap(Counter(a), Counter(e)) == sum((Counter(a) & Counter(e)).values())


@given(st.floats(0, 1), st.floats(0, 1))
def test_f1__any_p_r__between_min_and_max(p: float, r: float) -> None:
    f = f1(p, r)
    assert min(p, r) - 1e-12 <= f <= max(p, r) + 1e-12


@given(names, names)
def test_set_iou__any_lists__ordered_never_above_unordered(a: list[str], e: list[str]) -> None:
    assert set_iou(a, e, ordered=True) <= set_iou(a, e) + 1e-12


@given(st.lists(st.sampled_from("abc"), max_size=5), st.lists(st.sampled_from("abc"), max_size=5))
def test_lcs__small_lists__equals_brute_force(a: list[str], b: list[str]) -> None:
    sub_b = {
        tuple(b[i] for i in idx)
        for k in range(len(b) + 1)
        for idx in itertools.combinations(range(len(b)), k)
    }
    best = max(
        k
        for k in range(len(a) + 1)
        for idx in itertools.combinations(range(len(a)), k)
        if tuple(a[i] for i in idx) in sub_b
    )
    assert lcs(a, b, _eq) == best
