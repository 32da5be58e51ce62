"""The variance guards on a flaky-agent fixture: an agent that passes 2 of 3 samples on
some cases is not blocked by its unlucky samples, and is blocked when its flakiness
exceeds the configured share or its spread the configured std."""

from __future__ import annotations

from tests.policy.helpers import decide_results as decide
from tests.policy.helpers import make_config, results_from_table


def flaky_agent(flaky_cases: int, total: int = 20) -> dict[str, str]:
    """Passes every sample on most cases, 2 of 3 on ``flaky_cases`` of them."""
    return {f"case-{i:02d}": ("PFP" if i < flaky_cases else "PPP") for i in range(total)}


def test_flaky_agent__one_unlucky_sample_does_not_block_the_merge():
    cfg = make_config(
        samples=3,
        gates=[{"metric": "case_passed", "min": 0.9}],
        variance={"max_flaky_share": 0.2, "max_std": 0.2},
    )
    r = results_from_table(flaky_agent(2), config=cfg)
    out = decide(r, cfg, None, None)
    v = out.verdict
    assert v is not None and v.passed, v.reasons
    # the gate decided on the mean: 2 cases at 2/3, 18 at 3/3
    assert v.gates[0].value is not None and abs(v.gates[0].value - (18 + 4 / 3) / 20) < 1e-9
    assert v.variance.flaky_share == 0.1 and list(v.variance.flaky_cases) == ["case-00", "case-01"]


def test_flaky_agent__blocked_when_flakiness_exceeds_the_share():
    cfg = make_config(samples=3, variance={"max_flaky_share": 0.2})
    out = decide(results_from_table(flaky_agent(6), config=cfg), cfg, None, None)
    v = out.verdict
    assert v is not None and not v.passed
    assert list(v.variance.reasons) == [
        "flaky share 0.300 > 0.200 (max_flaky_share) — 6 of 20 cases flaky: case-00 (2/3), "
        "case-01 (2/3), case-02 (2/3), case-03 (2/3), case-04 (2/3), … (+1 more)"
    ]
    # the mean alone would have passed a 0.75 gate: the guard is what blocks
    assert out.metrics["case_passed"].mean is not None and out.metrics["case_passed"].mean > 0.75


def test_flaky_agent__blocked_when_the_std_over_samples_is_too_wide():
    # every case fails on sample 1 only: dataset pass rate per sample is 1, 0, 1
    table = {f"c{i}": "PFP" for i in range(10)}
    cfg = make_config(samples=3, variance={"max_std": 0.1})
    v = decide(results_from_table(table, config=cfg), cfg, None, None).verdict
    assert v is not None and not v.passed
    assert v.variance.worst_metric == "case_passed"
    assert (
        v.variance.observed_max_std is not None
        and abs(v.variance.observed_max_std - 0.57735) < 1e-4
    )
    assert v.variance.reasons[0].startswith(
        "std over samples of case_passed 0.577 > 0.100 (max_std)"
    )


def test_variance_guards_with_one_sample__not_computed_never_a_failure():
    cfg = make_config(variance={"max_std": 0.1, "max_flaky_share": 0.5})
    v = decide(results_from_table({"a": "P"}, config=cfg), cfg, None, None).verdict
    assert v is not None and v.passed, v.reasons
    assert list(v.variance.reasons) == []
    assert [r.split(":")[0] for r in v.variance.not_computed] == [
        "variance.max_std 0.100",
        "variance.max_flaky_share 0.500",
    ]
    assert all("not computed" in r and "2 samples" in r for r in v.variance.not_computed)


def test_no_variance_section__guards_off():
    v = decide(results_from_table(flaky_agent(20)), make_config(), None, None).verdict
    assert v is not None and v.passed and v.variance.passed


def test_example__check_with_one_sample__exit_0_guards_not_computed(tmp_path):
    """`toolgate check --samples 1` on the shipped example, whose config sets both
    guards: it runs to its verdict (exit 0), says the guards were not computed, and is
    never shown green."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "out"
    got = subprocess.run(
        [
            sys.executable, "-m", "gate", "check", "--samples", "1", "--config",
            str(root / "examples" / "support-agent" / "toolgate.yml"), "--out", str(out),
            "--baseline", "none", "--no-progress", "--no-comment",
        ],
        capture_output=True, text=True, timeout=300, check=False,
        env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert got.returncode == 0, got.stdout + got.stderr
    verdict = next(line for line in got.stdout.splitlines() if line.startswith("ToolGate support"))
    assert verdict.startswith("ToolGate support-agent: PASSED")
    assert "variance guard not computed (one sample per case)" in verdict
    assert "no data" not in got.stdout
    comment = (out / "comment.md").read_text()
    assert comment.splitlines()[1].startswith("## ⚠️ ToolGate `support-agent` passed")
    report = (out / "report.md").read_text()
    assert "- ⚪ not computed: a guard needs at least 2 samples per case" in report
    assert "✅ within limits" not in report
