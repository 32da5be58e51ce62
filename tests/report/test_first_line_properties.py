"""The first line's sentences against their counts, over generated comparisons: a base
and a head results file with random outcomes per case, compared the way ``toolgate report
--baseline`` compares them (:func:`gate.commands.report.load_with_baseline`), then the
heading of the view. Every count the first line says is the count of cases it names."""

from __future__ import annotations

import dataclasses
import re
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from gate.commands.report import load_with_baseline
from gate.model import FlipKind
from gate.report.sentences import Code
from gate.report.view import view
from gate.results import Results
from tests.report.fixtures import _case, _sample, passing

EV = {"expected": [{"name": "lookup_order", "args": {}}], "actual": []}


def _results(outcomes: list[list[bool]]) -> Results:
    cases = [
        _case(
            f"case-{i}",
            i + 1,
            [
                _sample(j, ok, {} if ok else EV, [] if ok else ["calls_matched"])
                for j, ok in enumerate(s)
            ],
            tools=["lookup_order"],
        )
        for i, s in enumerate(outcomes)
    ]
    base = passing()
    ds = dataclasses.replace(base.dataset, cases=len(cases))
    n = max(len(s) for s in outcomes)
    return base.model_copy(
        update={"cases": cases, "dataset": ds, "comparison": None, "verdict": None, "samples": n}
    )


def _compare(base: list[list[bool]], head: list[list[bool]]) -> Results:
    with tempfile.TemporaryDirectory() as tmp:
        b, h = Path(tmp) / "base.json", Path(tmp) / "head.json"
        b.write_text(_results(base).model_dump_json(), "utf-8")
        h.write_text(_results(head).model_dump_json(), "utf-8")
        return load_with_baseline(h, str(b))


def _first_line(results: Results) -> str:
    return "".join(f"`{p}`" if isinstance(p, Code) else str(p) for p in view(results).heading.why)


def _said(line: str, pattern: str) -> int:
    m = re.search(pattern, line)
    return int(m.group(1)) if m else 0


WORSE = r"\b(\d+) cases? got worse, too few samples to tell"
BEFORE = r"\b(\d+) cases? fails? as before"
BETTER = r"\b(\d+) cases? got better, too few samples to tell"

one_sample = st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=12)


@settings(max_examples=40, deadline=None)
@given(one_sample)
def test_first_line__one_sample_each_side__every_count_is_the_real_one(
    pairs: list[tuple[bool, bool]],
) -> None:
    results = _compare([[b] for b, _ in pairs], [[h] for _, h in pairs])
    line = _first_line(results)
    lost = [f"case-{i}" for i, (b, h) in enumerate(pairs) if b and not h]
    both = [i for i, (b, h) in enumerate(pairs) if not b and not h]
    fixed = [i for i, (b, h) in enumerate(pairs) if not b and h]
    assert _said(line, WORSE) == len(lost), line
    assert _said(line, BEFORE) == len(both), line
    assert _said(line, BETTER) == len(fixed), line
    assert re.findall(r"`(case-\d+)`", line) == lost[:3], line  # named, up to three
    assert not re.search(r"flaky|noise", line, re.I), line


samples = st.lists(st.booleans(), min_size=1, max_size=3)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(samples, samples), min_size=1, max_size=10))
def test_first_line__any_samples__counts_agree_with_the_classification(
    pairs: list[tuple[list[bool], list[bool]]],
) -> None:
    results = _compare([b for b, _ in pairs], [h for _, h in pairs])
    line = _first_line(results)
    assert results.comparison is not None
    flips = results.comparison.flips
    moved = {f.case_id for f in flips if FlipKind(f.kind) is not FlipKind.NOISE}
    worse = [
        f
        for f in flips
        if FlipKind(f.kind) is FlipKind.UNDECIDED
        and f.head_pass_rate is not None
        and f.base_pass_rate is not None
        and f.head_pass_rate < f.base_pass_rate
    ]
    assert _said(line, WORSE) == len(worse), line
    # "fail as before": failed a sample on both sides, and no other clause counts it
    before = [
        f"case-{i}"
        for i, (b, h) in enumerate(pairs)
        if not all(b) and not all(h) and f"case-{i}" not in moved
    ]
    assert _said(line, BEFORE) == len(before), (line, pairs, [(f.case_id, f.kind) for f in flips])


def test_undecided__action_output_junit_and_view_agree() -> None:
    """Two cases lost with one sample each side: the view names them, the Action's
    ``undecided`` output and JUnit's ``undecided`` property count them."""
    from gate.github.workflow import outputs_for
    from gate.report.junit import render_junit

    pairs = [(True, False), (True, False), (False, False), (True, True), (False, True)]
    results = _compare([[b] for b, _ in pairs], [[h] for _, h in pairs])
    assert _said(_first_line(results), WORSE) == 2
    assert outputs_for(results, "results.json")["undecided"] == "2"
    assert '<property name="undecided" value="2" />' in render_junit(results)


def test_not_run__whole_cases_and_some_samples__each_named_in_the_first_line_never_green() -> None:
    """``agent.missing: skip``: a case with no run at all and a case short of some runs
    are both named, with the samples lost, in the first line and the missing section;
    the heading is never ✅ (nothing was compared for those samples)."""
    from gate.report.cases import missing
    from gate.report.view import status
    from gate.results.schema import MissingInfo
    from tests.report.fixtures import passing

    results = passing()
    assert status(results)[0] == "✅" and not missing(results)
    whole = "1 case not run (agent.missing: skip): `order-status-1`"
    short = "1 case with 1 sample not run (agent.missing: skip): `refund-1`"
    for not_run, said in (
        ({"order-status-1": 3, "refund-1": 1}, [whole, short]),
        ({"refund-1": 1}, [short]),
    ):
        n = sum(not_run.values())
        gone = MissingInfo(count=n, planned=9, per_case=not_run, by_reason={"not_run": n},
                           not_run=not_run)  # fmt: skip
        line = _first_line(results.model_copy(update={"missing": gone}))
        assert [x for x in (whole, short) if x in line] == said, line
        assert "order-status-2" not in line, line
        assert status(results.model_copy(update={"missing": gone}))[0] == "⚠️"
        (section,) = missing(results.model_copy(update={"missing": gone}))
        paras = ["".join(para.text) for para in section.intro]
        assert len(paras) == len(said), paras
        assert paras[-1].startswith("Not run: 1 sample of 1 case (refund-1). The runs file lacks")
