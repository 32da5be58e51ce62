"""Seeded, deterministic choice of what the judge sees under a rate and a budget."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from gate.judge.rubrics import JudgeItem
from gate.judge.sample import priority, select

RUBRICS = ["a", "b"]


def items_for(case_samples: list[tuple[str, int]], per: int = 2) -> list[JudgeItem]:
    out = []
    for cid, s in case_samples:
        out.append(JudgeItem("a", cid, s, "", {}))
        out.extend(JudgeItem("b", cid, s, f"t#{k}", {}) for k in range(per - 1))
    return out


def cs(n: int, samples: int = 1) -> list[tuple[str, int]]:
    return [(f"case-{i:03d}", s) for i in range(n) for s in range(samples)]


def test_select__rate__exactly_ceil_share_of_case_samples() -> None:
    keys = cs(10, 3)
    sel = select(
        keys, items_for(keys), rubric_order=RUBRICS, rate=0.25, max_evaluations=10_000, seed=1
    )
    assert sel.sampled_case_samples == math.ceil(0.25 * 30) == 8
    assert len({(i.case_id, i.sample) for i in sel.chosen}) == 8
    assert sel.not_sampled == {"a": 22, "b": 22}
    assert sel.skipped_for_budget == {"a": 0, "b": 0}


def test_select__budget__takes_whole_case_samples_in_priority_order_then_stops() -> None:
    keys = cs(10)
    sel = select(keys, items_for(keys), rubric_order=RUBRICS, rate=1.0, max_evaluations=5, seed=0)
    assert len(sel.chosen) == 5
    assert sum(sel.skipped_for_budget.values()) == 15
    order = sorted(keys, key=lambda k: priority(0, *k))
    assert [(i.case_id, i.rubric) for i in sel.chosen] == [
        (order[0][0], "a"), (order[0][0], "b"),
        (order[1][0], "a"), (order[1][0], "b"),
        (order[2][0], "a"),
    ]  # fmt: skip


def test_select__zero_budget__nothing_judged_all_counted() -> None:
    keys = cs(3)
    sel = select(keys, items_for(keys), rubric_order=RUBRICS, rate=1.0, max_evaluations=0, seed=0)
    assert sel.chosen == () and sel.skipped_for_budget == {"a": 3, "b": 3}


def test_select__other_seed__other_choice() -> None:
    keys = cs(40)
    pick = [
        {
            i.case_id
            for i in select(
                keys, items_for(keys), rubric_order=RUBRICS, rate=0.2, max_evaluations=999, seed=s
            ).chosen
        }
        for s in (0, 1)
    ]
    assert pick[0] != pick[1] and len(pick[0]) == len(pick[1]) == 8


@settings(max_examples=50, deadline=None)
@given(
    n=st.integers(1, 40),
    rate=st.floats(0.01, 1.0),
    budget=st.integers(0, 100),
    seed=st.integers(0, 2**31),
    data=st.data(),
)
def test_select__any_input__deterministic_order_free_and_counts_add_up(
    n: int, rate: float, budget: int, seed: int, data: st.DataObject
) -> None:
    keys = cs(n)
    items = items_for(keys, per=3)
    shuffled = data.draw(st.permutations(items))
    a = select(keys, items, rubric_order=RUBRICS, rate=rate, max_evaluations=budget, seed=seed)
    b = select(
        list(reversed(keys)),
        shuffled,
        rubric_order=RUBRICS,
        rate=rate,
        max_evaluations=budget,
        seed=seed,
    )
    assert {(i.rubric, i.case_id, i.item) for i in a.chosen} == {
        (i.rubric, i.case_id, i.item) for i in b.chosen
    }
    assert len(a.chosen) <= budget
    total = len(a.chosen) + sum(a.not_sampled.values()) + sum(a.skipped_for_budget.values())
    assert total == len(items)


def test_select__case_added__earlier_choice_kept_at_full_rate_and_budget() -> None:
    keys = cs(20)
    before = select(
        keys, items_for(keys), rubric_order=RUBRICS, rate=1.0, max_evaluations=999, seed=3
    )
    more = [*keys, ("case-new", 0)]
    after = select(
        more, items_for(more), rubric_order=RUBRICS, rate=1.0, max_evaluations=999, seed=3
    )

    def ids(sel):
        return {(i.rubric, i.case_id, i.item) for i in sel.chosen}

    assert ids(before) <= ids(after)
