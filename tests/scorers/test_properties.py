"""Property tests (hypothesis) of the scorer invariants issue 3 lists."""

from __future__ import annotations

import itertools
import math
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gate.config import ScoringConfig
from gate.errors import agent_failed
from gate.model import Case, OrderMode, Run, ToolCall, ToolResult, Turn
from gate.scorers import ScoringContext, score_sample
from gate.scorers.matching import greedy_matching, hopcroft_karp, matching_size
from gate.scorers.registry import COST_METRICS
from tests.scorers.helpers import case, expected, tool

COUNTS = {
    "must_not_call_violations",
    "duplicate_calls",
    "repeated_failing_calls",
    "required_step_missing",
    # usage: calls, steps and tokens are counts; a cost is money (any non-negative number)
    *(m for m in COST_METRICS if m != "cost"),
}
NAMES = ["a", "b", "c"]
TOOLS = [tool(n) for n in NAMES] + [
    tool("d", {"type": "object", "properties": {"k": {"type": "integer"}}})
]

values = st.sampled_from([1, 2, 2.0, "x", "X ", True, None])
arg_dicts = st.dictionaries(st.sampled_from(["k", "m"]), values, max_size=2)


@st.composite
def calls(draw: Any) -> ToolCall:
    name = draw(st.sampled_from([*NAMES, "d", "zz"]))
    if draw(st.integers(0, 9)) == 0:
        return ToolCall(name, None, raw_arguments="{oops", parse_ok=False)
    return ToolCall(name, draw(arg_dicts))


@st.composite
def turns(draw: Any) -> Turn:
    cs = draw(st.lists(calls(), min_size=1, max_size=3))
    res = tuple(
        ToolResult(None, draw(st.sampled_from(["ok", "HTTP 500"])), draw(st.booleans())) for _ in cs
    )
    return Turn(calls=tuple(cs), tool_results=res)


@st.composite
def scenario(draw: Any) -> tuple[Case, Run]:
    exp = draw(
        st.lists(
            st.builds(
                lambda n, a, x: expected(n, a, exact=x),
                st.sampled_from([*NAMES, "d"]),
                arg_dicts,
                st.booleans(),
            ),
            max_size=4,
        )
    )
    alts = draw(
        st.lists(st.lists(st.builds(expected, st.sampled_from(NAMES)), max_size=2), max_size=1)
    )
    c = case(
        expect=exp,
        no_tool=not exp and draw(st.booleans()),
        alternatives=alts,
        must_not_call=draw(st.lists(st.sampled_from(["C", "functions.d", "x"]), max_size=2)),
        tools=TOOLS,
        order=draw(st.sampled_from([None, "unordered", "strict", "subset", "superset"])),
        step_budget=draw(st.none() | st.integers(1, 4)),
    )
    r = Run(
        case_id="c1",
        sample=0,
        turns=tuple(draw(st.lists(turns(), max_size=4))),
        final=draw(st.none() | st.just("done")),
        error=draw(st.none() | st.just("crash: boom")),
    )
    return c, r


CTX = ScoringContext.build(
    ScoringConfig.model_validate_json(
        '{"required_before": [{"tool": "b", "preceded_by": ["a"]}],'
        ' "arg_scope": [{"tool": "c", "arg": "k"}], "tools": {"b": {"risk": "write"}}}'
    )
)
SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RULES = (
    '"required_before": [{"tool": "b", "preceded_by": ["a"]}],'
    ' "arg_scope": [{"tool": "c", "arg": "k"}], "tools": {"b": {"risk": "write"}}'
)
BY_DEFAULT_ORDER = {
    mode: ScoringContext.build(
        ScoringConfig.model_validate_json(f'{{"default_order": "{mode}", {RULES}}}')
    )
    for mode in OrderMode
}


@SETTINGS
@given(scenario(), st.sampled_from(list(OrderMode)))
def test_pass_rule__any_run_and_order_mode__never_disagrees_with_trajectory_match(
    sc: tuple[Case, Run], default_order: OrderMode
) -> None:
    c, r = sc
    s = score_sample(c, r, BY_DEFAULT_ORDER[default_order])
    if agent_failed(r.error) or (s.scores["trajectory_match"] is None and r.error is not None):
        # no answer to score (the agent or the infrastructure failed it): never a pass
        assert not s.passed and s.scores["trajectory_match"] is None
        return
    holds = s.scores["trajectory_match"] == 1.0
    assert ("order" not in s.failed_checks) is holds
    if s.passed:
        assert holds
    if not holds:
        assert not s.passed


@SETTINGS
@given(scenario())
def test_scores__any_run__rates_in_unit_interval_counts_non_negative(sc: tuple[Case, Run]) -> None:
    c, r = sc
    s = score_sample(c, r, CTX)
    for name, v in s.scores.items():
        if v is None:
            continue
        assert not math.isnan(v), name
        if name in COUNTS:
            assert v >= 0 and float(v).is_integer(), (name, v)
        elif name == "cost":
            assert v >= 0, (name, v)
        else:
            assert 0.0 <= v <= 1.0, (name, v)
    if s.scores["case_passed"] is None:  # a missing sample: not sampled, no check failed
        assert r.error is not None and not s.passed and not s.failed_checks
        return
    assert s.passed is (not s.failed_checks)
    assert s.scores["case_passed"] == (1.0 if s.passed else 0.0)


@SETTINGS
@given(scenario(), calls(), st.booleans())
def test_call_accuracy__extra_actual_call__never_lowers(
    sc: tuple[Case, Run], extra: ToolCall, new_turn: bool
) -> None:
    c, r = sc
    before = score_sample(c, r, CTX).scores["call_accuracy"]
    if new_turn or not r.turns:
        turns = (*r.turns, Turn(calls=(extra,)))
    else:
        last = r.turns[-1]
        turns = (*r.turns[:-1], Turn(calls=(*last.calls, extra), tool_results=last.tool_results))
    after = score_sample(c, Run(r.case_id, r.sample, turns, r.final, r.error), CTX).scores[
        "call_accuracy"
    ]
    # n/a before (an empty expectation list was the best fit) has nothing to lower; a
    # number never goes down: no list's matching shrinks, and a list that stops fitting
    # fully still has its matching.
    if before is not None:
        assert after is not None and after >= before


@SETTINGS
@given(scenario(), st.data())
def test_scores__batch_permuted__no_score_changes(
    sc: tuple[Case, Run], data: st.DataObject
) -> None:
    c, r = sc
    assume(r.turns)
    t = data.draw(st.integers(0, len(r.turns) - 1))
    turn = r.turns[t]
    order = data.draw(st.permutations(range(len(turn.calls))))
    # Results travel with their calls (matched by id), as in a real run.
    calls = [
        ToolCall(
            x.name, x.arguments, id=f"id{i}", raw_arguments=x.raw_arguments, parse_ok=x.parse_ok
        )
        for i, x in enumerate(turn.calls)
    ]
    results = [
        ToolResult(f"id{i}", res.content, res.is_error) for i, res in enumerate(turn.tool_results)
    ]
    a = Turn(calls=tuple(calls), tool_results=tuple(results))
    b = Turn(calls=tuple(calls[i] for i in order), tool_results=tuple(results))
    base = (*r.turns[:t], a, *r.turns[t + 1 :])
    perm = (*r.turns[:t], b, *r.turns[t + 1 :])
    s1 = score_sample(c, Run("c1", 0, base, r.final, r.error), CTX)
    s2 = score_sample(c, Run("c1", 0, perm, r.final, r.error), CTX)
    assert s1.scores == s2.scores
    assert s1.passed == s2.passed and s1.failed_checks == s2.failed_checks


def _brute_force(adj: list[list[int]], n_right: int) -> int:
    best = 0
    for choice in itertools.product(*[[-1, *vs] for vs in adj]):
        used = [v for v in choice if v >= 0]
        if len(used) == len(set(used)):
            best = max(best, len(used))
    return best


graphs = st.integers(0, 5).flatmap(
    lambda n_right: st.tuples(
        st.lists(
            st.lists(st.integers(0, max(n_right - 1, 0)), max_size=n_right, unique=True).map(
                sorted
            ),
            max_size=5,
        )
        if n_right
        else st.lists(st.just([]), max_size=5),
        st.just(n_right),
    )
)


@settings(max_examples=400, deadline=None)
@given(graphs)
def test_matching__any_graph__maximum_and_never_smaller_than_greedy(
    g: tuple[list[list[int]], int],
) -> None:
    adj, n_right = g
    m = hopcroft_karp(adj, n_right)
    # A valid matching: edges exist, right vertices used once.
    used = [v for v in m if v >= 0]
    assert len(used) == len(set(used))
    assert all(v in adj[u] for u, v in enumerate(m) if v >= 0)
    assert matching_size(m) >= matching_size(greedy_matching(adj, n_right))
    assert matching_size(m) == _brute_force(adj, n_right)


def test_matching__large_graph__linear_depth_without_recursion_error() -> None:
    n = 3000
    adj = [[i, i + 1] if i + 1 < n else [i] for i in range(n)]
    adj[0] = [0]
    assert matching_size(hopcroft_karp(adj, n)) == n
