"""A cost gate on a token metric never counts as met when some of the head's samples
have no usage — none reported, or invalid (``gate.model.usage``): it is ⚪ not checked, in the
comment and the console, and ``cost.missing_usage`` says whether that fails the gate
(``fail``, the default) or passes it with the warning (``warn``).

Real ``toolgate check`` runs of a ``replay`` agent over hand-built runs files (the base
reports usage on every sample), in process and, for the exit codes and the console, as a
process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gate.report import render_comment, render_console
from tests.policy.helpers import quiet_check
from tests.policy.test_cost_gates import CASES, _project, _runs
from tests.reliability.helpers import assert_clean_exit, toolgate

RELATIVE = "gates:\n  - {metric: total_tokens, max_increase: 0.15}\n"
ABSOLUTE = "gates:\n  - {metric: prompt_tokens, max: 5000}\n"
WHY = f"the head reported no usage on {CASES * 3:,} of {CASES * 3:,} samples"


@pytest.fixture
def base(tmp_path: Path) -> Path:
    root = tmp_path / "base"
    root.mkdir()
    config = _project(root)
    _runs(root / "runs.jsonl", 3)
    quiet_check(config, root / "out", None)
    return root / "out" / "results.json"


def head(tmp_path: Path, gates: str, usage: Any = "none", extra: str = "") -> Path:
    """A head whose every sample reports ``usage`` (``"none"``: no usage key at all; a
    function of the case number: that usage, or none where it gives ``None``)."""
    root = tmp_path / "head"
    root.mkdir()
    config = _project(root, gates + extra)
    _runs(root / "runs.jsonl", 3)
    lines = []
    for line in (root / "runs.jsonl").read_text().splitlines():
        run = json.loads(line)
        n = int(run["case_id"][1:])
        given = None if usage == "none" else usage(n) if callable(usage) else usage
        if given is None:
            run.pop("usage")
        else:
            run["usage"] = given
        lines.append(json.dumps(run))
    (root / "runs.jsonl").write_text("\n".join(lines) + "\n")
    return config


def test_head_without_usage__relative_gate_not_checked_and_fails_by_default(
    tmp_path: Path, base: Path
) -> None:
    config = head(tmp_path, RELATIVE)
    got = quiet_check(config, tmp_path / "head" / "out", base)
    (gate,) = got.results.verdict.gates
    assert gate.not_checked and not gate.passed
    assert WHY in gate.reason and "no base history" not in gate.reason
    assert got.exit_code == 1
    comment = render_comment(got.results)
    assert f"failed — 1 gate missed: `total_tokens` not checked: {WHY}" in comment
    assert f"- ❌ `total_tokens` max\\_increase 15% not checked — {WHY}" in comment
    assert "gate met" not in comment.splitlines()[1]
    console = render_console(got.results)
    assert f"❌ total_tokens max_increase 15% not checked — {WHY}" in console


def test_head_without_usage__warn__passes_with_the_gate_shown_not_checked(
    tmp_path: Path, base: Path
) -> None:
    config = head(tmp_path, RELATIVE, extra="cost: {missing_usage: warn}\n")
    got = quiet_check(config, tmp_path / "head" / "out", base)
    (gate,) = got.results.verdict.gates
    assert gate.not_checked and gate.passed and got.exit_code == 0
    comment = render_comment(got.results)
    first = comment.splitlines()[1]
    assert "0 gates met, 1 not checked" in first, first
    assert (
        f"- ⚪ `total_tokens` max\\_increase 15% not checked — {WHY} "
        "\\(cost.missing\\_usage: warn\\)" in comment
    )
    assert f"⚪ total_tokens max_increase 15% not checked — {WHY}" in render_console(got.results)
    assert "0 gate(s) met, 1 not checked" in got.results.verdict.summary


def test_head_with_fractional_or_negative_usage__counted_as_without_usage(
    tmp_path: Path, base: Path
) -> None:
    """An agent reporting −10× its tokens once passed ``✓ prompt_tokens = -12,600``."""
    config = head(
        tmp_path,
        ABSOLUTE,
        usage=lambda n: {"prompt_tokens": -12_600} if n % 2 else {"prompt_tokens": 0.5},
    )
    got = quiet_check(config, tmp_path / "head" / "out", base)
    (gate,) = got.results.verdict.gates
    assert gate.not_checked and not gate.passed and gate.value is None
    assert WHY in gate.reason
    assert got.exit_code == 1
    notices = " ".join(got.results.notices)
    assert f"invalid token usage on {CASES * 3} sample(s)" in notices


def test_usage_missing_on_the_expensive_half__absolute_gate_not_checked(
    tmp_path: Path, base: Path
) -> None:
    """The half that reports is cheap: its mean passes the bound, but the gate cannot
    see the other half."""
    config = head(tmp_path, ABSOLUTE, usage=lambda n: {"prompt_tokens": 10} if n % 2 else None)
    got = quiet_check(config, tmp_path / "head" / "out", base)
    (gate,) = got.results.verdict.gates
    half = f"the head reported no usage on {CASES * 3 // 2:,} of {CASES * 3:,} samples"
    assert gate.not_checked and not gate.passed and half in gate.reason


def test_every_sample_reports__the_gate_is_checked_as_before(tmp_path: Path, base: Path) -> None:
    config = head(tmp_path, ABSOLUTE, usage={"prompt_tokens": 10, "completion_tokens": 1})
    got = quiet_check(config, tmp_path / "head" / "out", base)
    (gate,) = got.results.verdict.gates
    assert gate.passed and not gate.not_checked and gate.value == 10


def test_cli__exit_codes_and_console(tmp_path: Path, base: Path) -> None:
    config = head(tmp_path, RELATIVE)
    root = config.parent
    proc = toolgate(
        "check", "--config", "toolgate.yml", "--out", "out", "--baseline", str(base), cwd=root
    )
    assert_clean_exit(proc, 1)
    assert f"not checked: {WHY}" in proc.stdout
    config.write_text(config.read_text() + "cost: {missing_usage: warn}\n")
    proc = toolgate(
        "check", "--config", "toolgate.yml", "--out", "out2", "--baseline", str(base), cwd=root
    )
    assert_clean_exit(proc, 0)
    assert "⚪ total_tokens" in proc.stdout
    config.write_text(config.read_text().replace("missing_usage: warn", "missing_usage: maybe"))
    proc = toolgate(
        "check", "--config", "toolgate.yml", "--out", "out3", "--baseline", str(base), cwd=root
    )
    assert_clean_exit(proc, 2)
    assert "cost.missing_usage" in proc.stderr
