"""One trial per task, five agents, real airline tasks: what a reviewer sees when one
agent's results are the base and another's the head.

The tasks are sixteen of τ²-bench's airline tasks, copied as they are (MIT licence) into
``data/tau2_airline_tasks.json``. Each "agent" is a τ²-format results file with one
simulation per task: the reference actions (a pass), or a run that breaks the task (a
write with a wrong argument, a write left out, or a write in a reads-only task). The test
goes the way a user goes: ``toolgate import tau2``, ``toolgate score``, then ``toolgate
report --baseline`` (the comment) and ``toolgate diff``.

With one sample each side, a case that passed the base and fails the head can never be
significant: it must still be named outside ``<details>``, never under a "flaky" or
"noise" heading, and the first line must count it apart from the cases that fail on both
sides."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.effects.helpers import toolgate

TASKS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "data" / "tau2_airline_tasks.json").read_text("utf-8")
)
IDS = [t["id"] for t in TASKS]
WRITES = {
    "book_reservation",
    "cancel_reservation",
    "send_certificate",
    "update_reservation_baggages",
    "update_reservation_flights",
    "update_reservation_passengers",
}

# P: the trial does what the task's reference does; F: it breaks the task. One letter per
# task, in the order of IDS (1 6 7 11 14 15 17 19 21 27 29 30 32 33 37 40).
AGENTS = {
    "alpha": "PPPPPPPPPPFFPPPF",
    "beta": "PPFPFFPFPPFFFPPP",
    "gamma": "FPPPPPPPPFPPPPPP",
    "delta": "PPPPPPPPPPPPPPPP",
    "epsilon": "FFFFFPPPFFFPFFFF",
}

_ARRAY = {"type": "array", "items": {"type": "object"}}
_PARAMS: dict[str, dict[str, Any]] = {
    "get_user_details": {"user_id": {"type": "string"}},
    "get_reservation_details": {"reservation_id": {"type": "string"}},
    "search_direct_flight": {k: {"type": "string"} for k in ("origin", "destination", "date")},
    "calculate": {"expression": {"type": "string"}},
    "transfer_to_human_agents": {"summary": {"type": "string"}},
    "cancel_reservation": {"reservation_id": {"type": "string"}},
    "update_reservation_flights": {
        "reservation_id": {"type": "string"},
        "cabin": {"type": "string"},
        "flights": _ARRAY,
        "payment_id": {"type": "string"},
    },
    "update_reservation_baggages": {
        "reservation_id": {"type": "string"},
        "total_baggages": {"type": "integer"},
        "nonfree_baggages": {"type": "integer"},
        "payment_id": {"type": "string"},
    },
    "update_reservation_passengers": {"reservation_id": {"type": "string"}, "passengers": _ARRAY},
    "book_reservation": {
        **{k: {"type": "string"} for k in ("user_id", "origin", "destination", "flight_type")},
        **{"cabin": {"type": "string"}, "insurance": {"type": "string"}},
        **{"flights": _ARRAY, "passengers": _ARRAY, "payment_methods": _ARRAY},
        **{"total_baggages": {"type": "integer"}, "nonfree_baggages": {"type": "integer"}},
    },
}
TOOL_DEFS = {
    name: {
        "name": name,
        "doc": f"The airline tool {name}.",
        "params": {
            "type": "object",
            "title": "parameters",
            "properties": props,
            "required": list(props),
        },
        "returns": None,
    }
    for name, props in _PARAMS.items()
}


def _calls(task: dict[str, Any], passed: bool, n: int) -> list[tuple[str, dict[str, Any]]]:
    """The calls of one trial: the reference actions, or a way to break the task (the
    n-th failing trial alternates between a wrong argument and a write left out)."""
    actions = [
        (a["name"], copy.deepcopy(a["arguments"])) for a in task["evaluation_criteria"]["actions"]
    ]
    if passed:
        return actions
    writes = [i for i, (name, _) in enumerate(actions) if name in WRITES]
    if not writes:  # a reads-only task: any write breaks it
        return [*actions, ("cancel_reservation", {"reservation_id": "ZZ9PLZ"})]
    first = writes[0]
    if n % 2:
        return [a for i, a in enumerate(actions) if i != first] + [
            ("transfer_to_human_agents", {"summary": "The customer asked for a human agent."})
        ]
    args = actions[first][1]
    key = "reservation_id" if "reservation_id" in args else next(iter(args))
    args[key] = "WRONG1" if isinstance(args[key], str) else [{"wrong": True}]
    return actions


def _simulation(task: dict[str, Any], calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    msgs: list[dict[str, Any]] = [
        {"role": "assistant", "content": "Hi! How can I help you today?", "tool_calls": None},
        {"role": "user", "content": task["user_scenario"]["instructions"]["reason_for_call"]},
    ]
    for n, (name, args) in enumerate(calls, 1):
        cid = f"call_{task['id']}_{n}"
        msgs.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": cid, "name": name, "arguments": args, "requestor": "assistant"}
                ],
            }
        )
        msgs.append(
            {"id": cid, "role": "tool", "requestor": "assistant", "content": "{}", "error": False}
        )
    msgs.append({"role": "assistant", "content": "Is there anything else?", "tool_calls": None})
    return {
        "id": f"sim-{task['id']}-0",
        "task_id": task["id"],
        "start_time": "2025-06-01T10:00:00",
        "end_time": "2025-06-01T10:01:00",
        "duration": 60.0,
        "termination_reason": "user_stop",
        "reward_info": {"reward": 1.0, "reward_basis": ["DB", "COMMUNICATE"]},
        "messages": msgs,
        "trial": 0,
    }


def _results_file(agent: str) -> dict[str, Any]:
    sims = []
    fails = 0
    for task, letter in zip(TASKS, AGENTS[agent], strict=True):
        fails += letter == "F"
        sims.append(_simulation(task, _calls(task, letter == "P", fails)))
    return {
        "timestamp": "2025-06-01T10:00:00",
        "info": {
            "git_commit": "a2c0247",
            "num_trials": 1,
            "max_steps": 100,
            "max_errors": 10,
            "user_info": {"implementation": "user_simulator"},
            "agent_info": {"implementation": "llm_agent", "llm": agent},
            "environment_info": {"domain_name": "airline", "policy": "…", "tool_defs": TOOL_DEFS},
        },
        "tasks": TASKS,
        "simulations": sims,
    }


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each agent's file imported and scored: its results.json."""
    out: dict[str, Path] = {}
    for agent in AGENTS:
        d = tmp_path_factory.mktemp(agent)
        (d / "tau2.json").write_text(json.dumps(_results_file(agent)), "utf-8")
        p = toolgate("import", "tau2", "tau2.json", "--out", "imp", cwd=d)
        assert p.returncode == 0, p.stderr
        p = toolgate(
            "score", "--config", "imp/toolgate.yml", "--runs", "imp/runs.jsonl", "--out", "out",
            cwd=d,
        )  # fmt: skip
        assert p.returncode in (0, 1), p.stderr
        out[agent] = d / "out" / "results.json"
    return out


def test_scored__each_trial_judged_as_written(scored: dict[str, Path]) -> None:
    """The fixture breaks a task exactly where its letter says F (so the counts below are
    the real ones, not the fixture's hopes)."""
    for agent, letters in AGENTS.items():
        res = json.loads(scored[agent].read_text("utf-8"))
        got = {c["id"]: c["samples"][0]["passed"] for c in res["cases"]}
        assert got == {i: x == "P" for i, x in zip(IDS, letters, strict=True)}, agent


def outside_details(md: str) -> list[str]:
    """The lines of a comment outside every ``<details>`` block (nested ones too)."""
    depth = 0
    out = []
    for line in md.splitlines():
        line = re.sub(r"<details>.*?</details>", "", line)  # folded within a table cell
        opens = line.count("<details")
        closes = line.count("</details>")
        if depth == 0 and not opens:
            out.append(line)
        depth = max(0, depth + opens - closes)
    return out


def heading_of_each_line(lines: list[str]) -> list[tuple[str, str]]:
    """Each line with the heading (``#`` line or ``<summary>``) it sits under."""
    head = ""
    out = []
    for line in lines:
        if line.startswith("#") or "<summary>" in line:
            head = line
        out.append((head, line))
    return out


def _counts(base: str, head: str) -> tuple[list[str], list[str], list[str]]:
    lost = [i for i, b, h in zip(IDS, AGENTS[base], AGENTS[head], strict=True) if b + h == "PF"]
    both = [i for i, b, h in zip(IDS, AGENTS[base], AGENTS[head], strict=True) if b + h == "FF"]
    fixed = [i for i, b, h in zip(IDS, AGENTS[base], AGENTS[head], strict=True) if b + h == "FP"]
    return lost, both, fixed


PAIRS = [("alpha", "beta"), ("beta", "alpha"), ("delta", "epsilon"), ("gamma", "beta")]


@pytest.mark.parametrize(("base", "head"), PAIRS)
def test_comment__one_trial_each__every_lost_case_named_outside_details(
    scored: dict[str, Path], base: str, head: str, tmp_path: Path
) -> None:
    lost, both, fixed = _counts(base, head)
    p = toolgate(
        "report", str(scored[head]), "--baseline", str(scored[base]), "--format", "comment",
        "--out", "comment.md", cwd=tmp_path,
    )  # fmt: skip
    assert p.returncode in (0, 1), p.stderr
    md = (tmp_path / "comment.md").read_text("utf-8")
    visible = outside_details(md)
    text = "\n".join(visible)
    for cid in lost:
        assert f"`{cid}`" in text, (cid, md)
    for heading, line in heading_of_each_line(visible):
        if any(f"`{cid}`" in line for cid in lost):
            assert not re.search(r"flaky|noise", heading, re.I), (heading, line)
    # nowhere, folded or not, is a lost case called flaky or noise
    for heading, line in heading_of_each_line(md.splitlines()):
        if any(f"`{cid}`" in line for cid in lost):
            assert not re.search(r"flaky|noise", heading + line, re.I), (heading, line)
    # the first line: its counts are the real ones, each kind apart
    first = next(line for line in visible if line.startswith("## "))
    said = {
        "worse": r"\b(\d+) cases? got worse, too few samples to tell",
        "before": r"\b(\d+) cases? fails? as before",
        "better": r"\b(\d+) cases? got better, too few samples to tell",
    }
    for what, real in (("worse", lost), ("before", both), ("better", fixed)):
        m = re.search(said[what], first)
        assert (int(m.group(1)) if m else 0) == len(real), (what, real, first)
    assert all(f"`{cid}`" in first for cid in lost[:3]), first  # named, up to three
    assert not first.startswith("## ✅"), first
    # the short history: what this run did, and how recorded runs get a history
    assert "The base history is short: 1 sample per case" in text, text
    if lost:
        assert f"This run listed {len(lost)} case" in text, text
    assert "score the base branch's recorded runs" in text and "--base-run" not in text, text


def test_diff__one_trial_each__lost_cases_are_undecided_never_noise(
    scored: dict[str, Path], tmp_path: Path
) -> None:
    lost, both, fixed = _counts("alpha", "beta")
    p = toolgate(
        "diff", str(scored["alpha"]), str(scored["beta"]), "--format", "json", cwd=tmp_path
    )
    assert p.returncode in (0, 1), p.stderr
    flips = {f["case_id"]: f["kind"] for f in json.loads(p.stdout)["flips"]}
    assert {c for c, k in flips.items() if k == "undecided"} == set(lost + fixed)
    assert not any(k == "noise" for k in flips.values())
    md = toolgate("diff", str(scored["alpha"]), str(scored["beta"]), cwd=tmp_path).stdout
    rows = [line for line in outside_details(md) if line.startswith("| ")]
    for cid in lost:
        (row,) = [r for r in rows if r.startswith(f"| {cid} |")]
        assert "| 1.00 (1/1) | 0.00 (0/1) |" in row, row
    assert "noise" not in "".join(line for line in md.splitlines() if line.startswith("#"))
    del both


def test_check__runs_file_missing_cases__bad_input_naming_them_then_skip_gates_the_rest(
    scored: dict[str, Path], tmp_path: Path
) -> None:
    """A recorded-runs file that lacks some tasks is bad input naming them (exit 2), never
    an infrastructure failure; with ``agent.missing: skip`` the check gates on the cases
    present and the first line names those not run."""
    imp = scored["beta"].parent.parent / "imp"
    gone = {"7", "14", "29"}
    lines = (imp / "runs.jsonl").read_text("utf-8").splitlines()
    kept = [line for line in lines if json.loads(line)["case_id"] not in gone]
    assert len(kept) == len(lines) - len(gone)
    (tmp_path / "runs.jsonl").write_text("\n".join(kept) + "\n", "utf-8")
    for name in ("dataset.jsonl", "tools.json"):
        (tmp_path / name).write_bytes((imp / name).read_bytes())
    config = (imp / "toolgate.yml").read_text("utf-8")
    (tmp_path / "toolgate.yml").write_text(config, "utf-8")
    args = [
        "check",
        "--config",
        "toolgate.yml",
        "--baseline",
        str(scored["alpha"]),
        "--no-progress",
    ]
    p = toolgate(*args, "--out", "out1", cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "runs.jsonl" in p.stderr and "no run of 3 of the 16 cases" in p.stderr, p.stderr
    assert all(f"'{c}'" in p.stderr for c in gone), p.stderr
    assert "agent.missing: skip" in p.stderr and "infrastructure" not in p.stderr, p.stderr
    skip = config.replace("  runs: runs.jsonl\n", "  runs: runs.jsonl\n  missing: skip\n")
    assert skip != config
    (tmp_path / "toolgate.yml").write_text(skip, "utf-8")
    p = toolgate(*args, "--out", "out2", cwd=tmp_path)
    assert p.returncode in (0, 1), p.stdout + p.stderr
    comment = (tmp_path / "out2" / "comment.md").read_text("utf-8")
    first = next(line for line in comment.splitlines() if line.startswith("## "))
    assert r"3 cases not run \(agent.missing: skip\): `7`, `14`, `29`" in first, first
    assert "1 case fails as before" in first, first  # 30; 29 was not run
    assert not first.startswith("## ✅"), first
    res = json.loads((tmp_path / "out2" / "results.json").read_text("utf-8"))
    assert res["verdict"] is not None and res.get("run_error") is None
