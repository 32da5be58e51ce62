"""The bill of a run is known before it is paid: ``toolgate check`` prints how many agent
runs it will make — cases × samples, a base run's seeding (``policy.min_history`` within
``policy.max_seed_samples``), the cap on extra samples — before the agent's first run,
and, with ``pricing``, the estimated cost (from the tokens the base history recorded; a
first base run says it cannot estimate yet, then estimates its seeding from its own first
samples before the seeding starts). Real ``toolgate check`` runs of a small command agent
(a subprocess) that leaves a file behind when it starts, so "before" is observed, not
assumed."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from gate.dataset import load_dataset
from gate.pipeline import CheckOptions
from gate.pipeline import check as run_check

AGENT = """\
import json, os, sys
open(os.environ["STARTED"], "a").close()  # the agent ran: the bill must be out already
ids = {}
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "start":
        ids = {"case_id": msg["case_id"], "sample": msg["sample"]}
        n = int(msg["case_id"].split("-")[1])
        call = {"id": "c1", "name": "ping", "arguments": {"n": n}}
        print(json.dumps({**ids, "type": "tool_calls", "calls": [call],
                          "usage": {"prompt_tokens": 1000}}), flush=True)
    elif msg["type"] == "tool_results":
        print(json.dumps({**ids, "type": "final", "content": "pinged",
                          "usage": {"completion_tokens": 100}}), flush=True)
"""

TOOL = {
    "name": "ping",
    "description": "Ping case n.",
    "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
}


def project(root: Path, cases: int = 6, extra: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "agent.py").write_text(AGENT)
    rows = [
        {
            "id": f"c-{i}",
            "user_input": f"ping {i}",
            "available_tools": [TOOL],
            "expected_tool_calls": [{"name": "ping", "args": {"n": i}}],
            "tool_responses": [{"name": "ping", "response": {"ok": True}}],
        }
        for i in range(cases)
    ]
    (root / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    sha = load_dataset(root / "dataset.jsonl").sha256
    config = root / "toolgate.yml"
    config.write_text(
        "name: bill\n"
        f"dataset: {{path: dataset.jsonl, sha256: {sha}}}\n"
        'agent: {kind: command, command: ["python", "agent.py"], '
        f"env: {{STARTED: {json.dumps(str(root / 'started'))}}}}}\n"
        "samples: 2\n" + extra
    )
    return config


class Console:
    """The check's console: each write kept with whether the agent had started by then."""

    def __init__(self, started: Path) -> None:
        self.started = started
        self.writes: list[tuple[str, bool]] = []

    def write(self, text: str) -> int:
        self.writes.append((text, self.started.exists()))
        return len(text)

    def flush(self) -> None:
        pass

    def line(self, start: str) -> tuple[str, bool]:
        for text, started in self.writes:
            for line in text.splitlines():
                if line.startswith(start):
                    return line, started
        raise AssertionError(f"no line starting {start!r} in {self.writes}")


def check(config: Path, out: Path, baseline: Path | None = None, **kw: Any) -> tuple[Any, Console]:
    """``toolgate check`` in process, what it announces kept (no progress, no comment)."""
    console = Console(config.parent / "started")
    got = run_check(
        CheckOptions(
            config_path=config,
            out=out,
            baseline=str(baseline) if baseline else "none",
            progress=False,
            comment=False,
            **kw,
        ),
        {},
        io.StringIO(),
        log=console,  # type: ignore[arg-type]
    )
    return got, console


def test_base_run__states_its_bill_before_the_agent_first_runs(tmp_path: Path) -> None:
    config = project(tmp_path)
    got, console = check(config, tmp_path / "out", base_run=True)
    line, started = console.line("toolgate: this base run makes")
    assert not started, "the bill came after the agent's first run"
    assert line == (
        "toolgate: this base run makes 216 agent runs: 6 cases × 2 samples (12), and 204 more "
        "to seed each case's base history to 36 samples (policy.min_history; "
        "policy.max_seed_samples caps it)."
    )
    assert (tmp_path / "started").exists()
    spend = got.results.policy.spend
    assert spend.initial + spend.seed == 216 and spend.seed == 204
    bill = got.results.policy.bill
    assert (bill.initial, bill.seeding, bill.seeded_cases, bill.extra_cap) == (12, 204, 6, 0)


def test_pull_request__states_its_runs_and_the_cap_on_extra_samples(tmp_path: Path) -> None:
    config = project(tmp_path)
    check(config, tmp_path / "base", base_run=True)
    (tmp_path / "started").unlink()
    got, console = check(config, tmp_path / "pr", tmp_path / "base" / "results.json")
    line, started = console.line("toolgate: this run makes")
    assert not started
    # 1.5 extra samples per comparable case on a pull request
    assert line == (
        "toolgate: this run makes 12 agent runs: 6 cases × 2 samples, and at most 9 more for "
        "undecided cases."
    )
    assert got.results.policy.bill.seeding == 0


def test_max_seed_samples__caps_the_seeding_the_rest_follows_on_the_next_base_run(
    tmp_path: Path,
) -> None:
    config = project(tmp_path, extra="policy: {max_seed_samples: 60}\n")
    first, console = check(config, tmp_path / "one", base_run=True)
    line, _ = console.line("toolgate: this base run makes")
    assert line == (
        "toolgate: this base run makes 72 agent runs: 6 cases × 2 samples (12), and 60 more "
        "to seed each case's base history to 36 samples (policy.min_history; capped by "
        "policy.max_seed_samples: 60)."
    )
    assert first.results.policy.spend.seed == 60
    assert all(sum(e.samples for e in c.history) == 12 for c in first.results.cases)
    second, console = check(
        config, tmp_path / "two", tmp_path / "one" / "results.json", base_run=True
    )
    line, _ = console.line("toolgate: this base run makes")
    assert line.startswith("toolgate: this base run makes 72 agent runs: 6 cases × 2 samples")
    assert all(sum(e.samples for e in c.history) >= 24 for c in second.results.cases)


def test_pricing__first_base_run_estimates_its_seeding_from_its_own_first_samples(
    tmp_path: Path,
) -> None:
    config = project(
        tmp_path, extra="pricing: {default: {input_per_mtok: 3, output_per_mtok: 15}}\n"
    )
    _, console = check(config, tmp_path / "one", base_run=True)
    line, started = console.line("toolgate: its cost cannot be estimated")
    assert not started
    assert "no earlier run recorded the tokens an agent run uses" in line
    # each run: 1,000 prompt tokens at 3 and 100 completion tokens at 15 per million
    line, started = console.line("toolgate: seeding the base histories now")
    assert started  # after the first samples, before the seeding
    assert line == (
        "toolgate: seeding the base histories now: 204 agent runs, estimated cost 0.92 at "
        "this run's own cost per agent run (0.0045, at the prices of pricing)."
    )
    _, console = check(config, tmp_path / "two", tmp_path / "one" / "results.json", base_run=True)
    line, _ = console.line("toolgate: estimated cost")
    assert line == (
        "toolgate: estimated cost 0.054 (at most 0.068) at the prices of pricing: 1,000 "
        "prompt and 100 completion tokens per run in the base history, priced as default."
    )
