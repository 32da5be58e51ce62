"""`toolgate diff`: the flip table from two results files, Markdown escaped, or JSON."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from gate.commands.diff import cell
from gate.results import write_results
from tests.policy.helpers import case, dataset, results_from_table
from tests.report.test_injection import parse


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gate", *args], capture_output=True, text=True, timeout=120
    )


def _files(tmp_path, base_table, head_table, cases=None):
    cases = cases or [case(cid, i + 1) for i, cid in enumerate(base_table)]
    ds = dataset(cases)
    write_results(tmp_path / "base.json", results_from_table(base_table, ds=ds))
    write_results(tmp_path / "head.json", results_from_table(head_table, ds=ds))
    return str(tmp_path / "base.json"), str(tmp_path / "head.json")


def test_diff_md__regressions_fixes_and_noise_tables(tmp_path):
    base, head = _files(
        tmp_path,
        {"refund-017": "P" * 20, "b": "F" * 20, "c": "P" * 20, "d": "P" * 20},
        {"refund-017": "F" * 20, "b": "P" * 20, "c": "P" * 19 + "F", "d": "P" * 10 + "F" * 10},
    )
    p = _cli("diff", base, head)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "**2 regression(s), 0 likely, 1 fix(es), 0 likely, 0 undecided, 1 noise**" in out
    assert (
        "### Regressions (2)" in out
        and "### Fixes (1)" in out
        and "### Within noise: the test could have told, and did not (1)" in out
    )
    row = next(line for line in out.splitlines() if line.startswith("| refund-017 "))
    assert row.startswith("| refund-017 | 1 | 1.00 (20/20) | 0.00 (0/20) | ")
    assert row.endswith(" | calls\\_matched | lookup\\_order |  |")
    assert "| d | 4 | 1.00 (20/20) | 0.50 (10/20) |" in out  # d: regressed too (20 → 10)


def test_diff_json__is_the_comparison(tmp_path):
    base, head = _files(tmp_path, {"a": "PPP"}, {"a": "FFF"})
    p = _cli("diff", base, head, "--format", "json")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["comparable"] is True
    assert (data["regressions"], data["likely_regressions"], data["undecided"]) == (0, 0, 1)
    assert data["flips"][0]["case_id"] == "a"
    assert data["flips"][0]["kind"] == "undecided"
    assert data["flips"][0]["because"] == (
        "3 base samples and 3 head samples: 7 head samples would decide it, or 2 with a base "
        "history of 36"
    )


def test_diff__bad_input_is_exit_2_naming_the_file(tmp_path):
    (tmp_path / "bad.json").write_text('{"schema_version": 1}')
    good, _ = _files(tmp_path, {"a": "P"}, {"a": "P"})
    p = _cli("diff", str(tmp_path / "bad.json"), good)
    assert p.returncode == 2
    assert "bad.json" in p.stderr and "Traceback" not in p.stderr


def test_diff_md__untrusted_case_ids_are_escaped(tmp_path):
    evil = "x|y`<img src=x>@octocat\n# heading"
    base, head = _files(tmp_path, {evil: "P"}, {evil: "F"})
    out = _cli("diff", base, head).stdout
    row = next(line for line in out.splitlines() if "octocat" in line)
    assert "<img" not in out and "@octocat" not in out
    assert row.count(" | ") == 7  # the pipe in the id did not add a column
    assert "\\|" in row and "\\`" in row and "&lt;img" in row and "@\u200boctocat" in row
    assert "\n# heading" not in out


def test_cell__truncates_long_values():
    assert len(cell("a" * 500)) == 120


@pytest.mark.parametrize(
    "value",
    [
        "fixes #12, octo/agent#12, GH-12 and gh-7",
        "https://evil.example/phish and www.evil.example",
        "[click](https://evil.example/phish) ![i](https://evil.example/p.png)",
        "<img src=x onerror=alert(1)> <b>bold</b> @octocat",
    ],
)
def test_cell__references_links_and_mentions__render_inert_on_github(value: str) -> None:
    p = parse(f"| h |\n|---|\n| {cell(value)} |")
    assert set(p.tags) <= {"table", "thead", "tbody", "tr", "th", "td"}, set(p.tags)
    prose = "".join(p.text_outside_code)
    assert not re.search(r"#\d|(?i:\bGH-\d)|@[\w-]", prose), prose
    assert "://" not in prose and "www." not in prose.lower(), prose
