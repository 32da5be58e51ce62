"""Workflow commands: outputs (heredoc form), annotations (escaping and budget)."""

from __future__ import annotations

from pathlib import Path

from gate.github.workflow import (
    annotation,
    annotations_for,
    format_outputs,
    outputs_for,
    write_outputs,
)
from gate.results import Results
from tests.report.fixtures import failing, passing


def parse_outputs(text: str) -> dict[str, str]:
    """The runner's reading of a GITHUB_OUTPUT file."""
    out: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            j = lines.index(delim, i + 1)
            out[name] = "\n".join(lines[i + 1 : j])
            i = j + 1
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
            i += 1
        else:
            i += 1
    return out


def test_outputs__multiline_value__heredoc_with_unique_delimiter(tmp_path: Path) -> None:
    values = {"a": "one", "b": "line1\nghadelimiter_x\nline3", "c": "x=y"}
    path = tmp_path / "out"
    write_outputs(path, values)
    text = path.read_text()
    assert "b<<ghadelimiter_" in text
    assert parse_outputs(text) == values


def test_outputs__failing_run__verdict_counts_and_gated_metrics() -> None:
    out = outputs_for(failing(), "toolgate-out/results.json")
    assert out["verdict"] == "failed" and out["passed"] == "false"
    assert out["regressions"] == "3" and out["must-not-call-violations"] == "3"
    assert out["results-path"] == "toolgate-out/results.json"
    assert out["metric-tool_selection_recall"] == "0.720000"
    assert out["metric-call_accuracy-hard"] == "0.300000"
    format_outputs(out)  # every name is valid


def test_outputs__passing_run__passed_true() -> None:
    out = outputs_for(passing(), "r.json")
    assert (out["verdict"], out["passed"], out["regressions"]) == ("passed", "true", "0")


def test_annotation__data__escaped_for_the_runner() -> None:
    line = annotation(
        "error", "50% done\r\n::set-output name=x::y", file="a,b:c.jsonl", line=3, title="t:1"
    )
    assert (
        line
        == "::error file=a%2Cb%3Ac.jsonl,line=3,title=t%3A1::50%25 done%0D%0A::set-output name=x::y"
    )
    assert "\n" not in line


def test_annotations__must_not_call_first_then_worst_regressions() -> None:
    lines = annotations_for(failing())
    assert lines[0].startswith(
        "::error file=evals/support.jsonl,line=3,title=must-not-call%3A delete_account called::"
    )
    regressions = [x for x in lines if "title=ToolGate regression" in x]
    assert "close-account-guard regressed: 3/3 → 0/3" in regressions[0]
    assert "agent-crash regressed: 2/3 → 0/3" in regressions[-1]


def big_failing(n: int) -> Results:
    data = failing().model_dump(mode="json")
    hf = data["hard_failures"][0]
    data["hard_failures"] = [{**hf, "case_id": f"c{i}", "line": i + 1} for i in range(n)]
    flip = data["comparison"]["flips"][0]
    data["comparison"]["flips"] = [{**flip, "case_id": f"r{i}", "line": i + 1} for i in range(n)]
    return Results.model_validate(data)


def test_annotations__over_the_runner_cap__ten_per_type_with_more_note() -> None:
    lines = annotations_for(big_failing(30))
    errors = [x for x in lines if x.startswith("::error")]
    assert len(errors) == 10
    assert all("must-not-call" in x for x in errors[:9])
    assert errors[9].endswith(
        # 30 hard failures, 30 regressions and the fixture's 3 missed gates
        f"::{30 + 30 + 3 - 9} more errors from ToolGate are in the step summary (report.md)"
    )


def test_annotations__reserved_warning_slots__kept_free() -> None:
    data = big_failing(20).model_dump(mode="json")
    data["verdict"]["passed"] = True  # regressions become warnings
    data["hard_failures"] = []
    lines = annotations_for(Results.model_validate(data), reserved_warnings=2)
    assert len([x for x in lines if x.startswith("::warning")]) == 8
