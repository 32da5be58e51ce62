"""The scoring context's cache of compiled cases is bounded (a large dataset's compiled
cases would otherwise all stay in memory, in every scoring worker)."""

from __future__ import annotations

import pytest

from gate.scorers import ScoringContext, score_sample
from gate.scorers import context as context_module
from tests.scorers.helpers import call, case, expected, run


def test_compile__more_cases_than_the_cache_holds__bounded_and_same_scores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(context_module, "CASE_CACHE_SIZE", 8)
    ctx = ScoringContext.build()
    fresh = ScoringContext.build()
    cases = [case(f"c{i}", expect=[expected("lookup", {"id": i})]) for i in range(50)]
    for c in cases:
        r = run([call("lookup", {"id": 1})], case_id=c.id)
        assert score_sample(c, r, ctx) == score_sample(c, r, ScoringContext.build())
        assert len(ctx._cases) <= 8
    # A case compiled again after the cache started afresh scores the same.
    first = cases[0]
    r = run([call("lookup", {"id": 0})], case_id=first.id)
    assert score_sample(first, r, ctx) == score_sample(first, r, fresh)
