"""``toolgate import tau2`` on τ²-bench results files written here (the shapes of
τ²-bench's ``Results``: tasks with evaluation actions, simulations with messages, tool
errors and trials), then ``toolgate score`` on what it wrote; and the refusals of files
it cannot map, each naming the field."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.effects.helpers import toolgate

TOOL_DEFS = {
    name: {
        "name": name,
        "doc": doc,
        "params": {
            "type": "object",
            "title": "parameters",
            "properties": {k: {"type": t, "title": k} for k, t in params.items()},
            "required": list(params),
        },
        "returns": None,
    }
    for name, doc, params in [
        ("get_user_details", "Get the details of a user.", {"user_id": "string"}),
        ("get_reservation_details", "Get a reservation.", {"reservation_id": "string"}),
        ("calculate", "Calculate.", {"expression": "string"}),
        ("cancel_reservation", "Cancel the whole reservation.", {"reservation_id": "string"}),
        ("send_certificate", "Send a certificate.", {"user_id": "string", "amount": "integer"}),
        (
            "update_reservation_baggages",
            "Update the baggage information.",
            {
                "reservation_id": "string",
                "total_baggages": "integer",
                "nonfree_baggages": "integer",
                "payment_id": "string",
            },
        ),
    ]
}


def _action(i: int, name: str, compare: list[str] | None = None, **args: Any) -> dict[str, Any]:
    return {
        "action_id": f"{name}_{i}",
        "requestor": "assistant",
        "name": name,
        "arguments": args,
        "info": None,
        "compare_args": compare,
    }


def _task(tid: str, actions: list[dict[str, Any]], **criteria: Any) -> dict[str, Any]:
    return {
        "id": tid,
        "description": {"purpose": "test", "relevant_policies": None, "notes": None},
        "user_scenario": {
            "persona": None,
            "instructions": {
                "task_instructions": "Be brief.",
                "domain": "airline",
                "reason_for_call": f"Reason of task {tid}.",
                "known_info": "Your user id is mia_kim_1.",
                "unknown_info": None,
            },
        },
        "initial_state": None,
        "evaluation_criteria": {
            "actions": actions,
            "communicate_info": [],
            "nl_assertions": None,
            "reward_basis": ["DB", "COMMUNICATE"],
            **criteria,
        },
        "annotations": None,
    }


TASKS = [
    _task(
        "0",
        [
            _action(0, "get_reservation_details", reservation_id="EHGLP3"),
            _action(1, "cancel_reservation", reservation_id="EHGLP3"),
        ],
    ),
    _task("1", [_action(0, "get_user_details", user_id="mia_kim_1")]),  # reads only
    _task(
        "2",
        [
            _action(
                0,
                "update_reservation_baggages",
                ["reservation_id", "nonfree_baggages"],
                reservation_id="EHGLP3",
                total_baggages=2,
                nonfree_baggages=1,
                payment_id="credit_card_1",
            )
        ],
        communicate_info=["50"],
    ),
    _task(
        "3",
        [
            _action(0, "send_certificate", user_id="mia_kim_1", amount=100),
            _action(
                1,
                "update_reservation_baggages",
                reservation_id="K1NW8N",
                total_baggages=1,
                nonfree_baggages=0,
                payment_id="credit_card_1",
            ),
            _action(2, "cancel_reservation", reservation_id="K1NW8N"),
        ],
    ),
]


def _sim(
    task: str,
    trial: int,
    *steps: list[tuple[str, dict[str, Any], str | None]],
    end: str = "user_stop",
) -> dict[str, Any]:
    """A simulation: a greeting, the user's message, then per step an assistant message
    with its tool calls and the tool messages answering them (``str`` result: an error when
    it starts ``Error:``; ``None``: the ``error`` flag left out, as the leaderboard trims)."""
    msgs: list[dict[str, Any]] = [
        {"role": "assistant", "content": "Hi! How can I help you today?", "tool_calls": None},
        {"role": "user", "content": "Please help.", "tool_calls": None},
    ]
    n = 0
    for step in steps:
        calls = []
        results = []
        for name, args, result in step:
            n += 1
            cid = f"call_{n}"
            calls.append({"id": cid, "name": name, "arguments": args, "requestor": "assistant"})
            msg = {"id": cid, "role": "tool", "requestor": "assistant"}
            if result is None:
                msg["content"] = "Error: Reservation ZZZ not found"  # no flag: trimmed
                del msg["id"], msg["requestor"]
            else:
                msg["content"] = result
                msg["error"] = result.startswith("Error:")
            results.append(msg)
        msgs.append({"role": "assistant", "content": None, "tool_calls": calls})
        msgs.extend(results)
    msgs.append({"role": "assistant", "content": "Done, the fee was 50.", "tool_calls": None})
    return {
        "id": f"sim-{task}-{trial}",
        "task_id": task,
        "start_time": "2025-06-01T10:00:00",
        "end_time": "2025-06-01T10:01:00",
        "duration": 60.0,
        "termination_reason": end,
        "reward_info": {"reward": 1.0, "reward_basis": ["DB", "COMMUNICATE"]},
        "messages": msgs,
        "trial": trial,
    }


OK = "{}"
CANCEL_E = ("cancel_reservation", {"reservation_id": "EHGLP3"}, OK)
CANCEL_K = ("cancel_reservation", {"reservation_id": "K1NW8N"}, OK)
LOOK = ("get_reservation_details", {"reservation_id": "EHGLP3"}, OK)
CERT = ("send_certificate", {"user_id": "mia_kim_1", "amount": 100}, OK)
BAGS = "update_reservation_baggages"
BAGS_K = (BAGS, {"reservation_id": "K1NW8N", "total_baggages": 1, "nonfree_baggages": 0,
                 "payment_id": "credit_card_1"}, OK)  # fmt: skip


def _bags(total: int, nonfree: int, pay: str) -> tuple[str, dict[str, Any], str]:
    args = {"reservation_id": "EHGLP3", "total_baggages": total, "nonfree_baggages": nonfree}
    return BAGS, {**args, "payment_id": pay}, OK


SIMS = [
    # task 0: the reference (pass); an extra write (fail); a failed wrong write, whose
    # trimmed result has no error flag, then the right one (pass); ended early (fail)
    _sim("0", 0, [LOOK], [CANCEL_E]),
    _sim("0", 1, [CANCEL_E, CANCEL_K]),
    _sim("0", 2, [("cancel_reservation", {"reservation_id": "ZZZ"}, None)], [CANCEL_E]),
    _sim("0", 3, [LOOK], end="max_steps"),
    # task 1 (reads only): lookups in another form (pass); a write (fail); a write that
    # failed (pass)
    _sim("1", 0, [("get_user_details", {"user_id": "mia_kim_1"}, OK),
                  ("calculate", {"expression": "2 * (3 + 4)"}, "14.0")]),
    _sim("1", 1, [("send_certificate", {"user_id": "mia_kim_1", "amount": 50}, "Added")]),
    _sim("1", 2, [("cancel_reservation", {"reservation_id": "EHGLP3"}, "Error: not allowed")]),
    # task 2 (compare_args): another total_baggages passes, another nonfree fails
    _sim("2", 0, [_bags(3, 1, "gift_card_2")]),
    _sim("2", 1, [_bags(2, 2, "credit_card_1")]),
    # task 3: two writes share K1NW8N, so the writes keep their order (strict)
    _sim("3", 0, [CERT], [LOOK], [BAGS_K], [CANCEL_K]),
    _sim("3", 1, [CERT], [CANCEL_K], [BAGS_K]),
]  # fmt: skip
EXPECTED = {
    ("0", 0): True,
    ("0", 1): False,
    ("0", 2): True,
    ("0", 3): False,
    ("1", 0): True,
    ("1", 1): False,
    ("1", 2): True,
    ("2", 0): True,
    ("2", 1): False,
    ("3", 0): True,
    ("3", 1): False,
}


def _results(**over: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "timestamp": "2025-06-01T10:00:00",
        "info": {
            "git_commit": "abc123",
            "num_trials": 4,
            "max_steps": 100,
            "max_errors": 10,
            "user_info": {"implementation": "user_simulator"},
            "agent_info": {"implementation": "llm_agent", "llm": "some-model"},
            "environment_info": {"domain_name": "airline", "policy": "…", "tool_defs": TOOL_DEFS},
        },
        "tasks": copy.deepcopy(TASKS),
        "simulations": copy.deepcopy(SIMS),
    }
    data.update(over)
    return data


def _write(tmp: Path, data: Any, name: str = "results.json") -> Path:
    path = tmp / name
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    return path


def _import(tmp: Path, *extra: str, name: str = "results.json") -> Any:
    return toolgate("import", "tau2", name, "--out", "imp", *extra, cwd=tmp)


def _verdicts(tmp: Path) -> dict[tuple[str, int], dict[str, Any]]:
    p = toolgate(
        "score", "--config", "imp/toolgate.yml", "--runs", "imp/runs.jsonl", "--out", "out",
        cwd=tmp,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    res = json.loads((tmp / "out" / "results.json").read_text())
    return {
        (c["id"], s["sample"]): s
        for c in res["cases"]
        for s in c["samples"]
        if not (s.get("error") or "").startswith("not_run")  # a trial the file lacks
    }


def test_import_tau2__results_file__cases_runs_and_config_then_score(tmp_path: Path) -> None:
    _write(tmp_path, _results())
    p = _import(tmp_path)
    assert p.returncode == 0, p.stderr
    assert "imported 4 tasks (1 reads-only) and 11 simulations" in p.stdout
    assert "counted as failed calls" in p.stderr  # the trimmed result's error is inferred
    imp = tmp_path / "imp"
    cases = {c["id"]: c for c in map(json.loads, (imp / "dataset.jsonl").read_text().splitlines())}
    assert cases["0"]["expected_tool_calls"] == [
        {"name": "cancel_reservation", "args": {"reservation_id": "EHGLP3"}, "args_match": "exact"}
    ]
    assert cases["1"]["expected_tool_calls"] == [] and cases["1"]["expected_no_tool"] is True
    assert "reads-only" in cases["1"]["tags"]
    assert cases["2"]["expected_tool_calls"][0]["args"] == {
        "reservation_id": "EHGLP3",
        "nonfree_baggages": 1,
    }
    assert "args_match" not in cases["2"]["expected_tool_calls"][0]
    assert "'50'" in cases["2"]["notes"]
    assert cases["3"]["order"] == "strict"
    tools = json.loads((imp / "tools.json").read_text())
    assert [t["name"] for t in tools] == sorted(TOOL_DEFS)
    config = (imp / "toolgate.yml").read_text()
    assert "kind: replay" in config and "pass_on: effects" in config
    assert "sha256: " in config and "default_effect: read" in config
    assert '"cancel_reservation": {risk: write}' in config
    assert '"update_reservation_baggages": {risk: write, idempotent: true}' in config
    runs = [json.loads(line) for line in (imp / "runs.jsonl").read_text().splitlines()]
    # every task has trials 0-3: those the file lacks are not run
    assert "(5 trials they lack: not run)" in p.stdout and "\n  missing: skip " in config
    assert {(r["case_id"], r["sample"]) for r in runs} == {(t, i) for t in "0123" for i in range(4)}
    assert {(r["case_id"], r["sample"]) for r in runs if r["error"] is None} <= set(EXPECTED)
    early = next(r for r in runs if (r["case_id"], r["sample"]) == ("0", 3))
    assert early["error"].startswith("agent_error: τ²-bench ended the simulation early")
    failed = next(r for r in runs if (r["case_id"], r["sample"]) == ("1", 2))
    assert failed["turns"][1]["tool_results"][0]["is_error"] is True
    got = _verdicts(tmp_path)
    assert {k: s["passed"] for k, s in got.items()} == EXPECTED
    assert got[("0", 1)]["failed_checks"] == ["no_extra_write"]
    assert got[("2", 1)]["failed_checks"] == ["writes_made", "no_extra_write"]
    assert got[("3", 1)]["failed_checks"] == ["order"]
    # the trials a task lacks are named, never an error of the infrastructure
    p = toolgate(
        "check", "--config", "imp/toolgate.yml", "--out", "chk", "--no-progress", cwd=tmp_path
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "3 cases with 5 samples not run (agent.missing: skip): 1, 2, 3" in p.stdout, p.stdout


def test_import_tau2__writes_and_tools_options(tmp_path: Path) -> None:
    data = _results()
    data["info"]["environment_info"]["tool_defs"] = None
    _write(tmp_path, data)
    p = _import(tmp_path)
    assert p.returncode == 2
    assert "info.environment_info.tool_defs: absent" in p.stderr and "--tools" in p.stderr
    _write(tmp_path, [{"type": "function", "function": {"name": n, "parameters": d["params"]}}
                      for n, d in TOOL_DEFS.items()], "tools.json")  # fmt: skip
    p = _import(tmp_path, "--tools", "tools.json", "--writes", "cancel_reservation")
    assert p.returncode == 0, p.stderr
    config = (tmp_path / "imp" / "toolgate.yml").read_text()
    assert '"cancel_reservation": {risk: write}' in config
    assert "send_certificate" not in config  # only --writes writes
    p = _import(tmp_path, "--untyped-tools", "--force")
    assert p.returncode == 0, p.stderr
    tools = json.loads((tmp_path / "imp" / "tools.json").read_text())
    assert all(t["parameters"] == {"type": "object"} for t in tools)
    assert {k: s["passed"] for k, s in _verdicts(tmp_path).items()} == EXPECTED
    # without definitions, --writes also names the write tools no run used
    p = _import(tmp_path, "--untyped-tools", "--force", "--writes", "cancel_reservation,refund")
    assert p.returncode == 0, p.stderr
    assert "refund" in {
        t["name"] for t in json.loads((tmp_path / "imp" / "tools.json").read_text())
    }
    p = _import(tmp_path, "--tools", "tools.json", "--force", "--writes", "cancel_resrvation")
    assert p.returncode == 2
    assert "--writes: 'cancel_resrvation' is not one of the tools (did you mean" in p.stderr


def test_import_tau2__folder_format__simulations_read_from_their_files(tmp_path: Path) -> None:
    data = _results()
    sims = data.pop("simulations")
    (tmp_path / "run").mkdir()
    _write(tmp_path / "run", data)
    (tmp_path / "run" / "simulations").mkdir()
    for s in sims:
        _write(tmp_path / "run" / "simulations", s, f"{s['id']}.json")
    p = toolgate("import", "tau2", "run", "--out", "imp", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert {k: s["passed"] for k, s in _verdicts(tmp_path).items()} == EXPECTED


A0 = "tasks[0].evaluation_criteria.actions"
A2 = "tasks[2].evaluation_criteria.actions"
C1 = "tasks[1].evaluation_criteria"
M0 = "simulations[0].messages"


def _broken(path: str, value: Any) -> dict[str, Any]:
    """The results with the field at ``path`` (dotted, [i] for indices) set to ``value``
    (``...``: removed)."""
    data = _results()
    parts = path.replace("[", ".").replace("]", "").split(".")
    node: Any = data
    for p in parts[:-1]:
        node = node[int(p)] if p.isdigit() else node[p]
    last = parts[-1]
    if value is ...:
        del node[int(last) if last.isdigit() else last]
    elif last.isdigit():
        node[int(last)] = value
    else:
        node[last] = value
    return data


@pytest.mark.parametrize(
    ("path", "value", "said"),
    [
        ("tasks", ..., "required"),
        ("simulations", {}, "must be an array, not an object"),
        (f"{A0}[1].arguments", "x", "must be an object"),
        (f"{A2}[0].compare_args", "nonfree", "must be an array of argument names"),
        (f"{C1}.reward_basis", ["DB", "ENV_ASSERTION"], "ENV_ASSERTION gates the reward"),
        (f"{C1}.reward_basis", ["DB", "SPEED"], "unknown reward type 'SPEED'"),
        (f"{A0}[0].requestor", "user", "'user': an action of the user simulator"),
        ("tasks[0].evaluation_criteria", None, "absent: τ²-bench passes every run"),
        (f"{C1}.actions", None, "absent: τ²-bench does not check the database"),
        ("tasks[3].id", "0", "task '0' twice (first tasks[0])"),
        ("simulations[2].task_id", "99", "'99' is not the id of any of the file's tasks"),
        ("simulations[2].trial", 1, "trial 1 of task '0' twice (first simulations[1])"),
        ("simulations[0].messages", None, "absent: a full-duplex (voice) simulation"),
        (f"{M0}[1].role", "robot", "must be system, user, assistant or tool"),
        (f"{M0}[4]", {"role": "tool", "content": "{}"}, "a tool message beyond the 1 call(s)"),
        (f"{M0}[2].tool_calls[0].arguments", 7, "must be an object, not a number"),
        (f"{M0}[3].id", "call_9", "answers tool call 'call_9', but the call it follows"),
        (f"{A0}[1].name", "teleport", "'teleport' is not one of the tools"),
    ],
)
def test_import_tau2__malformed__exit_2_names_the_field(
    tmp_path: Path, path: str, value: Any, said: str
) -> None:
    _write(tmp_path, _broken(path, value))
    p = _import(tmp_path)
    assert p.returncode == 2, p.stdout
    assert f"{path}: {said}" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "imp").exists()


def test_import_tau2__not_json_or_not_results__exit_2(tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text("{not json")
    p = _import(tmp_path)
    assert p.returncode == 2 and "results.json: not valid JSON" in p.stderr
    _write(tmp_path, [1, 2])
    p = _import(tmp_path)
    assert p.returncode == 2 and "must be a τ²-bench results object, not an array" in p.stderr


def test_import_tau2__skip_unmappable__leaves_the_task_out_and_says_so(tmp_path: Path) -> None:
    _write(tmp_path, _broken("tasks[1].evaluation_criteria.reward_basis", ["NL_ASSERTION"]))
    p = _import(tmp_path)
    assert p.returncode == 2 and "pass --skip-unmappable" in p.stderr
    p = _import(tmp_path, "--skip-unmappable")
    assert p.returncode == 0, p.stderr
    assert "left out task '1'" in p.stderr and "3 simulation(s) of the tasks left out" in p.stderr
    got = _verdicts(tmp_path)
    assert {k for k in got} == {k for k in EXPECTED if k[0] != "1"}


def test_import_tau2__existing_output__refused_without_force(tmp_path: Path) -> None:
    _write(tmp_path, _results())
    assert _import(tmp_path).returncode == 0
    again = _import(tmp_path)
    assert again.returncode == 2 and "already exists" in again.stderr
    assert _import(tmp_path, "--force").returncode == 0
