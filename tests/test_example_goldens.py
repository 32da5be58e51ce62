"""The shipped example, end to end through ``toolgate check``: the good agent passes, the
regressed build fails against the good run's base history with the regressed cases named,
the flaky build fails on its suite-level drop and on the absolute ceilings the example's
config sets (``variance:``), never with regressed cases — and report.md / comment.md of
each are golden files. The good run is the third of a chain of base runs, each with the
previous one's results as its baseline (as the baseline-refresh workflow does), so the
base history holds 9 samples per case.

Timing figures (the only part allowed to differ between identical runs) are cleared before
rendering. Regenerate with ``TOOLGATE_UPDATE_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from gate.pipeline import CheckOptions, CheckOutcome, check
from gate.report import render_comment, render_console, render_markdown
from gate.results import Results

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "support-agent"
GOLDEN = ROOT / "tests" / "golden" / "example"
UPDATE = os.environ.get("TOOLGATE_UPDATE_GOLDEN") == "1"
ENV = {"PATH": os.environ.get("PATH", "")}


REFRESHES = 3
"""Runs of the good agent chained as the baseline-refresh workflow chains them (each with
the previous one's results.json as its baseline): 3 runs of 3 samples, a base history of
9 samples per case."""

CONSOLE: dict[Path, str] = {}
"""What each check printed, by its out folder."""


def _check(
    config: str, out: Path, baseline: Path | None = None, source: str = "the good agent's run"
) -> CheckOutcome:
    stream = io.StringIO()
    outcome = _run_check(config, out, baseline, source, stream)
    CONSOLE[out] = stream.getvalue()
    return outcome


def _run_check(
    config: str, out: Path, baseline: Path | None, source: str, stream: io.StringIO
) -> CheckOutcome:
    return check(
        CheckOptions(
            config_path=EXAMPLE / config,
            config_display=f"examples/support-agent/{config}",
            out=out,
            baseline=str(baseline) if baseline else "none",
            baseline_source=source if baseline else None,
            progress=False,
        ),
        ENV,
        stream,
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, CheckOutcome]]:
    tmp = tmp_path_factory.mktemp("example")
    old = Path.cwd()
    os.chdir(ROOT)  # reports name files relative to the working directory
    try:
        base: Path | None = None
        for i in range(REFRESHES - 1):
            _check("toolgate.yml", tmp / f"base-{i}", base, "the previous base run")
            base = tmp / f"base-{i}" / "results.json"
        good = _check("toolgate.yml", tmp / "good", base, "the previous base run")
        out = {
            "good": good,
            "good-again": _check("toolgate.yml", tmp / "good-again", base, "the previous base run"),
            "regressed": _check(
                "toolgate.regressed.yml", tmp / "regressed", tmp / "good/results.json"
            ),
            "flaky": _check("toolgate.flaky.yml", tmp / "flaky", tmp / "good/results.json"),
        }
        yield out
    finally:
        os.chdir(old)


def _untimed(results: Results) -> Results:
    return results.model_copy(update={"timing": {}})


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
        return
    assert path.exists(), f"missing golden {path}; run with TOOLGATE_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from its golden file"


def test_example__good_agent__passes(runs: dict[str, CheckOutcome]) -> None:
    good = runs["good"]
    assert good.exit_code == 0
    assert good.results.verdict is not None and good.results.verdict.passed
    assert good.results.hard_failures == []


def test_example__regressed_agent__fails_naming_flipped_cases(
    runs: dict[str, CheckOutcome],
) -> None:
    reg = runs["regressed"]
    assert reg.exit_code == 1
    comparison = reg.results.comparison
    assert comparison is not None and comparison.comparable
    regressions = [f.case_id for f in comparison.flips if f.kind == "regression"]
    assert regressions, "the regressed build flips cases"
    reasons = "\n".join(reg.results.verdict.reasons if reg.results.verdict else [])
    assert any(cid in reasons for cid in regressions)
    assert reg.results.hard_failures, "it skips verification and deletes accounts"


def test_example__flaky_agent__stopped_by_variance_guard_not_regressions(
    runs: dict[str, CheckOutcome],
) -> None:
    flaky = runs["flaky"]
    assert flaky.exit_code == 1
    verdict = flaky.results.verdict
    assert verdict is not None and not verdict.variance.passed
    assert verdict.regressions == 0, "flaky cases are never regressed cases"
    policy = flaky.results.policy
    assert policy is not None and "regressed" not in policy.outcomes
    assert any(r.startswith("suite-level drop") for r in verdict.reasons)


def test_example__good_agent__history_grows_by_each_base_run(
    runs: dict[str, CheckOutcome],
) -> None:
    good = runs["good"].results
    assert good.policy is not None and good.policy.outcomes == {"unchanged": len(good.cases)}
    for case in good.cases:
        assert case.hash is not None and case.test is not None
        assert case.test.base_samples == 3 * (REFRESHES - 1)
        assert sum(e.samples for e in case.history) == 3 * REFRESHES


def test_example__regressed_agent__regressed_cases_carry_counts_and_p_values(
    runs: dict[str, CheckOutcome],
) -> None:
    reg = runs["regressed"].results
    assert reg.comparison is not None
    flips = [f for f in reg.comparison.flips if f.kind == "regression"]
    assert flips and all(f.p_value is not None and f.p_value < 0.05 for f in flips)
    assert all(f.base_samples == 3 * REFRESHES for f in flips)
    assert {f.case_id for f in flips} == {
        c.id for c in reg.cases if c.test is not None and c.test.outcome == "regressed"
    }


def test_example__same_inputs__identical_results_and_report_apart_from_timing(
    runs: dict[str, CheckOutcome],
) -> None:
    a, b = (runs[k].results for k in ("good", "good-again"))
    dump = [json.dumps(_untimed(r).model_dump(mode="json"), sort_keys=True) for r in (a, b)]
    assert dump[0] == dump[1]
    assert render_markdown(_untimed(a)) == render_markdown(_untimed(b))
    ra, rb = (runs[k].out / "report.md" for k in ("good", "good-again"))
    assert ra.exists() and rb.exists()


@pytest.mark.parametrize("name", ["good", "regressed", "flaky"])
def test_example__reports__match_golden(runs: dict[str, CheckOutcome], name: str) -> None:
    results = _untimed(runs[name].results)
    _golden(f"{name}.report.md", render_markdown(results))
    _golden(f"{name}.comment.md", render_comment(results))
    _golden(f"{name}.console.txt", render_console(results))


@pytest.mark.parametrize("name", ["good", "regressed", "flaky"])
def test_example__console__the_summary_then_where_the_files_are(
    runs: dict[str, CheckOutcome], name: str
) -> None:
    out = runs[name].out
    printed = CONSOLE[out]
    assert printed.startswith(render_console(runs[name].results))
    last = printed.rstrip("\n").splitlines()[-1]
    assert last.startswith("wrote results.json, report.md, junit.xml, comment.md to ")
    assert last.endswith(f"{out}/")


def test_example__regressed_console__must_not_call_first_one_line_per_case(
    runs: dict[str, CheckOutcome],
) -> None:
    lines = render_console(runs["regressed"].results).splitlines()
    hard = [x.strip() for x in lines if x.strip().startswith("✗ ") and " samples " in x]
    kinds = [x.split()[1] for x in hard]
    assert kinds == sorted(kinds, key=lambda k: k != "must_not_call")
    assert kinds.count("must_not_call") == 4, "every must-not-call case is shown"
    cases = [(x.split()[1], x.split()[2]) for x in hard]
    assert len(cases) == len(set(cases)), "one line per case and rule"


@pytest.mark.parametrize("name", ["good", "regressed", "flaky"])
def test_example__report_command__reproduces_checks_files_byte_for_byte(
    runs: dict[str, CheckOutcome], name: str, tmp_path: Path
) -> None:
    from gate.cli import main

    out = runs[name].out
    for file, fmt in (("comment.md", "comment"), ("report.md", "md"), ("junit.xml", "junit")):
        again = tmp_path / file
        assert (
            main(["report", str(out / "results.json"), "--format", fmt, "--out", str(again)]) == 0
        )
        assert again.read_bytes() == (out / file).read_bytes(), f"{file} of {name} differs"
