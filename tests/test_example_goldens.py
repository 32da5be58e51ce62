"""The shipped example, end to end through ``toolgate check``, as README.md runs it: the
good agent's run is a base run (``--base-run``: it seeds every case's history up to
``policy.min_history``), then the regressed build fails against it with its broken cases
as regressions, and the flaky build fails on its suite-level drop and on the absolute
ceilings the example's config sets (``variance:``) — and report.md / comment.md /
console of each are golden files. ``toolgate diff`` on each pair gives the flips the check
gave.

The baseline is named as README.md's commands name it (``--baseline
toolgate-out/results.json`` is "file toolgate-out/results.json"), so the comment the
README shows is the one its commands print. Timing figures (the only part allowed to
differ between identical runs) are cleared before rendering. Regenerate with
``TOOLGATE_UPDATE_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from gate.pipeline import CheckOptions, CheckOutcome, check
from gate.report import fmt as figures
from gate.report import render_comment, render_console, render_markdown
from gate.results import Results

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "support-agent"
GOLDEN = ROOT / "tests" / "golden" / "example"
UPDATE = os.environ.get("TOOLGATE_UPDATE_GOLDEN") == "1"
ENV = {"PATH": os.environ.get("PATH", "")}


MIN_HISTORY = 36
"""``policy.min_history``'s default: the base run brings each case to it."""

CONSOLE: dict[Path, str] = {}
"""What each check printed, by its out folder."""


def _check(
    config: str,
    out: Path,
    baseline: Path | None = None,
    source: str = "file toolgate-out/results.json",
    *,
    base_run: bool = False,
) -> CheckOutcome:
    stream = io.StringIO()
    outcome = check(
        CheckOptions(
            config_path=EXAMPLE / config,
            config_display=f"examples/support-agent/{config}",
            out=out,
            baseline=str(baseline) if baseline else "none",
            baseline_source=source if baseline else None,
            progress=False,
            base_run=base_run,
        ),
        ENV,
        stream,
        log=stream,  # the bill first, then the report: one console
    )
    CONSOLE[out] = stream.getvalue()
    return outcome


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, CheckOutcome]]:
    tmp = tmp_path_factory.mktemp("example")
    old = Path.cwd()
    os.chdir(ROOT)  # reports name files relative to the working directory
    try:
        good = _check("toolgate.yml", tmp / "good", base_run=True)
        out = {
            "good": good,
            "plain": _check("toolgate.yml", tmp / "plain"),
            "good-again": _check("toolgate.yml", tmp / "good-again", base_run=True),
            "regressed": _check(
                "toolgate.regressed.yml", tmp / "regressed", tmp / "good/results.json"
            ),
            "flaky": _check("toolgate.flaky.yml", tmp / "flaky", tmp / "good/results.json"),
        }
        # the regressed build against the plain base run (3 samples per case)
        out["regressed-plain"] = _check(
            "toolgate.regressed.yml", tmp / "regressed-plain", tmp / "plain/results.json"
        )
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


def test_example__flaky_agent__stopped_by_the_suite_test_and_the_ceilings(
    runs: dict[str, CheckOutcome],
) -> None:
    flaky = runs["flaky"]
    assert flaky.exit_code == 1
    verdict = flaky.results.verdict
    assert verdict is not None and not verdict.variance.passed
    assert any(r.startswith("suite-level drop") for r in verdict.reasons)


def test_example__history_section__folds_changed_cases_as_not_comparable_never_new_ones(
    runs: dict[str, CheckOutcome],
) -> None:
    """A case whose content changed since its history is listed as not comparable; a case
    with no history at all (new) is not, nor is an undecided one."""
    import dataclasses

    from gate.model import CaseOutcome, Comparability
    from gate.report.cases import history
    from gate.report.parts import Key

    results = runs["flaky"].results
    cases = list(results.cases)
    tested = [i for i, c in enumerate(cases) if c.test is not None and c.passed]
    assert len(tested) >= 2
    for i, why in zip(tested, (Comparability.CHANGED, Comparability.NEW), strict=False):
        test = dataclasses.replace(
            cases[i].test, outcome=CaseOutcome.NOT_COMPARABLE, comparability=why
        )
        cases[i] = cases[i].model_copy(update={"test": test})
    sections = history(results.model_copy(update={"cases": cases}))
    folded = [s for s in sections if s.key is Key.NOT_COMPARABLE]
    assert len(folded) == 1 and folded[0].title == [
        "Not comparable (1) — changed since its history, which starts again"
    ]
    assert folded[0].table is not None
    shown = "".join(str(p) for row in folded[0].table.rows for p in row.cells[0])
    assert cases[tested[0]].id in shown and cases[tested[1]].id not in shown


def test_example__good_agent__its_base_run_seeds_every_history(
    runs: dict[str, CheckOutcome],
) -> None:
    good = runs["good"].results
    assert good.policy is not None and good.policy.base_run
    assert good.policy.spend.seed == len(good.cases) * (MIN_HISTORY - good.samples)
    for case in good.cases:
        assert case.hash is not None and case.setup is not None
        assert sum(e.samples for e in case.history) == MIN_HISTORY


def test_example__regressed_agent__its_16_broken_cases_are_regressions_with_counts(
    runs: dict[str, CheckOutcome],
) -> None:
    reg = runs["regressed"].results
    assert reg.comparison is not None
    flips = [f for f in reg.comparison.flips if f.kind == "regression"]
    assert len(flips) == 16 and reg.comparison.likely_regressions == 0
    assert all(f.p_value is not None and f.p_value < 0.05 for f in flips)
    assert all(f.base_samples == MIN_HISTORY for f in flips)
    assert {f.case_id for f in flips} == {
        c.id for c in reg.cases if c.test is not None and c.test.outcome == "regressed"
    }


def test_example__regressed_agent__breaks_the_close_account_conversation_in_turn_2(
    runs: dict[str, CheckOutcome],
) -> None:
    """The regressed build deletes the account once the user confirms: the conversation
    fails at turn 2 (turn 1, the question, is answered as before), its other two
    conversations pass, and the comment names the turn and what the user said."""
    reg = runs["regressed"].results
    cases = {c.id: c for c in reg.cases}
    broken = cases["conv-close-account-confirmed"]
    assert not broken.passed
    for s in broken.samples:
        assert s.first_failing_turn == 2 and s.turns_passed == 1
        # the deletion fails (no recorded response) and the regressed build tries it again
        assert s.turns is not None
        assert s.turns[1].called == ["verify_identity", "delete_account", "delete_account"]
    assert cases["conv-refund-email-later"].passed and cases["conv-cancel-confirmed"].passed
    good = runs["good"].results
    assert all(c.passed for c in good.cases if c.id.startswith("conv-"))
    body = (runs["regressed"].out / "comment.md").read_text()
    assert (
        "turn 2 of 2 \\(the user: “Yes, go ahead.”\\): called 'delete\\_account', which this "
        "case must not call | 1 case: `conv-close-account-confirmed` 36/36 → 0/3"
    ) in body
    console = CONSOLE[runs["regressed"].out]
    assert (
        'delete_account(confirm=true, email="dan@example.com")  turn 2 of 2 '
        "(the user: “Yes, go ahead.”)"
    ) in console


@pytest.mark.parametrize("name", ["regressed", "flaky"])
def test_example__diff_of_the_two_files__the_flips_the_check_gave(
    runs: dict[str, CheckOutcome], name: str
) -> None:
    from gate.pipeline.sequential import recorded_comparison

    head = runs[name].results
    good = runs["good"].results
    again = recorded_comparison(good, head, source="file toolgate-out/results.json")
    assert head.comparison is not None
    got = [(f.case_id, f.kind.value, f.because) for f in again.flips]
    assert got == [(f.case_id, f.kind, f.because) for f in head.comparison.flips]


def test_example__regressed_against_a_plain_base_run__likely_regressions_extra_samples_decide(
    runs: dict[str, CheckOutcome],
) -> None:
    """One good run without --base-run is a history of 3 samples per case: the 14 cases
    with a hard failure are likely regressions and get no extra samples (they fail the
    gate anyway), the comment says the history is short; the two broken without one get
    extra samples until their regression is decided."""
    reg = runs["regressed-plain"].results
    assert reg.comparison is not None
    assert (reg.comparison.regressions, reg.comparison.likely_regressions) == (2, 14)
    # each broke a hard rule: the same words as against a seeded history
    assert all(
        f.because == "it broke a hard rule, which fails the gate whatever more samples show"
        for f in reg.comparison.flips
        if f.kind == "likely_regression"
    )
    decided = {f.case_id: f for f in reg.comparison.flips if f.kind == "regression"}
    assert set(decided) == {"error-lookup-500", "error-not-found"}
    assert all(f.p_value is not None and f.p_value < 0.05 for f in decided.values())
    spend = reg.policy.spend if reg.policy is not None else None
    assert spend is not None and set(spend.per_case) == set(decided)
    assert spend.extra + spend.saved == 115  # the pull request's cap, 1.5 × 77
    assert len(spend.held_back) == 17 and not set(spend.held_back) & set(decided)
    body = render_comment(_untimed(reg))
    assert "> ⚠️ The base history is short: 3 samples per case" in body
    # what this run did, in its own figures; the advice of a live agent (it can seed)
    short = next(line for line in body.splitlines() if "The base history is short" in line)
    assert f"it spent {spend.extra} extra samples" in short, short
    assert "No case got worse undecided in this run" in short, short
    assert "`toolgate check --base-run`" in short and "recorded runs" not in short, short
    assert len(visible_lines(body)) <= VISIBLE_LINES
    # no advice to record a response for a call the case must never make
    notice = next(n for n in reg.notices if "had no recorded response" in n)
    assert "delete_account" not in notice and "issue_refund" not in notice


VISIBLE_LINES = 60
"""The comment's budget: non-empty lines outside collapsed blocks."""


def visible_lines(comment: str) -> list[str]:
    """The non-empty lines a reader sees without opening a ``<details>`` block (a block's
    ``<details>`` line counts), with what a block inside a line hides taken out."""
    import re

    out: list[str] = []
    depth = 0
    for line in comment.splitlines():
        opens, closes = line.count("<details>"), line.count("</details>")
        if depth == 0 and line.strip():
            out.append(re.sub(r"<details>.*?</details>", "<details>…</details>", line))
        depth += opens - closes
    return out


def test_example__regressed_comment__each_case_once_within_the_line_budget(
    runs: dict[str, CheckOutcome],
) -> None:
    body = render_comment(_untimed(runs["regressed"].results))
    seen = visible_lines(body)
    assert len(seen) <= VISIBLE_LINES, len(seen)
    text = "\n".join(seen[2:])  # the heading names three of them: once more below it
    for case in runs["regressed"].results.cases:
        if not case.passed:
            assert text.count(f"`{case.id}`") <= 1, case.id


ORDER = [
    "Hard failures",
    "Regressions",
    "New cases that fail",
    "Undecided:",
    "Removed cases",
    "Metrics",
]
"""The sections of a comment, in the order a reviewer needs them: cases before metrics."""


@pytest.mark.parametrize("build", ["regressed", "flaky"])
def test_example__comment__cases_before_metrics_at_most_8_metric_rows_in_sight(
    runs: dict[str, CheckOutcome], build: str
) -> None:
    results = _untimed(runs[build].results)
    body = render_comment(results)
    seen = visible_lines(body)
    headings = [line for line in seen if line.startswith("### ")]
    at = [
        next(i for i, h in enumerate(ORDER) if h in line)
        for line in headings
        if any(h in line for h in ORDER)
    ]
    assert at == sorted(at) and at, headings
    assert "Metrics" in headings[-1] or all("Metrics" not in h for h in headings[at.index(5) + 1 :])
    # the first case section comes before the metric table
    first_case = next(
        i for i, line in enumerate(seen) if line.startswith("### ") and "Metrics" not in line
    )
    metrics = next(i for i, line in enumerate(seen) if line.startswith("### Metrics"))
    assert first_case < metrics, seen[: first_case + 1]
    # the metric table in sight: at most 8 rows (those that gate or moved beyond noise)
    rows = []
    for line in seen[metrics + 1 :]:
        if line.startswith("### ") or line.startswith("<details>"):
            break
        if line.startswith("| `"):
            rows.append(line)
    assert 0 < len(rows) <= 8, rows
    for row in rows:
        assert ("✅" in row or "❌" in row or "⚪" in row) or ("🔴" in row or "🟢" in row), row
    # the heading names up to three broken cases, the first ones the sections list
    broken = render_view_broken(results)
    assert broken, build
    first = seen[1]
    named = re.findall(r"`([^`]+)`", first.split(" — ", 1)[1])
    assert named[:3] == broken[:3], (named, broken)


def render_view_broken(results: Results) -> list[str]:
    from gate.report.view import view

    return list(view(results).broken)


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
    assert render_console(runs[name].results) in printed
    last = printed.rstrip("\n").splitlines()[-1]
    assert last.startswith("wrote results.json, report.md, junit.xml, comment.md to ")
    assert last.endswith(f"{out}/")


def test_example__regressed_console__must_not_call_first_each_case_once(
    runs: dict[str, CheckOutcome],
) -> None:
    """The console lists the hard failures as the comment does: one line per rule, call
    and reason, must-not-call first, each case named once with its counts."""
    lines = render_console(runs["regressed"].results).splitlines()
    start = lines.index(next(x for x in lines if x.startswith("🛑 Hard failures (17 cases")))
    hard = [x.strip() for x in lines[start + 1 :] if x.startswith("  ")]
    hard = hard[: next(i for i, x in enumerate(lines[start + 1 :]) if not x.startswith("  "))]
    kinds = [x.split()[0] for x in hard]
    assert kinds == sorted(kinds, key=lambda k: k != "must_not_call")
    named = [c for x in hard for c in re.findall(r"([\w-]+) \d+/\d+ → \d+/\d+", x)]
    assert sum(1 for x in hard if x.startswith("must_not_call")) == 3
    assert len(named) == len(set(named)) == 11  # 6 of the 12 required-before ones folded


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


def _prose(text: str) -> str:
    """README.md's text with its line breaks and runs of spaces as single spaces."""
    return " ".join(text.split())


def test_readme__figures_quoted__are_what_its_commands_give(
    runs: dict[str, CheckOutcome],
) -> None:
    """Every figure README.md (and docs/policy.md, section 10) quotes of the example is what
    the commands they show print:
    the fixture's runs are those commands (the base run with --base-run, the regressed
    build against it by `--baseline toolgate-out/results.json`), and the plain base run
    is the one it describes without --base-run."""
    readme = _prose((ROOT / "README.md").read_text(encoding="utf-8"))
    good, reg = runs["good"].results, runs["regressed"].results
    assert good.policy is not None and reg.comparison is not None
    spend = good.policy.spend
    cases, tools = len(good.cases), len(good.tools)
    assert (
        f"(a rule-based customer-support agent, {cases} cases, {tools} tools, "
        f"{good.samples} samples each;" in readme
    )
    assert spend.initial + spend.seed == cases * good.policy.params.min_history
    assert f"up to `policy.min_history` ({good.policy.params.min_history}) samples" in readme
    # the bill the base run printed before it started, as the README quotes it
    bill = good.policy.bill
    assert bill is not None and (bill.initial, bill.seeding) == (spend.initial, spend.seed)
    printed = CONSOLE[runs["good"].out].splitlines()[0]
    assert printed == (
        f"toolgate: this base run makes {bill.runs:,} agent runs: {cases} cases × "
        f"{good.samples} samples ({bill.initial:,}), and {bill.seeding:,} more to seed each "
        f"case's base history to {bill.min_history} samples (policy.min_history; "
        "policy.max_seed_samples caps it)."
    )
    assert (
        f"This first base run makes {bill.runs:,} agent runs: {cases} cases × {good.samples} "
        f"samples ({bill.initial:,}), and {bill.seeding:,} seeding the histories" in readme
    )
    assert f"then the {reg.comparison.regressions} regressed cases" in readme
    cost = {d.metric: d for d in reg.comparison.cost}
    for metric in ("steps", "total_tokens"):
        d = cost[metric]
        assert d.base is not None and d.head is not None and d.relative is not None
        shown = (
            f"`{metric}` {figures.cost(metric, d.base)} → {figures.cost(metric, d.head)} "
            f"({figures.percent(d.relative)})"
        )
        assert shown in readme and d.beyond_noise, shown
    comment = render_comment(reg)
    assert "`36/36 → 0/3`" in readme and "36/36 → 0/3" in comment
    assert (
        'This run changes the agent\'s command `["python", "agent.py"]` → '
        '`["python", "agent.py", "--variant", "regressed"]`' in comment
    )
    # against the plain base run (3 samples per case): docs/policy.md, section 10
    policy_doc = _prose((ROOT / "docs" / "policy.md").read_text(encoding="utf-8"))
    plain = runs["regressed-plain"].results
    assert plain.comparison is not None
    likely, decided = plain.comparison.likely_regressions, plain.comparison.regressions
    assert (
        f"Against a base run made without `--base-run` ({runs['plain'].results.samples} "
        f"samples per case) the {likely} cases with a hard failure are *likely* regressions"
        in policy_doc
    )
    assert f"the {decided} without one get extra samples until their regression" in policy_doc
    held = plain.policy.spend.held_back if plain.policy is not None else []
    assert len({f.case_id for f in plain.comparison.flips if f.kind == "likely_regression"}) == (
        likely
    )
    assert set(held) >= {f.case_id for f in plain.comparison.flips if f.kind == "likely_regression"}


def test_policy_doc__section_10__figures_are_what_the_example_gives(
    runs: dict[str, CheckOutcome],
) -> None:
    """docs/policy.md, section 10: the figures of the example's regressed and flaky builds
    against the base run, and of the regressed build against the plain base run."""
    doc = _prose((ROOT / "docs" / "policy.md").read_text(encoding="utf-8"))
    section = doc[doc.index("## 10. The example's three builds") :]
    reg = runs["regressed"].results
    assert reg.comparison is not None and reg.policy is not None
    cases = len(reg.cases)
    assert f"Each runs {cases} cases, {reg.samples} samples per case" in section
    metrics = reg.comparison.metrics
    for name, words in (("case_passed", "the pass rate"), ("tool_selection_f1", None)):
        d = metrics[name]
        assert d.base is not None and d.head is not None
        shown = f"({d.base:.3f} → {d.head:.3f})"
        assert (f"{words} {shown}" if words else f"`{name}` {shown}") in section, shown
    hard = len({f.case_id for f in reg.hard_failures})
    assert f"The gate names {hard} cases with a hard failure" in section
    (p,) = {f.p_value for f in reg.comparison.flips if f.kind == "regression"}
    assert p is not None
    assert f"{reg.comparison.regressions} regressed cases (36/36 → 0/3 each, p = {p:.2g}" in section
    assert reg.policy.spend.extra == 0  # "none needed an extra one"
    cost = {d.metric: d for d in reg.comparison.cost}
    for metric in ("tool_calls", "steps", "total_tokens"):
        d = cost[metric]
        assert d.base is not None and d.head is not None and d.relative is not None
        shown = (
            f"`{metric}` {figures.cost(metric, d.base)} → {figures.cost(metric, d.head)} "
            f"({figures.percent(d.relative)})"
        )
        assert shown in section and d.beyond_noise, shown
    flaky = runs["flaky"].results
    assert flaky.comparison is not None and flaky.policy is not None
    spend = flaky.policy.spend
    assert f"**likely regressions**: {flaky.comparison.likely_regressions} of them" in section
    assert flaky.comparison.regressions == 0
    assert spend.extra == spend.cap
    assert f"They shared {spend.extra} extra samples, the run's cap" in section
    plain = runs["regressed-plain"].results
    assert plain.comparison is not None
    decided = [f for f in plain.comparison.flips if f.kind == "regression"]
    (pp,) = {f.p_value for f in decided}
    assert pp is not None
    (counts,) = {(f.base_samples, f.head_samples) for f in decided}
    assert f"({counts[0]}/{counts[0]} → 0/{counts[1]}, p = {pp:.2g})" in section and all(
        f.base_pass_rate == 1.0 and f.head_pass_rate == 0.0 for f in decided
    )


def test_readme__bill_of_100_cases_at_3_samples__is_what_check_prints(tmp_path: Path) -> None:
    """README's first screen: "100 cases at 3 samples cost 3,600 agent runs on the first
    push to `main`, then 300 per pull request (at most 450 …)" — what `toolgate check`
    prints for a 100-case project at `samples: 3`: its base run, then a pull request."""
    from tests.policy.test_bill import check as bill_check
    from tests.policy.test_bill import project

    readme = _prose((ROOT / "README.md").read_text(encoding="utf-8"))
    config = project(tmp_path, cases=100)
    config.write_text(config.read_text().replace("samples: 2\n", "samples: 3\n"))
    base, console = bill_check(config, tmp_path / "base", base_run=True)
    first = base.results.policy.bill
    assert console.line("toolgate: this base run makes")[0].startswith(
        f"toolgate: this base run makes {first.runs:,} agent runs: 100 cases × 3 samples"
    )
    pr, console = bill_check(config, tmp_path / "pr", tmp_path / "base" / "results.json")
    bill = pr.results.policy.bill
    assert console.line("toolgate: this run makes")[0] == (
        f"toolgate: this run makes {bill.runs} agent runs: 100 cases × 3 samples, and at most "
        f"{bill.extra_cap} more for undecided cases."
    )
    assert (
        f"100 cases at 3 samples cost {first.runs:,} agent runs on the first push to `main`, "
        f"then {bill.runs:,} per pull request (at most {bill.most:,} with the extra samples of "
        "undecided cases)" in readme
    )


def test_example__regressed_against_another_datasets_baseline__not_compared_short(
    tmp_path: Path,
) -> None:
    """A baseline made from another dataset (toolgate init's, under this gate's name):
    nothing is compared — the first line says "not compared" and why, the heading is
    never ✅, the comment keeps to 40 visible lines (drift folded), the console never
    says the cases were compared across a change."""
    from gate.cli import main as cli

    other = tmp_path / "other"
    assert cli(["init", str(other)]) == 0
    config = other / "toolgate.yml"
    config.write_text(config.read_text().replace("name: toolgate", "name: support-agent"))
    assert cli(["check", "--config", str(config), "--out", str(other / "out"), "--no-progress",
                "--baseline", "none", "--no-comment"]) == 0  # fmt: skip
    got = _check("toolgate.regressed.yml", tmp_path / "reg", other / "out" / "results.json")
    results = got.results
    assert results.verdict is not None and results.verdict.not_compared is not None
    assert results.verdict.not_compared.why == "other_dataset"
    body = render_comment(_untimed(results))
    first = body.splitlines()[1]
    assert first.startswith("## ❌ ToolGate `support-agent` failed — 17 cases broke a hard rule")
    assert "not compared: the baseline was made from another dataset: none of its 9 cases" in first
    assert "✅" not in first
    seen = visible_lines(body)
    assert len(seen) <= 40, len(seen)
    assert "<summary>🔧 Tool-definition drift" in body
    console = CONSOLE[tmp_path / "reg"]
    assert "not compared" in console.splitlines()[1]
    assert "every case is compared" not in console
