"""Adaptive confirmation through ``toolgate check``: apparent flips get extra samples,
run into ``out/confirm/`` (never the main runs file), recorded as ``extra``, and the
regressions stand only when the extra samples fail too."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

from gate.pipeline import CheckOptions, check
from gate.runsfile import read_runs

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "support-agent"


def test_check__confirm__extra_samples_on_flips_only(tmp_path: Path) -> None:
    work = tmp_path / "example"
    shutil.copytree(EXAMPLE, work)
    good = check(
        CheckOptions(config_path=work / "toolgate.yml", out=tmp_path / "good", progress=False),
        {},
        io.StringIO(),
    )
    cfg = work / "toolgate.confirm.yml"
    cfg.write_text(
        (work / "toolgate.regressed.yml").read_text() + "\nconfirm:\n  max_extra_samples: 2\n"
    )
    out = tmp_path / "head"
    head = check(
        CheckOptions(
            config_path=cfg, out=out, baseline=str(tmp_path / "good/results.json"), progress=False
        ),
        {},
        io.StringIO(),
    )
    assert good.exit_code == 0 and head.exit_code == 1
    results = head.results
    comparison = results.comparison
    assert comparison is not None
    regressions = {f.case_id for f in comparison.flips if f.kind == "regression"}
    assert regressions

    info = results.confirm
    assert info is not None and info.extra_samples > 0
    assert set(info.cases) >= regressions, "every apparent regression was confirmed"
    extra_by_case = {
        c.id: [s.sample for s in c.samples if s.extra] for c in results.cases if c.id in info.cases
    }
    assert all(samples for samples in extra_by_case.values())
    assert all(min(s) >= 3 for s in extra_by_case.values()), "numbered after the 3 regular ones"
    untouched = [c for c in results.cases if c.id not in info.cases]
    assert all(not any(s.extra for s in c.samples) for c in untouched)

    main_runs = read_runs(out / "runs.jsonl")
    assert max(run.sample for _, run in main_runs) == 2, "the main runs file keeps 3 samples"
    confirm_runs = read_runs(out / "confirm" / "runs.jsonl")
    assert {run.case_id for _, run in confirm_runs if run.sample >= 3} == set(info.cases)
