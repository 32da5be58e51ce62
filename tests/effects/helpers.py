"""Real files and the real CLI for the effects tests: a dataset, a tools file, a config and
runs.jsonl written to a folder, then ``toolgate score`` (or ``import``) in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

TOOLS: list[dict[str, Any]] = [
    {
        "name": "get_reservation",
        "description": "Look up a reservation.",
        "parameters": {
            "type": "object",
            "properties": {"reservation_id": {"type": "string"}},
            "required": ["reservation_id"],
        },
    },
    {
        "name": "calculate",
        "description": "Evaluate an arithmetic expression.",
        "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}},
    },
    {
        "name": "cancel_reservation",
        "description": "Cancel a reservation.",
        "parameters": {
            "type": "object",
            "properties": {"reservation_id": {"type": "string"}},
            "required": ["reservation_id"],
        },
    },
    {
        "name": "send_certificate",
        "description": "Send a travel certificate.",
        "parameters": {
            "type": "object",
            "properties": {"user_id": {"type": "string"}, "amount": {"type": "integer"}},
            "required": ["user_id", "amount"],
        },
    },
]

EFFECTS = {
    "get_reservation": {"risk": "read"},
    "calculate": {"risk": "read"},
    "cancel_reservation": {"risk": "write"},
    "send_certificate": {"risk": "irreversible"},
}


def call(cid: str, name: str, **args: Any) -> dict[str, Any]:
    return {"id": cid, "name": name, "arguments": args}


def turn(*calls: dict[str, Any], errors: tuple[str, ...] = ()) -> dict[str, Any]:
    """One assistant turn: its calls and their results (an id in ``errors``: an error)."""
    return {
        "calls": list(calls),
        "tool_results": [
            {
                "id": c["id"],
                "content": "Error: refused" if c["id"] in errors else "ok",
                "is_error": c["id"] in errors,
            }
            for c in calls
        ],
        "content": None,
    }


def run(case_id: str, sample: int, *turns: dict[str, Any]) -> dict[str, Any]:
    return {"case_id": case_id, "sample": sample, "turns": list(turns), "final": "done"}


def project(
    tmp: Path,
    cases: list[dict[str, Any]],
    runs: list[dict[str, Any]],
    *,
    scoring: dict[str, Any] | None = None,
    tools: list[dict[str, Any]] | None = None,
) -> Path:
    """dataset.jsonl, tools.json, runs.jsonl and a pinned toolgate.yml in ``tmp``."""
    (tmp / "tools.json").write_text(json.dumps(tools if tools is not None else TOOLS, indent=2))
    rows = [{"available_tools": "@tools.json", **c} for c in cases]
    (tmp / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    scoring = scoring if scoring is not None else {"pass_on": "effects", "tools": EFFECTS}
    (tmp / "toolgate.yml").write_text(
        "name: effects\n"
        "dataset:\n  path: dataset.jsonl\n"
        "agent:\n  kind: replay\n  runs: runs.jsonl\n"
        "scoring:\n" + "".join(f"  {k}: {json.dumps(v)}\n" for k, v in scoring.items())
    )
    pinned = toolgate("pin", "--config", "toolgate.yml", cwd=tmp)
    assert pinned.returncode == 0, pinned.stderr
    return tmp / "toolgate.yml"


def toolgate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gate", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def score(tmp: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """``toolgate score`` on the project in ``tmp``: every sample by (case, sample), with its
    scores by name."""
    p = toolgate(
        "score", "--config", "toolgate.yml", "--runs", "runs.jsonl", "--out", "out", cwd=tmp
    )
    assert p.returncode == 0, p.stderr
    res = json.loads((tmp / "out" / "results.json").read_text())
    names = res["metric_names"]
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for c in res["cases"]:
        for s in c["samples"]:
            out[(c["id"], s["sample"])] = {
                **s,
                "by_name": dict(zip(names, s["scores"], strict=True)),
            }
    return out
