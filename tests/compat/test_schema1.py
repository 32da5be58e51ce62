"""Results written by the previous release (schema 1: scores by name, every sample's reasons
and evidence) still read: ``report``, ``diff``, ``merge`` and a baseline give what that
release gave from the same files (``tests/compat/schema1/README.md`` says how they were
made), and this release writes them back in schema 2."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gate.pipeline import CheckOptions, check
from gate.pipeline.inputs import read_config
from gate.pipeline.sequential import recorded_comparison
from gate.pipeline.typed import merge_run
from gate.policy.decide import decide
from gate.report import render_comment, render_markdown
from gate.results import (
    SCHEMA_VERSION,
    Decisions,
    assemble,
    read_results,
    write_results,
)
from gate.scorers.registry import COST_METRICS

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent / "schema1"
EXAMPLE = ROOT / "examples" / "support-agent"
GOLDEN = ROOT / "tests" / "golden" / "example"
UPDATE = os.environ.get("TOOLGATE_UPDATE_GOLDEN") == "1"


def _expect(name: str, text: str) -> None:
    """The report this release renders from a schema-1 file (regenerated deliberately, with
    ``TOOLGATE_UPDATE_GOLDEN=1``, when the layout of the reports changes)."""
    if UPDATE:
        (HERE / name).write_text(text, encoding="utf-8", newline="\n")
    assert text == (HERE / name).read_text(encoding="utf-8"), f"{name} differs"


def _unpack(name: str, folder: Path) -> Path:
    path = folder / f"{name}.results.json"
    path.write_bytes(gzip.decompress((HERE / f"{name}.results.json.gz").read_bytes()))
    assert json.loads(path.read_bytes())["schema_version"] == 1
    return path


def _toolgate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    return subprocess.run(
        [sys.executable, "-m", "gate", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_schema1__read__every_score_kept_by_name(tmp_path: Path) -> None:
    path = _unpack("good", tmp_path)
    old = json.loads(path.read_bytes())
    r = read_results(path)
    assert r.schema_version == SCHEMA_VERSION
    for c_old, c in zip(old["cases"], r.cases, strict=True):
        assert r.case_scores(c) == {n: c_old["scores"].get(n) for n in r.metric_names}
        for s_old, s in zip(c_old["samples"], c.samples, strict=True):
            assert r.sample_scores(s) == {n: s_old["scores"].get(n) for n in r.metric_names}
            assert s.evidence == s_old["evidence"]
    # Written back in schema 2: lean, and read back to the same statistics.
    write_results(tmp_path / "v2.json", r)
    v2 = read_results(tmp_path / "v2.json")
    assert json.loads((tmp_path / "v2.json").read_bytes())["schema_version"] == 2
    assert (tmp_path / "v2.json").stat().st_size < path.stat().st_size / 4
    assert v2.metrics == r.metrics and [c.pass_rate for c in v2.cases] == [
        c.pass_rate for c in r.cases
    ]


@pytest.mark.parametrize(
    ("name", "fmt", "expected"),
    [
        ("regressed", "md", "regressed.report.md"),
        ("regressed", "comment", "regressed.comment.md"),
        ("good", "md", "good.report.md"),
    ],
)
def test_schema1__report__as_the_previous_release_rendered_it(
    tmp_path: Path, name: str, fmt: str, expected: str
) -> None:
    path = _unpack(name, tmp_path)
    proc = _toolgate("report", f"{name}.results.json", "--format", fmt, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    _expect(expected, proc.stdout)
    # The same file written back in schema 2 renders the same report.
    write_results(tmp_path / "v2.json", read_results(path))
    again = _toolgate("report", "v2.json", "--format", fmt, cwd=tmp_path)
    assert again.stdout == proc.stdout


def test_schema1__diff__the_previous_release_flip_table(tmp_path: Path) -> None:
    _unpack("good", tmp_path)
    _unpack("regressed", tmp_path)
    proc = _toolgate("diff", "good.results.json", "regressed.results.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    _expect("good-regressed.diff.md", proc.stdout)


def test_schema1__merge__shards_join_into_the_previous_release_reports(tmp_path: Path) -> None:
    # The part names are the paths the previous release was given (its reports show them).
    parts = [
        (f"/tmp/compat/{n}.results.json", read_results(_unpack(n, tmp_path)))
        for n in ("shard1", "shard2")
    ]
    config = read_config(EXAMPLE / "toolgate.yml", display="examples/support-agent/toolgate.yml")
    merged = merge_run(parts)
    decided = assemble(
        merged.stats,
        merged.records,
        Decisions(
            verdict=decide(merged.stats, None, config), judge=merged.judge, timing=merged.timing
        ),
    )
    _expect("merged.report.md", render_markdown(decided))
    _expect("merged.comment.md", render_comment(decided))


def test_schema1__merge_cli__reads_schema1_shards(tmp_path: Path) -> None:
    a, b = _unpack("shard1", tmp_path), _unpack("shard2", tmp_path)
    shutil.copytree(EXAMPLE, tmp_path / "example")
    proc = _toolgate(
        "merge", str(a), str(b), "--out", "merged", "--config", "example/toolgate.yml",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    merged = read_results(tmp_path / "merged" / "results.json")
    assert merged.verdict is not None and merged.verdict.passed
    assert len(merged.cases) == 71


OLD_CASES = 71
"""The example's cases when the previous release wrote these files (its first lines)."""
OLD_PIN = "3629eacf43e4feab0f7d5e0ab0d4160394a1c9c78ec48218540f68d57a1fb5dd"


def _example_as_it_was(root: Path) -> Path:
    """The example as the previous release ran it: its first 71 cases (the conversation
    cases came later), its tools without their MCP annotations (they came with judging
    effects), the configs pinned to that dataset."""
    copy = root / "examples" / "support-agent"
    shutil.copytree(EXAMPLE, copy)
    tools = (copy / "tools.json").read_text(encoding="utf-8")
    tools = re.sub(r',\n      "annotations": \{[^}]*\}', "", tools)
    (copy / "tools.json").write_text(tools, encoding="utf-8")
    lines = (copy / "dataset.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (copy / "dataset.jsonl").write_text("".join(lines[:OLD_CASES]), encoding="utf-8")
    for config in copy.glob("toolgate*.yml"):
        text = config.read_text(encoding="utf-8")
        config.write_text(re.sub(r"sha256: [0-9a-f]{64}", f"sha256: {OLD_PIN}", text))
    return copy


def test_schema1__as_baseline__history_starts_from_its_counts(tmp_path: Path) -> None:
    good = _unpack("good", tmp_path)
    old = read_results(_unpack("regressed", tmp_path))
    example = _example_as_it_was(tmp_path / "repo")
    cwd = Path.cwd()
    os.chdir(tmp_path / "repo")  # reports name files relative to the working directory
    try:
        outcome = check(
            CheckOptions(
                config_path=example / "toolgate.regressed.yml",
                config_display="examples/support-agent/toolgate.regressed.yml",
                out=tmp_path / "out",
                baseline=str(good),
                baseline_source="the good agent's run",
                progress=False,
            ),
            {"PATH": os.environ.get("PATH", "")},
            io.StringIO(),
        )
    finally:
        os.chdir(cwd)
    new = outcome.results
    assert new.verdict is not None and old.verdict is not None
    assert not new.verdict.passed and not old.verdict.passed
    assert new.comparison is not None and new.comparison.comparable
    assert old.comparison is not None
    # The base side reads the same (the head holds extra samples of undecided cases).
    # The metrics added since that release (`batching`, `agent_error_rate`, the usage
    # metrics, the write metrics of judging effects) have no base value.
    new_base = {k: d.base for k, d in new.comparison.metrics.items()}
    old_base = {k: d.base for k, d in old.comparison.metrics.items()}
    assert {k: v for k, v in new_base.items() if k in old_base} == old_base
    added = {"batching", "agent_error_rate", *COST_METRICS}
    added |= {"write_precision", "write_recall", "extra_writes", "missing_writes"}
    assert new_base.keys() - old_base.keys() == added
    assert all(new_base[k] is None for k in added)
    # The file has no hashes: made from the same dataset, its cases get the head's, and
    # each history is the file's counts (3 samples), carried forward with this run's.
    base = read_results(good)
    for case, was in zip(new.cases, base.cases, strict=True):
        assert case.test is not None and case.test.comparability == "comparable"
        assert case.test.base_samples == len(was.samples) == 3
        assert case.test.base_passes == sum(s.passed for s in was.samples)
        assert [e.samples for e in case.history] == [3, case.test.head_samples]
    # Three base samples are too few for one case's test to tell (the report says so); the
    # suite-level test sees the drop across the cases.
    assert any(r.startswith("suite-level drop") for r in new.verdict.reasons)
    assert new.policy is not None and any("base samples" in s for s in new.policy.detect)
    # The previous release's stable rule called its 3/3 → 0/3 cases regressions; on the
    # same two files the one classification finds the same cases, as likely regressions
    # (three base samples cannot make one case significant).
    again = recorded_comparison(base, old, source="the good agent's run")
    was = {f.case_id for f in old.comparison.flips if f.kind == "regression"}
    assert was and {f.case_id for f in again.flips if f.kind.worse} == was
