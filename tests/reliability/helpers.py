"""Shared builders for the reliability and security suites: valid inputs to start from,
real files on disk, the CLI as a subprocess, and the oracle every bad input must meet.

The oracle (:func:`check_input_error`): an input either loads or fails with a
:class:`gate.errors.InputError` whose every problem names a file, and — where the input
has lines — a line; a targeted mutation must be reported at its own line and field.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gate.errors import InputError, Problem

REPO = Path(__file__).resolve().parents[2]

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "lookup_order",
            "description": "Look up one order by id.",
            "parameters": {
                "type": "object",
                "properties": {
                    "order_id": {"type": "string", "pattern": "^ord_[0-9]{5}$"},
                    "include_items": {"type": "boolean"},
                },
                "required": ["order_id"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "issue_refund",
            "description": "Refund an order.",
            "parameters": {
                "type": "object",
                "properties": {
                    "order_id": {"type": "string"},
                    "amount": {"type": "number", "minimum": 0},
                    "reason": {"type": "string", "enum": ["damaged", "late", "other"]},
                },
                "required": ["order_id", "amount"],
            },
        },
    },
    {
        "name": "delete_account",
        "description": "Delete the customer's account. Irreversible.",
        "parameters": {
            "type": "object",
            "properties": {"customer_id": {"type": "string"}},
            "required": ["customer_id"],
        },
    },
    {
        "name": "search_kb",
        "description": "Search the help-centre articles.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "maxLength": 500}},
            "required": ["query"],
        },
    },
]


def case(**overrides: Any) -> dict[str, Any]:
    """A valid dataset case (JSON shape); keyword arguments replace or add columns, a
    value of ``...`` removes the column."""
    base: dict[str, Any] = {
        "id": "refund-001",
        "user_input": "Please refund order ord_10482, it arrived damaged.",
        "available_tools": TOOLS,
        "expected_tool_calls": [
            {"name": "lookup_order", "args": {"order_id": "ord_10482"}},
            {
                "name": "issue_refund",
                "args": {"order_id": "ord_10482", "amount": {"$approx": 59.9, "tol": 0.01}},
            },
        ],
        "must_not_call": ["delete_account"],
        "tool_responses": [
            {"name": "lookup_order", "response": {"order_id": "ord_10482", "total": 59.9}},
            {"name": "issue_refund", "response": {"ok": True}},
        ],
        "difficulty": "medium",
        "order": "strict",
        "tags": ["refund"],
    }
    for key, value in overrides.items():
        if value is ...:
            base.pop(key, None)
        else:
            base[key] = value
    return base


def no_tool_case(**overrides: Any) -> dict[str, Any]:
    return case(
        **{
            "id": "chitchat-001",
            "user_input": "Thanks, that's all!",
            "expected_tool_calls": [],
            "expected_no_tool": True,
            "tool_responses": ...,
            "order": ...,
            "tags": ["no-tool"],
            **overrides,
        }
    )


def cases(n: int = 3) -> list[dict[str, Any]]:
    """``n`` valid cases with distinct ids (a mix of tool and no-tool cases)."""
    out = []
    for i in range(n):
        if i % 3 == 2:
            out.append(no_tool_case(id=f"chitchat-{i:03d}"))
        else:
            out.append(case(id=f"refund-{i:03d}"))
    return out


def jsonl_bytes(rows: Iterable[Any]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def csv_bytes(rows: Sequence[Mapping[str, Any]]) -> bytes:
    """Rows as the dataset's CSV: text columns raw, the others JSON-encoded."""
    from gate.dataset import COLUMNS, TEXT_COLUMNS

    columns = [c for c in COLUMNS if any(c in r for r in rows)]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        cells = []
        for c in columns:
            if c not in r:
                cells.append("")
            elif c in TEXT_COLUMNS and isinstance(r[c], str):
                cells.append(r[c])
            else:
                cells.append(json.dumps(r[c], ensure_ascii=False))
        w.writerow(cells)
    return buf.getvalue().encode()


def config_yaml(dataset: str = "dataset.jsonl", **sections: str) -> str:
    """A minimal valid toolgate.yml (replay agent) with extra top-level YAML sections."""
    text = (
        "name: reliability\n"
        f"dataset:\n  path: {dataset}\n"
        "agent:\n  kind: replay\n  runs: runs.jsonl\n"
    )
    for key, body in sections.items():
        text += f"{key}:{body}\n" if body.startswith((" ", "\n")) else f"{key}: {body}\n"
    return text


# ─── the oracle ───────────────────────────────────────────────────────────────

FILE_LEVEL_MESSAGES = (
    "the dataset has no cases",
    "cannot read",
    "unknown dataset format",
    "more problems",
    "larger than",
    "not valid UTF-8",
    "the file is empty",
    "no records",
)
"""Problems about a whole file, which rightly name no line."""


def check_input_error(
    exc: InputError,
    *,
    files: Iterable[str],
    lines: bool,
    expect: tuple[int | tuple[int, int] | None, str] | None = None,
    lineless_ok: Callable[[Problem], bool] | None = None,
) -> None:
    """Every problem names one of ``files`` (the input and the files it references);
    with ``lines``, a line unless it is a file-level problem (or ``lineless_ok`` says it
    may have none); with ``expect`` = (line, field prefix), some problem is exactly
    there."""
    assert isinstance(exc, InputError), type(exc)
    assert exc.problems, "an InputError with no problems"
    names = set(files)
    text = exc.render()
    assert text.strip(), "an empty error message"
    for p in exc.problems:
        assert isinstance(p, Problem)
        assert p.file in names, f"problem names {p.file!r}, not one of {sorted(names)}: {p}"
        assert p.message and p.message.strip(), f"empty message: {p!r}"
        if lines and p.line is None and not (lineless_ok and lineless_ok(p)):
            assert any(m in p.message for m in FILE_LEVEL_MESSAGES), (
                f"a problem without a line: {p}"
            )
        if p.line is not None:
            assert p.line >= 1, p
    if expect is not None:
        line, field = expect
        hits = [
            p
            for p in exc.problems
            if (
                line is None
                or p.line == line
                or (isinstance(line, tuple) and p.line is not None and line[0] <= p.line <= line[1])
            )
            and p.field is not None
            and (p.field == field or p.field.startswith((field + ".", field + "[")))
        ]
        assert hits, f"expected a problem at line {line}, field {field!r}; got:\n{text}"


# ─── the CLI as a subprocess ──────────────────────────────────────────────────


def toolgate(
    *args: str | os.PathLike[str],
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
    input: bytes | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python -m gate ARGS`` in ``cwd`` (the installed CLI, a real process)."""
    full_env = {
        k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS" and not k.startswith("GITHUB_")
    }
    full_env.update(env or {})
    full_env.setdefault("PYTHONPATH", str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "gate", *map(str, args)],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        input=input.decode() if input is not None else None,
        check=False,
    )


def assert_clean_exit(proc: subprocess.CompletedProcess[str], code: int) -> None:
    """Exit ``code`` and no Python traceback on either stream."""
    both = proc.stdout + proc.stderr
    assert "Traceback (most recent call last)" not in both, both[-3000:]
    assert proc.returncode == code, (
        f"exit {proc.returncode}, wanted {code}\n--- stdout\n{proc.stdout[-2000:]}"
        f"\n--- stderr\n{proc.stderr[-2000:]}"
    )


# ─── projects for the fault and security suites ───────────────────────────────

AGENT = Path(__file__).parent / "agents" / "fault_agent.py"
"""A command-protocol agent that misbehaves as each case asks (``FAULT=<name>``)."""

TOOL = {
    "type": "function",
    "function": {
        "name": "lookup_order",
        "description": "Look up an order.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}},
            "required": ["order_id"],
        },
    },
}


def fault_case(fault: str, n: int = 0) -> dict[str, Any]:
    return {
        "id": f"{fault}-{n}",
        "user_input": f"Where is order ord_10482? FAULT={fault}",
        "available_tools": [TOOL],
        "expected_tool_calls": [{"name": "lookup_order", "args": {"order_id": "ord_10482"}}],
        "tool_responses": [{"name": "lookup_order", "response": {"status": "shipped"}}],
    }


def project(
    tmp_path: Path,
    rows: list[dict[str, Any]],
    agent: str,
    *,
    samples: int = 2,
    extra: str = "",
) -> Path:
    """dataset.jsonl (pinned) + toolgate.yml with ``agent`` (YAML text of the section)."""
    (tmp_path / "dataset.jsonl").write_bytes(jsonl_bytes(rows))
    from gate.dataset import load_dataset

    sha = load_dataset(tmp_path / "dataset.jsonl").sha256
    cfg = tmp_path / "toolgate.yml"
    cfg.write_text(
        f"name: faults\ndataset:\n  path: dataset.jsonl\n  sha256: {sha}\n"
        f"agent:\n{agent}samples: {samples}\nconcurrency: 4\n{extra}"
    )
    return cfg


def command_agent(pids: Path, *, timeout_s: float = 2.0, sleep_s: float = 0.0) -> str:
    env = {"FAULT_PIDS_DIR": str(pids), "FAULT_SLEEP_S": str(sleep_s)}
    return (
        "  kind: command\n"
        f"  command: {json.dumps([sys.executable, str(AGENT)])}\n"
        "  workers: 4\n"
        f"  timeout_s: {timeout_s}\n"
        "  step_budget: 3\n"
        f"  env: {json.dumps(env)}\n"
    )


# ─── a server that never quite answers ───────────────────────────────────────


class TrickleServer:
    """An HTTP server on 127.0.0.1 that answers 200 with a long body, one byte at a time
    (every ``gap_s`` seconds): each read finishes well within any per-read timeout, so
    only a bound on the whole exchange ends it."""

    def __init__(
        self, gap_s: float = 0.2, status: bytes = b"200 OK", *, mode: str = "length"
    ) -> None:
        """``mode``: ``length`` (a Content-Length of 1 MB, kept alive), ``close``
        (``Connection: close`` and no length: the body ends when the connection does), or
        ``headers`` (the status line and headers themselves a byte at a time)."""
        import socket
        import threading

        self.gap_s = gap_s
        self.status = status
        self.mode = mode
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> TrickleServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.sock.close()

    def _serve(self) -> None:
        import threading

        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn: Any) -> None:
        with conn:
            try:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head = b"HTTP/1.1 " + self.status + b"\r\nContent-Type: application/json\r\n"
                if self.mode == "headers":
                    for byte in head + b"Connection: close\r\n\r\n{}":
                        if self.stop.wait(self.gap_s):
                            return
                        conn.sendall(bytes([byte]))
                    return
                if self.mode == "close":
                    conn.sendall(head + b"Connection: close\r\n\r\n")
                else:
                    conn.sendall(head + b"Content-Length: 1000000\r\n\r\n")
                while not self.stop.wait(self.gap_s):
                    conn.sendall(b" ")
            except OSError:
                return
