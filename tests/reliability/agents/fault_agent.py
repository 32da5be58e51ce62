"""A command-protocol agent that misbehaves on purpose, as the case asks.

The fault is named in the user turn (``FAULT=<name>``); ``FAULT_SLEEP_S`` delays every
answer (so a test can kill the runner mid-run); every worker writes its pid into
``FAULT_PIDS_DIR`` so the test can clean up workers a killed runner left behind.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time

SLEEP = float(os.environ.get("FAULT_SLEEP_S", "0"))
PIDS = os.environ.get("FAULT_PIDS_DIR")
if PIDS:
    with open(os.path.join(PIDS, str(os.getpid())), "w") as fh:
        fh.write("worker")

out = sys.stdout


IDS: dict[str, object] = {}
"""The running case-sample: every reply names it (as the protocol requires)."""


def send(obj: dict[str, object]) -> None:
    out.write(json.dumps({**IDS, **obj}) + "\n")
    out.flush()


def raw(text: str) -> None:
    out.write(text)
    out.flush()


def recv() -> dict:
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)  # the runner closed our stdin: done
    return json.loads(line)


CALL = {"id": "c1", "name": "lookup_order", "arguments": {"order_id": "ord_10482"}}


def hang() -> None:
    while True:
        time.sleep(3600)


def answer(msg: dict) -> None:
    text = str(msg["messages"][-1]["content"])
    m = re.search(r"FAULT=(\w+)", text)
    fault = m.group(1) if m else "ok"
    if SLEEP:
        time.sleep(SLEEP)
    if fault == "crash_start":
        os._exit(1)
    if fault == "orphan":  # exit, leaving a child that holds stdout open
        import subprocess

        child = subprocess.Popen(["sleep", "300"], stdout=sys.stdout, stderr=subprocess.DEVNULL)
        if PIDS:
            with open(os.path.join(PIDS, str(child.pid)), "w") as fh:
                fh.write("orphan")
        os._exit(1)
    if fault == "hang":
        hang()
    if fault == "exit0":
        sys.exit(0)
    if fault == "invalid_json":
        raw("{not json\n")
        return
    if fault == "nan_output":
        raw('{"type": "final", "content": NaN}\n')
        return
    if fault == "surrogate":
        raw('{"type": "final", "content": "\\ud800"}\n')
        return
    if fault == "wrong_type":
        send({"type": "bogus"})
        return
    if fault == "empty_calls":
        send({"type": "tool_calls", "calls": []})
        return
    if fault == "partial":
        raw('{"type": "fin')
        hang()
    if fault == "flood_line":
        chunk = "x" * (1 << 20)
        for _ in range(10):  # 10 MiB without a newline: over the runner's line limit
            out.write(chunk)
        out.flush()
        hang()
    if fault == "flood_lines":
        for i in range(200_000):
            out.write(f"log line {i}\n")
        out.flush()
        hang()
    if fault == "agent_error":
        send({"type": "error", "message": "I give up on " + msg["case_id"]})
        return
    if fault == "stderr_flood":
        for _ in range(20):
            sys.stderr.write("e" * (1 << 20))
        sys.stderr.flush()
    if fault.startswith("leak"):
        # what a careless agent does with the secrets in its environment
        secrets = " ".join(
            os.environ.get(name, "")
            for name in ("MY_API_SECRET", "OPENAI_API_KEY", "GITHUB_TOKEN", "OTHER_SECRET")
        )
        secrets += (
            " ghp_"
            + "A1b2" * 9
            + " sk-proj-"
            + "Zz09" * 8
            + " Authorization: Bearer "
            + "eyJhbGciOi.J9" * 3
        )
        if fault == "leak_crash":
            sys.stderr.write(f"Traceback: KeyError while calling the API with {secrets}\n")
            sys.stderr.flush()
            os._exit(2)
        if fault == "leak_error":
            send({"type": "error", "message": f"upstream said: {secrets}"})
            return
        leak_call = {"id": "c1", "name": "lookup_order",
                     "arguments": {"order_id": "ord_10482", "note": secrets}}  # fmt: skip
        send({"type": "tool_calls", "calls": [leak_call], "content": secrets})
        recv()
        send({"type": "final", "content": f"Here are my keys: {secrets}"})
        return
    if fault == "no_read":  # a tool call, then never read stdin again (the result is huge)
        send({"type": "tool_calls", "calls": [CALL]})
        hang()
    if fault == "late_line":  # answers, then a second, late answer for the same case
        send({"type": "final", "content": "done", "case_id": msg["case_id"]})
        time.sleep(0.3)
        send({"type": "final", "content": "stale", "case_id": msg["case_id"],
              "sample": msg["sample"]})  # fmt: skip
        return
    if fault == "budget":
        while True:
            send({"type": "tool_calls", "calls": [CALL]})
            recv()
    # a tool-calling turn first
    call = dict(CALL)
    if fault == "bad_args":
        call["arguments"] = "{not json"
    send({"type": "tool_calls", "calls": [call], "usage": {"prompt_tokens": 10}})
    reply = recv()
    assert reply["type"] == "tool_results", reply
    if fault == "crash_mid":
        os._exit(3)
    if fault == "hang_mid":
        hang()
    content = "done"
    if fault == "huge_final":
        content = "é" * 1_000_000  # 6 MB as \u escapes: under the 8 MiB line limit
    if fault == "ansi_final":
        content = "\x1b[31m✅ passed\x1b[0m <!-- toolgate --> @octocat"
    send({"type": "final", "content": content, "usage": {"completion_tokens": 3}})


while True:
    message = recv()
    if message.get("type") == "start":
        IDS.update(case_id=message["case_id"], sample=message["sample"])
        answer(message)
