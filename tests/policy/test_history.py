"""The base history: appending, restarting on a changed hash, the window, the hash."""

from __future__ import annotations

import pytest

from gate.policy.history import (
    CaseRun,
    Comparability,
    HistoryEntry,
    MetricSums,
    case_hash,
    extend,
    legacy_case_hash,
    lookup,
    setup_hash,
    trim,
)


def test_extend__same_hash__appends_the_run():
    h = extend(None, [CaseRun("a", "h1", 2, 2)])
    h = extend(h, [CaseRun("a", "h1", 1, 2)])
    got = h.cases["a"]
    assert (got.passes, got.samples, len(got.entries)) == (3, 4, 2)


def test_extend__changed_hash__history_restarts_and_lookup_says_changed():
    h = extend(None, [CaseRun("a", "h1", 50, 50)])
    assert lookup(h, "a", "h2") == (Comparability.CHANGED, None)
    h = extend(h, [CaseRun("a", "h2", 0, 2)])
    assert (h.cases["a"].passes, h.cases["a"].samples) == (0, 2)


def test_extend__case_left_the_dataset__dropped():
    h = extend(None, [CaseRun("a", "h", 1, 1), CaseRun("b", "h", 1, 1)])
    assert set(extend(h, [CaseRun("a", "h", 1, 1)]).cases) == {"a"}


def test_extend__window__drops_oldest_runs_whole_keeps_newest():
    h = None
    for s in (2, 1, 0):
        h = extend(h, [CaseRun("a", "h", s, 2)], window=4)
    assert [e.passes for e in h.cases["a"].entries] == [1, 0]
    # a single run larger than the window is still kept
    assert trim([HistoryEntry(1, 1), HistoryEntry(9, 9)], 4) == (HistoryEntry(9, 9),)


def test_extend__duplicate_case__refused():
    with pytest.raises(ValueError, match="twice"):
        extend(None, [CaseRun("a", "h", 1, 1), CaseRun("a", "h", 1, 1)])


def test_lookup__unknown_case_or_no_history__new():
    assert lookup(None, "a", "h") == (Comparability.NEW, None)
    assert lookup(extend(None, [CaseRun("b", "h", 1, 1)]), "a", "h")[0] is Comparability.NEW


def test_metric_sums__accumulate_over_entries_skip_na():
    h = extend(None, [CaseRun("a", "h", 1, 2, {"f1": MetricSums.of([1.0, None])})])
    h = extend(h, [CaseRun("a", "h", 1, 2, {"f1": MetricSums.of([0.5, 0.0])})])
    m = h.cases["a"].metric("f1")
    assert (m.n, m.mean) == (3, 0.5)
    assert h.cases["a"].metric("other").mean is None


def test_case_hash__key_order_irrelevant__case_or_scoring_change_matters():
    a = case_hash(case={"id": 1, "x": [1, 2]}, scoring={})
    assert a == case_hash(case={"x": [1, 2], "id": 1}, scoring={})
    assert case_hash(case={"id": 1, "x": [2, 1]}, scoring={}) != a
    assert case_hash(case={"id": 1, "x": [1, 2]}, scoring={"normalize": True}) != a


def test_setup_hash__agent_or_tool_definition_change_matters():
    a = setup_hash(agent={"model": "g"}, tools={"t": "d1"})
    assert a == setup_hash(agent={"model": "g"}, tools={"t": "d1"})
    assert setup_hash(agent={"model": "h"}, tools={"t": "d1"}) != a
    assert setup_hash(agent={"model": "g"}, tools={"t": "d2"}) != a


def test_legacy_case_hash__the_previous_release_hash_of_all_four_parts():
    parts = {"case": {"id": 1}, "tools": {"t": "d"}, "agent": {"kind": "command"}, "scoring": {}}
    a = legacy_case_hash(**parts)
    for changed in ({"tools": {"t": "e"}}, {"agent": {"kind": "python"}}):
        assert legacy_case_hash(**(parts | changed)) != a
    assert a != case_hash(case={"id": 1}, scoring={})


def test_extend__same_hash_new_setup__history_restarts_from_the_run():
    """The base branch changed the agent (or a tool): its older runs describe another
    agent, so the history keeps only the run made under the new setup."""
    h = extend(None, [CaseRun("a", "h", 40, 40, setup="s1")])
    h = extend(h, [CaseRun("a", "h", 2, 2, setup="s1")])
    assert (h.cases["a"].samples, h.cases["a"].setup) == (42, "s1")
    h = extend(h, [CaseRun("a", "h", 1, 2, setup="s2")])
    assert (h.cases["a"].passes, h.cases["a"].samples, h.cases["a"].setup) == (1, 2, "s2")
    assert lookup(h, "a", "h")[0] is Comparability.COMPARABLE


def test_extend__history_without_setup__keeps_its_runs_and_takes_the_runs_setup():
    h = extend(None, [CaseRun("a", "h", 9, 9)])
    h = extend(h, [CaseRun("a", "h", 3, 3, setup="s1")])
    assert (h.cases["a"].samples, h.cases["a"].setup) == (12, "s1")
