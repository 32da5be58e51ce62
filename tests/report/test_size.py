"""Size limits: the comment fits GitHub's 65,536 characters and the full report the step
summary's 1 MiB, keeping the verdict, the hard failures and the worst flips, and saying
how many rows were left out and where the full report is."""

from __future__ import annotations

from typing import Any

import pytest

from gate.report import render_comment, render_markdown
from gate.report.fit import Block, fit, utf8_len, utf16_len
from gate.results import Results
from tests.report.fixtures import failing


def huge(n_cases: int = 3_000, n_hard: int = 40, emoji: bool = False) -> Results:
    """A failing run with thousands of regressions, long arguments and many hard failures.
    Regressions up to ``reg-0049`` drop most (3/3 → 0/3), later ones less."""
    data: dict[str, Any] = failing().model_dump(mode="json")
    filler = ("🙂" if emoji else "x") * 400
    template = data["cases"][1]  # refund-wrong-amount: failing with evidence
    cases, flips = [], []
    for i in range(n_cases):
        c = {**template, "id": f"reg-{i:04d}", "line": i + 1}
        c["samples"] = [
            {**s, "evidence": {**s["evidence"], "summary": f"wrong {filler}"}} for s in c["samples"]
        ]
        cases.append(c)
        # The 40 with a hard failure are shown there; the next 10 drop most of the rest.
        base = 1.0 if i < 50 else 0.6666666666666666
        flips.append(
            {
                "case_id": c["id"],
                "kind": "regression",
                "base_pass_rate": base,
                "head_pass_rate": 0.0,
                "base_samples": 3,
                "head_samples": 3,
                "failed_checks": ["call_accuracy"],
                "line": i + 1,
            }
        )
    data["cases"] = cases
    data["comparison"]["flips"] = flips
    data["hard_failures"] = [
        {**data["hard_failures"][0], "case_id": f"reg-{i:04d}", "sample": 0} for i in range(n_hard)
    ]
    return Results.model_validate(data)


@pytest.fixture(scope="module")
def big() -> Results:
    return huge()


def test_comment__huge_run__fits_and_keeps_what_matters(big: Results) -> None:
    body = render_comment(big)
    assert utf16_len(body) <= 65_000
    assert body.startswith("<!-- toolgate:comment name=support-agent -->\n## ❌ ToolGate")
    assert "### 🛑 Hard failures (40 cases [40 samples], 40 of them regressions)" in body
    # the 40 broke one rule the same way: one row names them all, once, with their counts
    assert "| `must_not_call` |" in body and "| 40 cases: `reg-0000` 3/3 → 0/3, " in body
    for i in range(40):
        assert body.count(f"`reg-{i:04d}` 3/3 → 0/3") == 1
    for i in range(40, 50):  # the worst other flips (3/3 → 0/3) come first and are kept
        assert f"`reg-{i:04d}` <sub>line {i + 1}</sub> | 3/3 → 0/3" in body
    assert "Shortened to fit GitHub's comment size limit" in body
    assert "rows were left out" in body and "step summary" in body
    assert "more regressions left out" in body


def test_comment__small_limit__still_keeps_verdict_failures_and_worst_flips(big: Results) -> None:
    body = render_comment(big, max_chars=20_000)
    assert utf16_len(body) <= 20_000
    assert "### 🛑 Hard failures (40 cases [40 samples], 40 of them regressions)" in body
    assert body.count("| 3/3 → 0/3 |") >= 10
    shown = body.count("| 3/3 → 0/3 |") + body.count("| 2/3 → 0/3 |")
    assert f"_… and {3_000 - 40 - shown:,} more regressions left out;" in body


def test_comment__non_bmp_data__counted_in_utf16_units() -> None:
    body = render_comment(huge(n_cases=600, emoji=True))
    assert utf16_len(body) <= 65_000


def test_comment__report_url__named_where_the_full_report_is(big: Results) -> None:
    body = render_comment(big, report_url="https://github.test/o/r/actions/runs/9")
    assert "(https://github.test/o/r/actions/runs/9)" in body


def test_markdown__huge_run__fits_step_summary(big: Results) -> None:
    text = render_markdown(big)
    assert utf8_len(text) <= 1_000_000
    assert "### 🛑 Hard failures (40 cases [40 samples], 40 of them regressions)" in text
    assert "more failing cases left out" in text or "cases left out" in text


def test_markdown__small_budget__cut_and_says_so(big: Results) -> None:
    text = render_markdown(big, max_bytes=50_000)
    assert utf8_len(text) <= 50_000
    assert "every case and sample is in `results.json`" in text


def test_fit__rank_order__lowest_rank_cut_first() -> None:
    blocks = [
        Block(head=["# title"]),
        Block(["## keep"], [f"k{i}" for i in range(50)], keep=5, cut=2, what="keepers"),
        Block(["## first"], [f"f{i}" for i in range(50)], keep=0, cut=1, what="firsts"),
    ]
    full = fit(blocks, 10_000, measure=len, where="see x")
    assert full.left_out == 0
    out = fit(blocks, 300, measure=len, where="see x")
    assert len(out.text) <= 300
    assert "k49" in out.text  # rank 2 untouched while rank 1 could make room
    assert "more firsts left out" in out.text


def test_fit__impossible_budget__hard_cut_closes_details() -> None:
    blocks = [
        Block(head=["<details>", "<summary>x</summary>", "", *["line " * 20] * 50, "</details>"])
    ]
    out = fit(blocks, 500, measure=len, where="see y")
    assert len(out.text) <= 500 and out.hard_cut
    assert out.text.count("<details>") == out.text.count("</details>")
    assert "cut here" in out.text
