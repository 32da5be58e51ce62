"""What a sample cost, compared with the base history and gated: real ``toolgate check``
runs of a ``replay`` agent over hand-built runs files, 60 cases.

* a head with twice the samples of its base and the same usage per sample shows no change
  and passes ``max_increase``;
* ``total_tokens`` up 30 % on every case fails ``max_increase: 0.15`` (beyond noise);
  up 30 % on one case of 60 does not (the suite's rise is small);
* without a base history a relative gate is not checked, and says so;
* ``toolgate diff`` gives the Cost figures the check gave;
* a relative gate on a slice tests that slice's cases only.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from gate.cli import main
from gate.dataset import load_dataset
from gate.report import render_comment, render_console
from gate.results import Results
from tests.policy.helpers import quiet_check

CASES = 60


def _project(root: Path, gates: str = "") -> Path:
    tool = {
        "name": "ping",
        "description": "Ping case n.",
        "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
    }
    rows = [
        {
            "id": f"c{i:02d}",
            "user_input": f"ping {i}",
            "available_tools": [tool],
            "expected_tool_calls": [{"name": "ping", "args": {"n": i}}],
            "tool_responses": [{"name": "ping", "response": {"ok": True}}],
        }
        for i in range(CASES)
    ]
    (root / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    sha = load_dataset(root / "dataset.jsonl").sha256
    config = root / "toolgate.yml"
    config.write_text(
        "name: cost\n"
        f"dataset: {{path: dataset.jsonl, sha256: {sha}}}\n"
        "agent: {kind: replay, runs: runs.jsonl}\n"
        "samples: 3\n" + gates
    )
    return config


def _tokens(case: int, sample: int, scale: float) -> tuple[int, int]:
    """A case's prompt and completion tokens: its own size, a little noise per sample."""
    wobble = ((case * 7 + sample * 13) % 11 - 5) / 100  # −5 % … +5 %
    prompt = round((1000 + 40 * case) * (1 + wobble) * scale)
    return prompt, round(prompt / 20)


def _runs(path: Path, samples: int, scale: dict[int, float] | float = 1.0) -> None:
    lines = []
    for s in range(samples):
        for i in range(CASES):
            k = scale if isinstance(scale, float) else scale.get(i, 1.0)
            prompt, completion = _tokens(i, s % 3, k)  # the same usage per sample
            lines.append(
                json.dumps(
                    {
                        "case_id": f"c{i:02d}",
                        "sample": s,
                        "turns": [{"calls": [{"name": "ping", "arguments": {"n": i}}]}],
                        "final": "pinged",
                        "usage": {"prompt_tokens": prompt, "completion_tokens": completion},
                    }
                )
            )
    path.write_text("\n".join(lines) + "\n")


def _check(config: Path, out: Path, baseline: Path | None, samples: int | None = None) -> Any:
    return quiet_check(config, out, baseline, samples=samples)


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """A base run: 3 samples per case."""
    root = tmp_path / "base"
    root.mkdir()
    config = _project(root)
    _runs(root / "runs.jsonl", 3)
    _check(config, root / "out", None)
    return root / "out" / "results.json"


def _head(tmp_path: Path, base: Path, scale: dict[int, float] | float, samples: int = 3) -> Any:
    root = tmp_path / "head"
    root.mkdir()
    config = _project(root, "gates:\n  - {metric: total_tokens, max_increase: 0.15}\n")
    _runs(root / "runs.jsonl", samples, scale)
    return _check(config, root / "out", base, samples=samples)


def _cost(results: Results, metric: str) -> Any:
    assert results.comparison is not None
    return next(d for d in results.comparison.cost if d.metric == metric)


def test_more_samples_same_usage_per_sample__no_change_and_the_gate_passes(
    tmp_path: Path, base: Path
) -> None:
    got = _head(tmp_path, base, 1.0, samples=6)
    results = got.results
    total = _cost(results, "total_tokens")
    assert total.cases == CASES
    assert total.change == pytest.approx(0.0, abs=1e-9) and not total.beyond_noise
    # the totals double with the samples; per sample nothing moved
    assert results.usage["prompt_tokens"] == pytest.approx(2 * read(base)["usage"]["prompt_tokens"])
    (gate,) = [g for g in results.verdict.gates if g.op == "max_increase"]
    assert gate.passed and not gate.not_checked and gate.value == pytest.approx(0.0, abs=1e-9)
    assert got.exit_code == 0


def read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_tokens_up_30_percent_on_every_case__max_increase_fails(tmp_path: Path, base: Path) -> None:
    got = _head(tmp_path, base, 1.3)
    results = got.results
    total = _cost(results, "total_tokens")
    assert total.relative == pytest.approx(0.30, abs=0.01) and total.beyond_noise
    (gate,) = [g for g in results.verdict.gates if g.op == "max_increase"]
    assert not gate.passed and gate.value == pytest.approx(0.30, abs=0.01)
    assert "more than max_increase 15%, beyond noise" in gate.reason
    assert got.exit_code == 1 and not results.verdict.passed
    comment = render_comment(results)
    assert "| `total_tokens` | " in comment and "+30." in comment and "❌ ≤ +15.0 %" in comment
    assert "1 gate missed: `total_tokens` +30." in comment
    # the quality of the calls did not change: no regression, no other reason
    assert results.comparison.regressions == 0
    assert [r for r in results.verdict.reasons if "total_tokens" not in r] == []


def test_tokens_up_30_percent_on_one_case_of_60__the_suite_rise_passes(
    tmp_path: Path, base: Path
) -> None:
    got = _head(tmp_path, base, {7: 1.3})
    results = got.results
    total = _cost(results, "total_tokens")
    assert 0 < total.relative < 0.01
    (gate,) = [g for g in results.verdict.gates if g.op == "max_increase"]
    assert gate.passed and "within max_increase 15%" in gate.reason
    assert got.exit_code == 0


def test_no_base_history__the_relative_gate_is_not_checked(tmp_path: Path) -> None:
    root = tmp_path / "alone"
    root.mkdir()
    config = _project(root, "gates:\n  - {metric: total_tokens, max_increase: 0.15}\n")
    _runs(root / "runs.jsonl", 3, 2.0)
    got = _check(config, root / "out", None)
    (gate,) = got.results.verdict.gates
    assert gate.passed and gate.not_checked and "not checked" in gate.reason
    assert "⚪ ≤ +15.0 % (not checked)" in render_comment(got.results)
    assert "total_tokens max_increase 15% not checked — no comparable base history" in (
        render_console(got.results)
    )


def test_diff__the_cost_figures_the_check_gave(
    tmp_path: Path, base: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    got = _head(tmp_path, base, 1.3)
    head = tmp_path / "head" / "out" / "results.json"
    assert main(["diff", str(base), str(head), "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["cost"] == [dataclasses.asdict(d) for d in got.results.comparison.cost]
    assert main(["diff", str(base), str(head)]) == 0
    md = capsys.readouterr().out
    total = _cost(got.results, "total_tokens")
    assert f"| total_tokens | {total.base:,.0f} | {total.head:,.0f} | +30." in md


def test_steps_up_on_one_slice__its_relative_gate_fails_the_others_hold(tmp_path: Path) -> None:
    """Half the cases carry the tag `refund`; on the head those take an extra assistant
    turn (the call is made again, allowed by `superset`): the slice's `steps` rise by
    half, the rest's not at all."""
    root = tmp_path / "sliced"
    root.mkdir()

    def tagged(path: Path) -> None:
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        for row in rows:
            n = int(row["id"][1:])
            row["tags"] = ["refund"] if n % 2 == 0 else ["status"]
            row["order"] = "superset"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))

    gates = (
        "gates:\n"
        "  - {metric: steps, max_increase: 0.25, slice: tag=refund}\n"
        "  - {metric: steps, max_increase: 0.25, slice: tag=status}\n"
    )
    results: dict[str, Results] = {}
    for name in ("base", "head"):
        side = root / name
        side.mkdir()
        config = _project(side, gates)
        tagged(side / "dataset.jsonl")
        # the dataset changed: pin it again
        sha = load_dataset(side / "dataset.jsonl").sha256
        text = config.read_text()
        config.write_text(text.replace(text.split("sha256: ")[1].split("}")[0], sha))
        lines = []
        for s in range(3):
            for i in range(CASES):
                call = {"calls": [{"name": "ping", "arguments": {"n": i}}]}
                turns = [call, call] if name == "head" and i % 2 == 0 else [call]
                lines.append(
                    json.dumps(
                        {"case_id": f"c{i:02d}", "sample": s, "turns": turns, "final": "pinged"}
                    )
                )
        (side / "runs.jsonl").write_text("\n".join(lines) + "\n")
        baseline = root / "base" / "out" / "results.json" if name == "head" else None
        results[name] = _check(config, side / "out", baseline).results
    head = results["head"]
    by_slice = {g.slice: g for g in head.verdict.gates}
    refund, status = by_slice["tag=refund"], by_slice["tag=status"]
    assert not refund.passed and refund.value == pytest.approx(0.5)
    assert (
        "steps [tag=refund] 2 → 3 per sample (+50.0%), the typical case +50.0%, over 30 case(s)"
        in refund.reason
    )
    assert status.passed and status.value == pytest.approx(0.0, abs=1e-9)
    assert head.comparison is not None and head.comparison.regressions == 0
    assert not head.verdict.passed


@pytest.mark.parametrize(
    ("p", "fails"),
    [(0.001, True), (0.004, True), (0.2, False)],
    ids=["beyond noise", "one-sided at alpha", "within noise"],
)
def test_relative_gate__fails_only_on_a_rise_the_cost_group_calls_beyond_noise(
    p: float, fails: bool
) -> None:
    """The gate and the table read one criterion: a rise the Cost group shows "within
    noise" never fails a gate — the one-sided test of a rise at the metric's alpha (0.005
    here); above the bound but within noise, the gate is not decided and says what would
    decide it."""
    from types import SimpleNamespace
    from typing import cast

    from gate.config import GateConfig
    from gate.policy.cost import CostEvidence
    from gate.policy.decide import relative_gate
    from gate.policy.engine import Evaluation
    from gate.policy.suite import Better, Method, SuiteTest

    test = SuiteTest(
        "total_tokens",
        Method.STRATIFIED,
        Better.LOWER,
        60,
        1000.0,
        1300.0,
        300.0,
        None,
        p,
        0.005,
        False,
        max_increase=0.15,
        cost=CostEvidence(
            typical=0.30, p_fall=1 - p, typical_p_rise=p, typical_p_fall=1 - p, z=2.5,
            head_samples=3,
            base_samples=36, noise=4.0, base_noise=0.5,
        ),
    )  # fmt: skip
    evaluation = cast(Evaluation, SimpleNamespace(cost_test=lambda metric, slice_=None: test))
    got = relative_gate(GateConfig(metric="total_tokens", max_increase=0.15), evaluation)
    assert test.beyond_noise is fails
    assert got.passed is not fails and got.value == pytest.approx(0.30)
    assert ("beyond noise" in got.reason) is fails
    assert got.undecided is not fails
    if not fails:
        assert "within the samples' noise (p = 0.2 > 0.005) — not decided;" in got.reason
        assert "samples per case (samples: " in got.reason


def test_relative_gate__the_mean_rose_the_typical_case_did_not__not_decided_naming_the_cases() -> (
    None
):
    """A rise of the mean per sample above the bound that the typical case does not share
    (one large case drove it) is neither a pass beside a figure above the bound nor a
    failure: not decided, naming the cases that moved the mean."""
    from types import SimpleNamespace
    from typing import cast

    from gate.config import GateConfig
    from gate.policy.cost import CostEvidence
    from gate.policy.decide import relative_gate
    from gate.policy.engine import Evaluation
    from gate.policy.suite import Better, Method, SuiteTest

    test = SuiteTest(
        "total_tokens", Method.STRATIFIED, Better.LOWER, 6, 1000.0, 1400.0, 400.0, None,
        0.3, 0.005, False, max_increase=0.15,
        cost=CostEvidence(
            typical=0.02, p_fall=0.7, typical_p_rise=0.3, typical_p_fall=0.7, z=0.5,
            head_samples=2,
            base_samples=36, drivers=("big-case",), noise=3.0, base_noise=0.4,
        ),
    )  # fmt: skip
    evaluation = cast(Evaluation, SimpleNamespace(cost_test=lambda metric, slice_=None: test))
    got = relative_gate(GateConfig(metric="total_tokens", max_increase=0.15), evaluation)
    assert got.passed and got.undecided and got.value == pytest.approx(0.02)
    assert "1,000 → 1,400 per sample (+40.0%), the typical case +2.0%" in got.reason
    assert "the rise comes from a few cases (big-case): not decided" in got.reason
