"""Outputs cannot lie: one writer per folder, no stale files, located I/O errors.

Real processes (``toolgate`` as a subprocess), real locks, real file systems: a 1 MiB
tmpfs for a full disk where the machine allows mounting one (root), skipped otherwise.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gate.errors import ExitCode
from gate.results import read_results
from tests.reliability import helpers as h
from tests.reliability.helpers import command_agent, fault_case, project
from tests.reliability.test_faults import FAULT_FIGURES, _replay_project


def _no_temp_files(out: Path) -> None:
    left = [p.name for p in out.iterdir() if p.name.endswith(".tmp")]
    assert left == [], left


def test_outputs__folder_locked_by_another_toolgate__exit_2_and_nothing_written(
    tmp_path: Path,
) -> None:
    cfg = _replay_project(tmp_path, passing=True)
    out = tmp_path / "out"
    out.mkdir()
    with (out / ".toolgate.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # what a running toolgate holds
        proc = h.toolgate("check", "--config", cfg, "--out", "out", cwd=tmp_path)
    h.assert_clean_exit(proc, ExitCode.BAD_INPUT)
    assert "another toolgate is writing out" in proc.stderr
    assert not (out / "results.json").exists()


def test_outputs__two_runs_on_one_folder__one_refused_the_other_whole(
    tmp_path: Path, pids_dir: Path
) -> None:
    rows = [fault_case("ok", n) for n in range(4)]
    cfg = project(tmp_path, rows, command_agent(pids_dir, sleep_s=0.3), samples=1)
    argv = [sys.executable, "-m", "gate", "check", "--config", str(cfg), "--out", "out",
            "--baseline", "none", "--no-progress"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(h.REPO)}
    env.pop("GITHUB_ACTIONS", None)
    pipe = subprocess.PIPE
    procs = [
        subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=pipe, stderr=pipe, text=True)
        for _ in range(2)
    ]
    done = [p.communicate(timeout=90) for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes == [0, 2], (codes, done)
    refused = next(err for (_, err), p in zip(done, procs, strict=True) if p.returncode == 2)
    assert "another toolgate is writing" in refused
    results = read_results(tmp_path / "out" / "results.json")
    assert len(results.cases) == 4 and all(c.passed for c in results.cases)
    _no_temp_files(tmp_path / "out")
    FAULT_FIGURES["faults injected"] += 1


def test_outputs__fresh_run_that_fails__leaves_no_earlier_results(tmp_path: Path) -> None:
    cfg = _replay_project(tmp_path, passing=True)
    proc = h.toolgate("check", "--config", cfg, cwd=tmp_path)
    h.assert_clean_exit(proc, ExitCode.PASS)
    out = tmp_path / "out"
    assert (out / "results.json").exists() and (out / "comment.md").exists()
    # the next run dies: its runs file cannot be written (a folder has its name)
    (out / "runs.jsonl").unlink()
    (out / "runs.jsonl").mkdir()
    proc = h.toolgate("run", "--config", cfg, "--out", "out", "--no-progress", cwd=tmp_path)
    h.assert_clean_exit(proc, ExitCode.BAD_INPUT)
    assert "out/runs.jsonl: cannot write: a folder has its name" in proc.stderr
    for name in ("results.json", "report.md", "junit.xml", "comment.md"):
        assert not (out / name).exists(), f"a stale {name} survived"
    FAULT_FIGURES["faults injected"] += 1


def test_outputs__out_names_a_file__located_error(tmp_path: Path) -> None:
    cfg = _replay_project(tmp_path, passing=True)
    (tmp_path / "afile").write_text("x")
    proc = h.toolgate("check", "--config", cfg, "--out", "afile", cwd=tmp_path)
    h.assert_clean_exit(proc, ExitCode.BAD_INPUT)
    assert "afile: cannot create the output folder: a file has its name" in proc.stderr


@pytest.mark.parametrize("passing", [True, False], ids=["gate-passes", "gate-fails"])
def test_outputs__stdout_closed__exit_code_is_the_verdicts(tmp_path: Path, passing: bool) -> None:
    cfg = _replay_project(tmp_path, passing=passing)
    env = {**os.environ, "PYTHONPATH": str(h.REPO)}
    env.pop("GITHUB_ACTIONS", None)
    r, w = os.pipe()
    os.close(r)  # `toolgate check | true`: nobody reads
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "gate", "check", "--config", str(cfg)],
            cwd=tmp_path, env=env, stdout=w, stderr=subprocess.PIPE, text=True, timeout=60,
        )  # fmt: skip
    finally:
        os.close(w)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == (ExitCode.PASS if passing else ExitCode.GATE_FAILED), proc.stderr
    FAULT_FIGURES["faults injected"] += 1


@contextlib.contextmanager
def _tmpfs(where: Path, size: str = "1m") -> Iterator[Path]:
    where.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(disk: Path, leave: int) -> None:
    """Fill ``disk`` until ``leave`` bytes are free (rounded to its blocks)."""
    st = os.statvfs(disk)
    free = st.f_bavail * st.f_frsize
    with (disk / "filler").open("wb") as fh:
        fh.write(b"\0" * max(0, free - leave))


def test_outputs__disk_full__located_error_no_traceback_no_temp_files(tmp_path: Path) -> None:
    cfg = _replay_project(tmp_path, passing=True)
    with _tmpfs(tmp_path / "disk") as disk:
        _fill(disk, 0)
        proc = h.toolgate("check", "--config", cfg, "--out", str(disk / "out"), cwd=tmp_path)
        h.assert_clean_exit(proc, ExitCode.BAD_INPUT)
        assert "cannot write: No space left on device" in proc.stderr, proc.stderr
        assert "disk/out/" in proc.stderr
        if (disk / "out").exists():
            _no_temp_files(disk / "out")
    FAULT_FIGURES["faults injected"] += 1


def test_outputs__disk_full_after_results__verdict_printed_then_located_error(
    tmp_path: Path,
) -> None:
    """results.json fits, the reports do not: the verdict is printed first."""
    cfg = _replay_project(tmp_path, passing=True)
    ref = h.toolgate("check", "--config", cfg, "--out", "ref", cwd=tmp_path)
    h.assert_clean_exit(ref, ExitCode.PASS)
    page = 4096
    sizes = {n: (tmp_path / "ref" / n).stat().st_size for n in
             ("runs.jsonl", "results.json", "run-header.json")}  # fmt: skip
    sizes["results.json"] += 256  # its timing may take a few bytes more
    need = sum(-(-size // page) * page for size in sizes.values())
    with _tmpfs(tmp_path / "disk") as disk:
        (disk / "out").mkdir()
        _fill(disk, need)
        t0 = time.monotonic()
        proc = h.toolgate("check", "--config", cfg, "--out", str(disk / "out"), cwd=tmp_path)
        assert time.monotonic() - t0 < 60
        h.assert_clean_exit(proc, ExitCode.BAD_INPUT)
        assert "PASSED" in proc.stdout, proc.stdout
        assert "cannot write: No space left on device" in proc.stderr, proc.stderr
        _no_temp_files(disk / "out")
    FAULT_FIGURES["faults injected"] += 1


def test_resume__folder_of_another_agent_or_config__refused(tmp_path: Path, pids_dir: Path) -> None:
    rows = [fault_case("ok", n) for n in range(3)]
    cfg = project(tmp_path, rows, command_agent(pids_dir), samples=1)
    proc = h.toolgate("run", "--config", cfg, "--out", "out", "--no-progress", cwd=tmp_path)
    h.assert_clean_exit(proc, 0)
    before = (tmp_path / "out" / "runs.jsonl").read_bytes()
    # the same folder resumed with another scoring config, then with another agent
    text = cfg.read_text()
    cfg.write_text(text + "scoring:\n  default_order: superset\n")
    proc = h.toolgate(
        "run", "--config", cfg, "--out", "out", "--resume", "--no-progress", cwd=tmp_path
    )
    h.assert_clean_exit(proc, ExitCode.BAD_INPUT)
    assert "cannot resume out: it was written by another scoring_sha256" in proc.stderr
    cfg.write_text(text.replace("workers: 4", "workers: 3"))
    proc = h.toolgate(
        "run", "--config", cfg, "--out", "out", "--resume", "--no-progress", cwd=tmp_path
    )
    h.assert_clean_exit(proc, ExitCode.BAD_INPUT)
    assert "written by another agent" in proc.stderr
    assert (tmp_path / "out" / "runs.jsonl").read_bytes() == before  # nothing appended
    # lines without a header (another tool, an older folder) are not taken as this run's
    cfg.write_text(text)
    (tmp_path / "out" / "run-header.json").unlink()
    proc = h.toolgate(
        "run", "--config", cfg, "--out", "out", "--resume", "--no-progress", cwd=tmp_path
    )
    h.assert_clean_exit(proc, ExitCode.BAD_INPUT)
    assert "without a run header" in proc.stderr
    FAULT_FIGURES["faults injected"] += 3


def test_unrecorded_notice__score_and_check__the_same_from_the_file(tmp_path: Path) -> None:
    cfg = _replay_project(tmp_path, passing=True)
    lines = (tmp_path / "runs.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["turns"][0]["tool_results"] = [
        {"id": "c1", "content": {"error": "no frozen response for lookup_order"},
         "is_error": True, "unrecorded": True}
    ]  # fmt: skip
    lines[0] = json.dumps(first)
    (tmp_path / "runs.jsonl").write_text("\n".join(lines) + "\n")
    proc = h.toolgate("check", "--config", cfg, "--out", "a", cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    proc = h.toolgate("score", "--config", cfg, "--runs", "runs.jsonl", "--out", "b", cwd=tmp_path)
    h.assert_clean_exit(proc, 0)
    checked = read_results(tmp_path / "a" / "results.json").notices
    scored = read_results(tmp_path / "b" / "results.json").notices
    wanted = [n for n in checked if "no recorded response" in n]
    assert wanted and wanted == [n for n in scored if "no recorded response" in n]


def test_outputs__written_files__readable_like_plain_files(tmp_path: Path) -> None:
    cfg = _replay_project(tmp_path, passing=True)
    h.assert_clean_exit(h.toolgate("check", "--config", cfg, cwd=tmp_path), ExitCode.PASS)
    mask = os.umask(0)
    os.umask(mask)
    for name in ("results.json", "report.md", "junit.xml", "comment.md", "run-header.json"):
        assert (tmp_path / "out" / name).stat().st_mode & 0o777 == 0o666 & ~mask, name
