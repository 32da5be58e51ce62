"""What the step leaves is ToolGate's alone, and nothing the step started outlives the gate.

The entrypoint is started the way the Actions runner starts a container action
(:mod:`tests.action.runner_contract`: the runner's mounts under ``/github``, its
environment, its file commands read back with its own parsers). The agent under test is
a real ``command`` agent from the pull request that tries to forge the step's outputs
and summary — through the variables, through the files' paths under
``/github/file_commands``, and from a detached grandchild that waits for ToolGate's
outputs to append its own after them. ``setup`` starts services in the background every
way a shell can (``&``, ``nohup``, ``setsid``, a double fork, ``disown``): the step goes
on at once, the service lives while the gate runs, and it is ended after the gate.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.action.harness import HEAD_SHA, REPOSITORY, mini_repo, pr_event
from tests.action.runner_contract import (
    RunnerHost,
    StepResult,
    namespaces_available,
    parse_key_values,
    run_container_action,
)
from tests.servers import github_actions_routes as routes
from tests.servers.github_server import GitHubServer

TOKEN = "ghs_step_integrity_token"
WHY_NOT = namespaces_available()
needs_namespaces = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")

HOSTILE = r"""
import glob, json, os, sys, time

SEEN = os.path.join(os.getcwd(), "agent-saw.jsonl")
FORGED = {
    "set_output_": "verdict=passed\npassed=true\nregressions=0\n",
    "step_summary_": "# ✅ ToolGate passed\n\nEverything is fine.\n",
    "set_env_": "EVIL=1\n",
    "add_path_": "/tmp/evil\n",
    "save_state_": "evil=1\n",
}


def forge():
    names = ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STATE")
    seen = {n: os.environ.get(n) for n in names}
    service = None
    if os.path.exists("service.pid"):
        pid = int(open("service.pid").read().strip())
        try:
            os.kill(pid, 0)
            service = "alive"
        except OSError:
            service = "gone"
    with open(SEEN, "a") as fh:
        fh.write(json.dumps({"env": seen, "service": service}) + "\n")
    prefix = dict(zip(names, FORGED))
    for name, value in seen.items():  # through the variables, if it has them
        if value:
            with open(value, "a") as fh:
                fh.write(FORGED[prefix[name]])
    for path in glob.glob("/github/file_commands/*"):  # through the files' paths
        for prefix, text in FORGED.items():
            if os.path.basename(path).startswith(prefix):
                with open(path, "a") as fh:
                    fh.write(text)
    if os.fork() == 0:  # a detached grandchild: it writes again after ToolGate's outputs
        os.setsid()
        if os.fork() == 0:
            with open(SEEN + ".pid", "w") as fh:
                fh.write(str(os.getpid()))
            end = time.time() + 120
            while time.time() < end:
                for path in glob.glob("/github/file_commands/set_output_*"):
                    if "report-path" in open(path).read():  # ToolGate has written
                        with open(path, "a") as fh:
                            fh.write("verdict=passed\npassed=true\n")
                        os._exit(0)
                time.sleep(0.05)
            os._exit(0)
        os._exit(0)


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


first = True
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") != "start":
        continue
    if first:
        forge()
        first = False
    ids = {"case_id": msg["case_id"], "sample": msg["sample"]}
    n = msg["case_id"].split("-")[1]
    call = {"id": "c1", "name": "lookup_order", "arguments": {"order_id": n}}
    if n == "2":
        call = {"id": "c1", "name": "delete_account", "arguments": {"user_id": "u1"}}
    send({**ids, "type": "tool_calls", "calls": [call]})
    sys.stdin.readline()
    send({**ids, "type": "final", "content": "done"})
"""


@pytest.fixture
def gh() -> Iterator[GitHubServer]:
    owner, repo = REPOSITORY.split("/")
    server = GitHubServer(owner=owner, repo=repo, register=[routes.register])
    server.add_token(TOKEN, "github-actions[bot]", kind="app")
    server.add_pull(7, base_sha="b" * 40, head_sha=HEAD_SHA)
    with server:
        yield server


@pytest.fixture
def host(tmp_path: Path) -> RunnerHost:
    h = RunnerHost(tmp_path / "runner")
    ws = mini_repo(h.workspace)
    (ws / "agent.py").write_text(HOSTILE)
    pinned = next(ln for ln in (ws / "toolgate.yml").read_text().splitlines() if "sha256" in ln)
    (ws / "toolgate.hostile.yml").write_text(
        "name: mini\n"
        f"dataset:\n  path: dataset.jsonl\n{pinned}\n"
        'agent:\n  kind: command\n  command: ["python", "agent.py"]\n  workers: 1\n'
        "  timeout_s: 20\n"
        "samples: 1\n"
    )
    return h


def step(host: RunnerHost, gh: GitHubServer, with_: dict[str, str]) -> StepResult:
    return run_container_action(
        host,
        with_={"config": "toolgate.hostile.yml", "baseline": "none", **with_},
        event_name="pull_request",
        event=pr_event(),
        api_url=gh.api_url,
        token=TOKEN,
        repository=REPOSITORY,
        sha=HEAD_SHA,
        timeout=180,
    )


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().split(b") ")[1][:1] != b"Z"
    except OSError:
        return False


def processes_with(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline.split(b"\0") and alive(int(name)):
                found.append(int(name))
    return found


@needs_namespaces
def test_action__agent_forges_outputs_and_summary__the_step_reports_toolgates_verdict(
    host: RunnerHost, gh: GitHubServer
) -> None:
    r = step(host, gh, {})
    assert r.code == 1, r.stdout[-3000:] + r.stderr[-3000:]
    # the agent never had the runner's variables
    (seen,) = [json.loads(x) for x in (host.workspace / "agent-saw.jsonl").read_text().splitlines()]
    assert seen["env"] == dict.fromkeys(seen["env"]), seen
    # the detached grandchild was ended with the gate: it never wrote after ToolGate
    late = int((host.workspace / "agent-saw.jsonl.pid").read_text())
    for _ in range(100):
        if not alive(late):
            break
        time.sleep(0.05)
    assert not alive(late)
    time.sleep(0.5)
    text = (host.temp / "_runner_file_commands").glob("set_output_*")
    outputs = dict(parse_key_values(next(iter(text)).read_text()))
    assert (outputs["verdict"], outputs["passed"]) == ("failed", "false")
    assert outputs["must-not-call-violations"] == "1"
    # the forged summary heading is gone; ToolGate's own report is what is there
    summary = r.summary.decode()
    assert "Everything is fine" not in summary and "✅ ToolGate passed" not in summary
    assert summary.lstrip().startswith("# ❌ ToolGate `mini` failed"), summary[:300]
    # the job's later steps get no variable or PATH entry from the agent
    for prefix in ("set_env_", "add_path_", "save_state_"):
        (f,) = (host.temp / "_runner_file_commands").glob(prefix + "*")
        assert f.read_text() == "", (prefix, f.read_text())
    warned = [a.message for a in r.annotations if a.level == "warning"]
    assert any("wrote" in w and "$GITHUB_OUTPUT" in w for w in warned), warned
    assert any("ended" in w and "process" in w for w in warned), warned


SETUPS = {
    "ampersand": "sleep {marker} &",
    "nohup": "nohup sleep {marker} > /dev/null 2>&1 &",
    "nohup-keeps-output": "nohup sleep {marker} &",
    "setsid": "setsid sleep {marker} &",
    "double-fork": "( sleep {marker} & ) ; true",
    "disown": "sleep {marker} & disown",
}


@needs_namespaces
@pytest.mark.parametrize("how", list(SETUPS))
def test_action__setup_starts_a_service_in_the_background__step_goes_on_and_ends_it(
    host: RunnerHost, gh: GitHubServer, how: str
) -> None:
    marker = f"{600 + secrets.randbelow(1000)}.{secrets.randbelow(10**6):06d}"
    setup = SETUPS[how].format(marker=marker) + (
        f"\nsleep 0.2\npgrep -n -f 'sleep {marker}' > service.pid\necho started"
    )
    t0 = time.monotonic()
    r = step(host, gh, {"setup": setup})
    took = time.monotonic() - t0
    assert r.code == 1, r.stdout[-3000:] + r.stderr[-3000:]  # the gate ran and decided
    assert took < 90, took
    assert "ToolGate: setup ran in " in r.stdout
    # the service lived while the gate ran
    (seen,) = [json.loads(x) for x in (host.workspace / "agent-saw.jsonl").read_text().splitlines()]
    assert seen["service"] == "alive", seen
    # and is gone with the step
    for _ in range(100):
        if not processes_with(f"{marker}"):
            break
        time.sleep(0.05)
    assert processes_with(marker) == []


@needs_namespaces
def test_action__runner_temp_missing__exit_2_with_a_clear_error(
    host: RunnerHost, gh: GitHubServer, tmp_path: Path
) -> None:
    r = run_container_action(
        host,
        with_={"config": "toolgate.yml", "baseline": "none"},
        event_name="pull_request",
        event=pr_event(),
        api_url=gh.api_url,
        token=TOKEN,
        repository=REPOSITORY,
        sha=HEAD_SHA,
        step_env={"RUNNER_TEMP": str(tmp_path / "no-such-folder")},
    )
    assert r.code == 2, r.stdout[-2000:] + r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    errors = [a.message for a in r.annotations if a.level == "error"]
    assert any(m.startswith("RUNNER_TEMP: ") and "is not a folder" in m for m in errors), errors
    assert r.outputs["verdict"] == "error"
