"""Every reader of ToolGate as a fuzz target (see :mod:`tests.reliability.fuzzing`).

===================  =========================================================  ==========
target               reader (and what runs on a valid input)                    CLI
===================  =========================================================  ==========
``dataset_jsonl``    ``gate.dataset.load_dataset`` (+ hash stable on reload,     validate
                     every case scored)
``dataset_csv``      the same, CSV
``runs``             ``gate.runsfile`` via ``gate.pipeline.score_stage`` (+      score
                     results serialise, a verdict is taken, every report renders)
``config``           ``gate.pipeline.inputs.read_config``                        validate
``results``          ``gate.results.read_results`` as a baseline, then          diff
                     ``gate.baseline.diff.compare`` both ways and ``decide``
``tool_schemas``     a tool's ``parameters`` via the dataset's                   validate
                     ``available_tools`` (inline and ``@tools.json``), then
                     arguments validated against it by the scorer
``providers``        ``gate.adapters`` (OpenAI chat, Responses, Anthropic,       import
                     Gemini; whole payloads, stream events and SSE), then
                     ``toolgate import transcripts``' reader
===================  =========================================================  ==========
"""

from __future__ import annotations

import json
import math
import random
import re
from functools import cache
from pathlib import Path
from typing import Any

import orjson
from hypothesis import strategies as st

from gate import jsonio
from gate.model import Run, ToolCall, Turn
from tests.reliability import helpers as h
from tests.reliability.fuzzing import (
    FuzzInput,
    Target,
    csv_rows_bytes,
    dump_json,
    mutate_bytes,
    mutate_structure,
    rand_json,
    seeded,
)

REPO = h.REPO
MODES = st.sampled_from(["targeted", "structural", "structural", "bytes"])


def _jsonl(rows: list[Any], ascii_only: bool = True) -> bytes:
    return b"".join(dump_json(r, ascii_only=ascii_only) + b"\n" for r in rows)


# ─── the dataset ──────────────────────────────────────────────────────────────

DATASET_INVALID: dict[str, list[Any]] = {
    "id": [5, [], "", " padded", "a\x00b", "x" * 201, True],
    "user_input": ["", "   ", 3, ["hi"], {"text": "hi"}],
    "message_history": [
        "hi",
        [5],
        [{"role": "robot"}],
        [{"role": "tool", "tool_call_id": "nope"}],
        [{"role": "user", "content": 5}],
        [{"role": "user", "colour": "red"}],
    ],
    "available_tools": [
        "tools.json",
        5,
        [5],
        [{"name": "bad name!"}],
        "@missing.json",
        "@../outside.json",
        "@/etc/passwd",
        [{"name": "t", "parameters": []}],
        [{"type": "function"}],
        {},
    ],
    "expected_tool_calls": [
        "lookup_order",
        [5],
        [{"name": "nope"}],
        [{"name": "lookup_order", "args": {"order_id": {"$regex": "("}}}],
        [{"name": "lookup_order", "args": {"colour": "red"}}],
        [{"name": "lookup_order", "args": {}, "extra": 1}],
        [{"name": "lookup_order", "args": [1]}],
        [{"name": "lookup_order", "required_args_only": "no"}],
        [{"name": "lookup_order", "args": {"order_id": {"$in": []}}}],
        [{"name": "lookup_order", "args": {"order_id": {"$approx": 1}}}],
    ],
    "expected_no_tool": ["no", 1, "true", [], {}],
    "acceptable_alternatives": ["x", [5], [[{"name": "nope"}]], [{"name": "lookup_order"}]],
    "must_not_call": [
        "delete_account",
        [5],
        ["lookup_ordr"],
        ["delete_account", "delete_account"],
        {},
    ],
    "difficulty": ["extreme", 3, "Hard", []],
    "order": ["random", 1, "Strict", ["strict"]],
    "tool_responses": [
        {},
        [5],
        [{"name": "lookup_order"}],
        [{"name": "lookup_order", "response": 1, "error": "x"}],
        [{"name": "nope", "response": 1}],
        [{"name": "lookup_order", "error": None}],
        [{"name": "lookup_order", "response": 1, "delay": 3}],
    ],
    "step_budget": [0, 1001, 1.5, "3", True, -1, [3]],
    "tags": ["x", ["a b"], ["a", "a"], [5], ["a,b"], ["k=v"], [""]],
    "source_trace_id": [5, [], {}],
    "notes": [[], 5, {}],
}
"""Values that are certainly invalid for each column (JSON shapes)."""

DATASET_INVALID_CSV_TEXT: dict[str, list[str]] = {
    "id": [" padded", "a\tb", "x" * 201],
    "user_input": ["   "],
    "difficulty": ["extreme", "Hard"],
    "order": ["random", "Strict"],
}
"""In CSV the text columns are raw cell text: only these texts are certainly invalid."""

UNKNOWN_COLUMNS = ["expected_tool_call", "ID", "tool", "expected", "mustnotcall"]


def _dataset_rows(draw: Any) -> list[dict[str, Any]]:
    n = draw(st.integers(1, 4))
    rows = h.cases(n)
    if draw(st.booleans()):
        for r in rows:
            r["available_tools"] = "@tools.json"
    return rows


@st.composite
def dataset_inputs(draw: Any, fmt: str) -> FuzzInput:
    rows = _dataset_rows(draw)
    name = f"dataset.{fmt}"
    extra = {"tools.json": dump_json(h.TOOLS, indent=2)}
    mode = draw(MODES)
    expect: tuple[int | tuple[int, int] | None, str] | None = None
    note = ""
    if mode == "targeted":
        i = draw(st.integers(0, len(rows) - 1))
        table = DATASET_INVALID_CSV_TEXT if fmt == "csv" else DATASET_INVALID
        if fmt == "csv":
            from gate.dataset import TEXT_COLUMNS

            table = {**table, **{c: v for c, v in DATASET_INVALID.items() if c not in TEXT_COLUMNS}}
        column = draw(st.sampled_from([*sorted(table), "<unknown>"]))
        if column == "<unknown>":
            column = draw(st.sampled_from(UNKNOWN_COLUMNS))
            rows[i][column] = 1
            line = 1 if fmt == "csv" else i + 1
        else:
            rows[i][column] = draw(st.sampled_from(table[column]))
            line = i + 2 if fmt == "csv" else i + 1
        expect = (line, column)
        note = f"row {i} {column}={rows[i][column]!r}"[:200]
        data = csv_rows_bytes(rows) if fmt == "csv" else _jsonl(rows)
    elif mode == "structural":
        doc = mutate_structure(seeded(draw), {"rows": rows, "tools": h.TOOLS}, max_ops=4)
        if isinstance(doc, dict) and isinstance(doc.get("rows"), list):
            rows_out: list[Any] = doc["rows"]
            tools_out: Any = doc.get("tools", h.TOOLS)
        else:
            rows_out, tools_out = [doc], h.TOOLS
        ascii_only = draw(st.booleans())
        data = csv_rows_bytes(rows_out) if fmt == "csv" else _jsonl(rows_out, ascii_only)
        extra["tools.json"] = dump_json(tools_out, ascii_only=ascii_only, indent=2)
        note = "structural"
    else:
        data = csv_rows_bytes(rows) if fmt == "csv" else _jsonl(rows)
        data = mutate_bytes(seeded(draw), data, max_ops=3)
        if draw(st.integers(0, 4)) == 0:
            extra["tools.json"] = mutate_bytes(seeded(draw), extra["tools.json"], max_ops=2)
        note = "bytes"
    return FuzzInput(data, name, extra, expect, mode, note)


def _count_jsonl_cases(data: bytes) -> int:
    n = 0
    for i, raw in enumerate(data.splitlines(keepends=True)):
        # the loader iterates lines split at b"\n" only
        if i == 0 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if raw.strip():
            n += 1
    return n


def check_dataset(inp: FuzzInput, folder: Path) -> None:
    from gate.dataset import load_dataset
    from gate.results import evidence_json
    from gate.scorers import ScoringContext, score_sample

    path = folder / inp.name
    ds = load_dataset(path, display=inp.name)
    again = load_dataset(path, display=inp.name)
    assert again.sha256 == ds.sha256, "the dataset hash changed between two loads"
    assert len(ds.cases) >= 1
    assert len({c.id for c in ds.cases}) == len(ds.cases), "duplicate ids accepted"
    if inp.name.endswith(".jsonl") and b"\r" not in inp.data:
        lines = [ln for ln in inp.data.split(b"\n")]
        assert len(ds.cases) == sum(
            1
            for i, ln in enumerate(lines)
            if (ln[3:] if i == 0 and ln.startswith(b"\xef\xbb\xbf") else ln).strip()
        )
    ctx = ScoringContext.build(None, None, ds.tools)
    for c in ds.cases:
        calls = tuple(
            ToolCall(name=e.name, arguments={"order_id": "ord_10482"}, id=f"c{j}")
            for j, e in enumerate(c.expected_tool_calls[:3])
        )
        run = Run(case_id=c.id, sample=0, turns=(Turn(calls=calls),) if calls else (), final="ok")
        score = score_sample(c, run, ctx)
        assert score.evidence is not None or score.passed
        evidence = evidence_json(score.evidence) if score.evidence is not None else {}
        jsonio.dumps({"scores": dict(score.scores), "evidence": evidence})


def dataset_target(fmt: str) -> Target:
    return Target(
        name=f"dataset_{fmt}",
        strategy=dataset_inputs(fmt),
        check=check_dataset,
        files=lambda inp: [inp.name, "tools.json"],
        lines=True,
        cli=lambda inp, folder: ["validate", "--dataset", inp.name],
    )


# ─── runs.jsonl and the score stage ──────────────────────────────────────────

RUNS_DATASET = h.cases(3)
CALL_NAMES = [
    "lookup_order",
    "issue_refund",
    "delete_account",
    "search_kb",
    "Delete_Account",
    "functions.delete_account",
    "nope",
    "",
    "ｌｏｏｋｕｐ＿ｏｒｄｅｒ",
    "a" * 300,
]

RUNS_INVALID: dict[str, list[Any]] = {
    "case_id": [5, "", [], True],
    "sample": [-1, 1.5, "0", True, [0]],
    "turns": [
        "x",
        [5],
        [{"calls": "x"}],
        [{"calls": [{"name": 5}]}],
        [{"bogus": 1}],
        [{"calls": [{"name": "x", "parse_ok": "yes"}]}],
        [{"tool_results": [{"is_error": 1}]}],
        [{"content": 5}],
        [{"calls": [{"name": "x", "id": 5}]}],
        [{"calls": [{"name": "x", "colour": 1}]}],
    ],
    "error": [5, [], {}],
    "final": [5, ["done"], {}],
    "latency_ms": ["fast", True, [1]],
    # (a fractional or negative count is data — the sample's invalid usage, gate.model.usage —
    # not an input error; a count that is not a number is one)
    "usage": [{"prompt_tokens": "1.5"}, [1], {"a": True}, "10"],
    "usage_error": [5, [], {}],
    "meta": [5, "x", []],
}


ARGUMENT_TEXTS = [
    '{"order_id": "ord_10482"}',
    "{bad json",
    "[]",
    "null",
    '{"a": NaN}',
    '{"a": 1, "a": 2}',
    '"\\ud800"',
    "{" * 100,
    '{"q": 1e400}',
    "",
]


@st.composite
def run_records(draw: Any) -> list[dict[str, Any]]:
    """Plausible runs of the runs dataset; the bulk content comes from a seeded generator
    (hypothesis draws the seed), the shape from hypothesis."""
    rng = draw(st.randoms(use_true_random=False))
    nasty = h_strings()
    samples = draw(st.integers(1, 2))
    out = []
    for s in range(samples):
        for c in RUNS_DATASET:
            turns = []
            for _ in range(rng.randrange(4)):
                calls = []
                for _ in range(rng.randrange(4)):
                    r = rng.random()
                    args = (
                        rand_json(rng, 6)
                        if r < 0.3
                        else rng.choice(ARGUMENT_TEXTS)
                        if r < 0.5
                        else {
                            k: rand_json(rng, 3)
                            for k in rng.sample(
                                ["order_id", "amount", "query", "x"], rng.randrange(4)
                            )
                        }
                    )
                    calls.append(
                        {"id": f"c{len(calls)}", "name": rng.choice(CALL_NAMES), "arguments": args}
                    )
                results = [
                    {"id": cl["id"], "content": rand_json(rng, 4), "is_error": rng.random() < 0.3}
                    for cl in calls
                ]
                turns.append(
                    {"calls": calls, "tool_results": results, "content": rng.choice([None, *nasty])}
                )
            out.append(
                {
                    "case_id": c["id"],
                    "sample": s,
                    "turns": turns,
                    "final": rng.choice([None, *nasty]),
                    "error": rng.choice(
                        [None, None, "crash: boom", "timeout: slow", "step_budget: x"]
                    ),
                    "latency_ms": rng.choice([None, rng.uniform(0, 1e6)]),
                    "usage": rng.choice([None, {"prompt_tokens": 10, "completion_tokens": 2}]),
                }
            )
    return out


@cache
def h_strings() -> list[str]:
    from tests.reliability.fuzzing import NASTY_STRINGS

    return [s for s in NASTY_STRINGS if len(s) < 1000]


def _clean(value: Any, depth: int = 0) -> Any:
    """``value`` with what a strict reader refuses anywhere on a line (non-finite floats,
    integers beyond 64 bits, lone surrogates, deep nesting) replaced: a base for targeted
    mutations, whose error must be the targeted one."""
    if depth > 40:
        return None
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, int) and not isinstance(value, bool):
        return value if -(2**63) <= value < 2**64 else 0
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, list):
        return [_clean(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {_clean(k): _clean(v, depth + 1) for k, v in value.items()}
    return value


@st.composite
def runs_inputs(draw: Any) -> FuzzInput:
    records = draw(run_records())
    extra = {"dataset.jsonl": _jsonl(RUNS_DATASET)}
    mode = draw(st.sampled_from(["targeted", "valid", "valid", "structural", "bytes"]))
    if mode == "valid":
        # nasty but readable model output: scored, gated and rendered in every report
        return FuzzInput(_jsonl(_clean(records)), "runs.jsonl", extra, None, mode, mode)
    expect = None
    note = mode
    if mode == "targeted":
        records = _clean(records)
        i = draw(st.integers(0, len(records) - 1))
        field = draw(st.sampled_from([*sorted(RUNS_INVALID), "<unknown>"]))
        if field == "<unknown>":
            field = draw(st.sampled_from(["turn", "samples", "caseid", "result"]))
            records[i][field] = 1
        else:
            records[i][field] = draw(st.sampled_from(RUNS_INVALID[field]))
        expect = (i + 1, field)
        note = f"line {i + 1} {field}={records[i][field]!r}"[:200]
        data = _jsonl(records)
    elif mode == "structural":
        doc = mutate_structure(seeded(draw), records, max_ops=4)
        data = _jsonl(doc if isinstance(doc, list) else [doc], draw(st.booleans()))
    else:
        data = mutate_bytes(seeded(draw), _jsonl(records), max_ops=3)
    return FuzzInput(data, "runs.jsonl", extra, expect, mode, note)


def check_runs(inp: FuzzInput, folder: Path) -> None:
    from gate.dataset import load_dataset
    from gate.pipeline import score_file
    from gate.report import render_comment, render_console, render_junit, render_markdown
    from gate.results import dumps_results
    from tests.policy.helpers import decide_results as decide

    ds = load_dataset(folder / "dataset.jsonl", display="dataset.jsonl")
    results = score_file(dataset=ds, runs_path=folder / inp.name, runs_display=inp.name).results
    decided = decide(results, None, None, None)
    data = dumps_results(decided)
    assert jsonio.loads_strict(data, max_depth=128)["cases"]
    for render in (render_comment, render_markdown, render_junit, render_console):
        text = render(decided)
        assert isinstance(text, str) and text


def runs_target() -> Target:
    return Target(
        name="runs",
        strategy=runs_inputs(),
        check=check_runs,
        files=lambda inp: ["runs.jsonl", "dataset.jsonl"],
        lines=True,
        # a run that is missing has no line of its own; the message names the case's line
        lineless_ok=lambda inp, p: "has no run in this file" in p.message,
        cli=lambda inp, folder: [
            "score",
            "--dataset",
            "dataset.jsonl",
            "--runs",
            "runs.jsonl",
            "--out",
            "out",
        ],
    )


# ─── toolgate.yml ─────────────────────────────────────────────────────────────

SHA = "a" * 64
BASE_CONFIG = f"""\
# a config that uses every section
name: reliability
dataset:
  path: dataset.jsonl
  version: "2026.1"
  sha256: {SHA}
  normalize:
    case: true
    id_prefixes: ["ord_"]
agent:
  kind: command
  command: ["python", "agent.py"]
  workers: 2
  timeout_s: 20
  step_budget: 6
samples: 3
concurrency: 4
seed: 7
scoring:
  default_order: superset
  tools:
    issue_refund: {{risk: irreversible}}
  arg_scope:
    - tool: issue_refund
      arg: order_id
      regex: "ord_[0-9]+"
  required_before:
    - tool: issue_refund
      preceded_by: [lookup_order]
gates:
  - metric: call_accuracy
    min: 0.8
  - metric: unnecessary_call_rate
    max: 0.1
    slice: tag=refund
variance:
  max_std: 0.1
  max_flaky_share: 0.2
regressions:
  max_new_failures: 0
baseline:
  max_age_days: 14
judge:
  model: gpt-4o-mini
  base_url: http://127.0.0.1:9/v1
  rubrics: [tool_appropriateness]
reporting:
  out: toolgate-out
  comment: true
  secrets: [MY_TOKEN]
"""

CONFIG_INVALID: list[tuple[str, list[str], str]] = [
    # (the line's key as written, replacement values, the field errors must name)
    ("name", ["has space", "''", "a/b", "[x]", "x" * 65], "name"),
    ("  path", ["5", "[a]", "{}", "~"], "dataset.path"),
    ("  sha256", ["xyz", SHA.upper(), "123", "[a]"], "dataset.sha256"),
    ("    case", ["no", "yes", "'true'", "1", "on"], "dataset.normalize.case"),
    ("  kind", ["docker", "Replay", "[replay]", "5"], "agent"),
    ("  workers", ["0", "257", "two", "1.5", "true"], "agent.workers"),
    ("  timeout_s", ["0", "-5", "fast", "[]"], "agent.timeout_s"),
    ("samples", ["0", "101", "1.5", "'3'", "yes", "[3]", ".nan", ".inf"], "samples"),
    ("concurrency", ["0", "10000", "four"], "concurrency"),
    ("seed", ["1.5", "abc", "[]", "no"], "seed"),
    ("  default_order", ["maybe", "true", "5", "Superset"], "scoring.default_order"),
    ("  - metric", ["call_acuracy", "judge.tool_appropriateness", "5", "''"], "gates[0].metric"),
    ("    min", ["high", "[]", "true", ".nan"], "gates[0].min"),
    ("    slice", ["tag", "colour=red", "tag= x"], "gates[1].slice"),
    ("  max_std", ["-1", "x", "[]"], "variance.max_std"),
    ("  max_flaky_share", ["2", "-0.1", "x"], "variance.max_flaky_share"),
    ("  max_new_failures", ["-1", "1.5", "x"], "regressions.max_new_failures"),
    ("  max_age_days", ["0", "-1", "x"], "baseline.max_age_days"),
    ("  base_url", ["file:///etc/passwd", "ftp://x", "5"], "judge.base_url"),
    # a model-level check (rubrics against custom_rubrics) names the section, not the key
    ("  rubrics", ["[nonsense]"], "judge"),
    ("  rubrics", ["x", "5"], "judge.rubrics"),
    ("  comment", ["no", "yes", "off", "'false'", "0"], "reporting.comment"),
    ("  secrets", ["MY_TOKEN", "5", "{a: 1}"], "reporting.secrets"),
]

YAML_NASTY_LINES = [
    "seed: !!python/object/apply:os.system ['true']",
    "x: !include other.yml",
    "!!binary aGk=: 1",
    "anchor: &a [1, 2]",
    "alias: *a",
    "alias: *missing",
    "<<: {samples: 2}",
    "? [complex, key]\n: 1",
    "%YAML 1.1",
    "---",
    "...",
    "\tseed: 1",
    "samples: {",
    "samples: [1, 2",
    "'unclosed: 1",
    "samples: 1\nsamples: 2",
    "b: &b [&c [1,1,1,1,1,1,1,1], *c, *c, *c, *c, *c, *c, *c, *c]",
    "date: 2024-01-01",
    "v: 0x1F",
    "v: 0o17",
    "v: 1_000",
    "v: .nan",
    "v: -.inf",
    "v: ~",
    "- a list item",
    "  deeper: 1",
    "k: " + "[" * 200 + "]" * 200,
    "k: \x00",
    "k: \ud800",
]


@st.composite
def config_inputs(draw: Any) -> FuzzInput:
    extra = {"dataset.jsonl": _jsonl(h.cases(2))}
    lines = BASE_CONFIG.splitlines()
    mode = draw(st.sampled_from(["targeted", "targeted", "structural", "bytes", "yaml"]))
    expect = None
    note = mode
    if mode == "targeted":
        key, values, field = draw(st.sampled_from(CONFIG_INVALID))
        idx = next(i for i, ln in enumerate(lines) if ln.startswith(key + ":"))
        value = draw(st.sampled_from(values))
        lines[idx] = f"{key}: {value}"
        # A model-level check (the agent union's `kind`, rubrics against custom_rubrics)
        # names the section and its line rather than the key.
        section_level = key.startswith(" ") and "." not in field
        expect = (None if section_level else idx + 1, field)
        note = f"line {idx + 1}: {lines[idx]}"
        text = "\n".join(lines) + "\n"
        data = text.encode("utf-8", "surrogatepass")
    elif mode == "yaml":
        for _ in range(draw(st.integers(1, 3))):
            at = draw(st.integers(0, len(lines)))
            indent = draw(st.sampled_from(["", "  ", "    "]))
            lines.insert(at, indent + draw(st.sampled_from(YAML_NASTY_LINES)))
        data = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
    elif mode == "structural":
        rng = seeded(draw)
        doc = mutate_structure(rng, base_config_data(), max_ops=3)
        # JSON with indentation is block-like YAML 1.2 (and cheap); ruamel's block style too
        data = dump_json(doc, indent=2) if rng.random() < 0.7 else _yaml_dump(doc)
    else:
        data = mutate_bytes(seeded(draw), BASE_CONFIG.encode(), max_ops=3)
    return FuzzInput(data, "toolgate.yml", extra, expect, mode, note)


@cache
def base_config_data() -> Any:
    from gate.yamlio import parse_yaml

    return parse_yaml(BASE_CONFIG, "x").data


def _yaml_dump(doc: Any) -> bytes:
    """Block-style YAML; JSON text (valid YAML 1.2) when ruamel cannot represent it."""
    import io

    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    buf = io.StringIO()
    try:
        yaml.dump(doc, buf)
        return buf.getvalue().encode("utf-8", "surrogatepass")
    except Exception:  # an unrepresentable value: fall back to JSON
        return dump_json(doc)


def check_config(inp: FuzzInput, folder: Path) -> None:
    from gate.pipeline.inputs import read_config

    cfg = read_config(folder / inp.name, display=inp.name)
    assert cfg.source == folder / inp.name
    cfg.model_dump(mode="json")


def config_target() -> Target:
    return Target(
        name="config",
        strategy=config_inputs(),
        check=check_config,
        files=lambda inp: ["toolgate.yml"],
        lines=True,
        cli=lambda inp, folder: ["validate", "--config", "toolgate.yml"],
        lineless_ok=_empty_config,
    )


def _empty_config(inp: FuzzInput, problem: Any) -> bool:
    """A document with no content has no line for a missing required section."""
    from gate.errors import ConfigError
    from gate.yamlio import parse_yaml

    if problem.message != "required":
        return False
    try:
        return parse_yaml(inp.data.decode("utf-8"), "x").data == {}
    except (ConfigError, UnicodeDecodeError):
        return False


# ─── results.json as a baseline ───────────────────────────────────────────────


@cache
def base_results() -> tuple[Any, dict[str, Any], Any]:
    """(config, results as JSON, Results) from a real scored run with a verdict and a
    comparison: the valid file the results target mutates."""
    import tempfile

    from gate.config import config_from_doc
    from gate.dataset import load_dataset
    from gate.pipeline import score_file
    from gate.results import to_jsonable
    from gate.yamlio import parse_yaml
    from tests.policy.helpers import decide_results as decide

    tmp = Path(tempfile.mkdtemp(prefix="toolgate-fuzz-base-"))
    rows = h.cases(4)
    (tmp / "dataset.jsonl").write_bytes(_jsonl(rows))
    records = []
    for s in range(2):
        for i, r in enumerate(rows):
            calls = [{"id": "c0", "name": "lookup_order", "arguments": {"order_id": "ord_10482"}}]
            if (i + s) % 3 == 0:
                calls.append(
                    {"id": "c1", "name": "delete_account", "arguments": {"customer_id": "u1"}}
                )
            records.append(
                {
                    "case_id": r["id"],
                    "sample": s,
                    "turns": [{"calls": calls}] if i % 3 != 2 else [],
                    "final": "done",
                }
            )
    (tmp / "runs.jsonl").write_bytes(_jsonl(records))
    text = h.config_yaml(gates="\n  - metric: call_accuracy\n    min: 0.5")
    cfg = config_from_doc(parse_yaml(text, "toolgate.yml"), tmp / "toolgate.yml")
    ds = load_dataset(tmp / "dataset.jsonl", display="dataset.jsonl")
    results = score_file(dataset=ds, runs_path=tmp / "runs.jsonl", config=cfg).results
    decided = decide(results, cfg, results, "itself")
    return cfg, to_jsonable(decided), decided


RESULTS_INVALID: list[tuple[tuple[Any, ...], list[Any], str]] = [
    (("schema_version",), [3, "2", 0, None], "schema_version"),
    (("cases",), ["x", 5, {}], "cases"),
    (("cases", 0, "pass_rate"), ["high", [], None], "cases.0.pass_rate"),
    (("cases", 0, "samples"), ["x", [5]], "cases.0.samples"),
    (("cases", 0, "id"), [5, None, []], "cases.0.id"),
    (("metrics",), [[], "x"], "metrics"),
    (("samples",), ["three", [], {}], "samples"),
    (("dataset", "sha256"), [5, None, []], "dataset.sha256"),
    (("dataset",), ["x", []], "dataset"),
    (("verdict", "passed"), ["maybe", [], {}], "verdict.passed"),
    (("comparison", "flips"), ["x", [5]], "comparison.flips"),
    (("extra_key",), [1], "extra_key"),
    (("cases", 0, "colour"), [1], "cases.0.colour"),
]


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    for p in path[:-1]:
        doc = doc[p]
    doc[path[-1]] = value


@st.composite
def results_inputs(draw: Any) -> FuzzInput:
    _, base, _ = base_results()
    mode = draw(MODES)
    expect = None
    note = mode
    extra = {"head.json": base_results_bytes()}
    if mode == "targeted":
        doc = orjson.loads(base_results_bytes())
        path, values, field = draw(st.sampled_from(RESULTS_INVALID))
        value = draw(st.sampled_from(values))
        _set(doc, path, value)
        expect = (None, field)
        note = f"{field}={value!r}"
        data = dump_json(doc)
    elif mode == "structural":
        rng = seeded(draw)
        doc = mutate_structure(rng, base, max_ops=4)
        # compact JSON: json's indenting encoder is pure Python (10x slower)
        data = dump_json(
            doc, ascii_only=rng.random() < 0.5, indent=2 if rng.random() < 0.1 else None
        )
    else:
        data = mutate_bytes(seeded(draw), base_results_bytes(), max_ops=3)
    return FuzzInput(data, "baseline.json", extra, expect, mode, note)


@cache
def base_results_bytes() -> bytes:
    return dump_json(base_results()[1], indent=2)


def check_results(inp: FuzzInput, folder: Path) -> None:
    from gate.report import render_comment
    from gate.results import dumps_results, read_results
    from tests.policy.helpers import compare_results as compare
    from tests.policy.helpers import decide_results as decide

    cfg, _, head = base_results()
    base = read_results(folder / inp.name, display=inp.name)
    for a, b in ((base, head), (head, base), (base, base)):
        comparison = compare(a, b, source="fuzz")
        dumps_results(comparison, indent=False)
    decided = decide(head, cfg, base, "a fuzzed baseline")
    dumps_results(decided)
    assert render_comment(decided)


def results_target() -> Target:
    return Target(
        name="results",
        strategy=results_inputs(),
        check=check_results,
        files=lambda inp: ["baseline.json"],
        lines=False,
        cli=lambda inp, folder: ["diff", "baseline.json", "head.json"],
    )


# ─── tool schemas ─────────────────────────────────────────────────────────────

SCHEMA_KEYWORDS = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "enum",
    "const",
    "items",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "pattern",
    "patternProperties",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "$ref",
    "$defs",
    "format",
    "multipleOf",
    "uniqueItems",
    "$schema",
    "if",
    "then",
    "else",
    "dependentRequired",
    "propertyNames",
    "prefixItems",
    "contains",
    "description",
    "default",
    "nullable",
]
SCHEMA_TYPES = [
    "object",
    "string",
    "integer",
    "number",
    "boolean",
    "array",
    "null",
    "strnig",
    "OBJECT",
]
SCHEMA_URIS = [
    "https://json-schema.org/draft/2020-12/schema",
    "http://json-schema.org/draft-07/schema#",
    "http://json-schema.org/draft-04/schema#",
    "http://json-schema.org/draft-03/schema#",
    "https://example.com/unknown",
]
PATTERNS = [
    "^ord_[0-9]{5}$",
    "(",
    "^(a|a)*$",
    "^(a+)+$",
    "[",
    "\\",
    "a{2,1}",
    ".*",
    "(?P<x>a)(?P=x)",
]


def random_schema(rng: random.Random, depth: int = 3) -> Any:
    """A schema-like object: schema keywords with values of the right or wrong kind."""
    if depth == 0 or rng.random() < 0.15:
        return rng.choice([True, False, {"type": rng.choice(SCHEMA_TYPES)}, {}])
    out: dict[str, Any] = {}
    for _ in range(rng.randrange(6)):
        key = rng.choice(SCHEMA_KEYWORDS)
        r = rng.random()
        if r < 0.15:
            value: Any = rng.choice(SCHEMA_TYPES)
        elif r < 0.22:
            value = rng.sample(SCHEMA_TYPES, rng.randrange(1, 4))
        elif r < 0.32:
            value = rng.choice(PATTERNS)
        elif r < 0.37:
            value = rng.choice(SCHEMA_URIS)
        elif r < 0.42:
            value = rng.choice(["#", "#/$defs/x", "#/properties/a", "http://evil.example/s.json"])
        elif r < 0.55:
            value = rand_json(rng, 4)
        elif r < 0.75:
            value = random_schema(rng, depth - 1)
        elif r < 0.85:
            value = [random_schema(rng, depth - 1) for _ in range(rng.randrange(3))]
        else:
            names = ["a", "order_id", "x", "^a", "(", "^(a|a)*$"]
            value = {
                rng.choice(names): random_schema(rng, depth - 1) for _ in range(rng.randrange(3))
            }
        out[key] = value
    return out


SCHEMA_INVALID = [
    {"type": "strnig"},
    {"type": "array"},
    {"type": "object", "properties": 5},
    {"type": "object", "required": "x"},
    {"type": "object", "properties": {"a": {"$ref": "http://evil.example/x.json"}}},
    {"type": "object", "properties": {"a": {"pattern": "("}}},
    {"$schema": "https://example.com/unknown", "type": "object"},
    {"type": "object", "properties": {"a": {"minLength": -1}}},
    {"type": "object", "properties": {"a": {"type": "strnig"}}},
    [],
    "object",
    5,
]


@st.composite
def tool_schema_inputs(draw: Any) -> FuzzInput:
    mode = draw(st.sampled_from(["targeted", "random", "random", "mutated", "bytes"]))
    if mode == "targeted":
        schema = draw(st.sampled_from(SCHEMA_INVALID))
    rng = seeded(draw)
    if mode == "random":
        schema = random_schema(rng)
        if rng.random() < 0.5:
            schema = {
                "type": "object",
                "properties": {"a": schema, "order_id": schema},
                **({"required": ["a"]} if rng.random() < 0.5 else {}),
            }
    elif mode != "targeted":
        base = h.TOOLS[0]["function"]["parameters"]  # type: ignore[index]
        schema = mutate_structure(rng, base, max_ops=3)
    tool = {"name": "probe", "description": "a fuzzed schema", "parameters": schema}
    names = ["a", "order_id", "x", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"]
    args = {
        rng.choice(names): rand_json(rng, 5) if rng.random() < 0.8 else "a" * 30 + "!"
        for _ in range(rng.randrange(4))
    }
    row = h.case(
        id="probe-1",
        available_tools=[tool, h.TOOLS[2]],
        must_not_call=["delete_account"],
        expected_tool_calls=[{"name": "probe", "args": {}}],
        tool_responses=...,
        order=...,
    )
    by_ref = draw(st.booleans())
    extra: dict[str, bytes] = {"args.json": dump_json(args)}
    if by_ref:
        extra["tools.json"] = dump_json([tool, h.TOOLS[2]], indent=2)
        row["available_tools"] = "@tools.json"
    data = _jsonl([row])
    expect: tuple[int | tuple[int, int] | None, str] | None = None
    if mode == "targeted":
        # In a tools file the problem names the bad field's line: one within the first tool.
        first_tool_lines = dump_json([tool], indent=2).decode().count("\n") - 1
        expect = (
            ((2, 1 + first_tool_lines), "[0].parameters")
            if by_ref
            else (1, "available_tools[0].parameters")
        )
    if mode == "bytes":
        if by_ref:
            extra["tools.json"] = mutate_bytes(seeded(draw), extra["tools.json"], max_ops=2)
        else:
            data = mutate_bytes(seeded(draw), data, max_ops=2)
    return FuzzInput(data, "dataset.jsonl", extra, expect, mode, json.dumps(schema)[:200])


def check_tool_schema(inp: FuzzInput, folder: Path) -> None:
    from gate.dataset import load_dataset
    from gate.scorers import ScoringContext, score_sample

    ds = load_dataset(folder / inp.name, display=inp.name)
    ctx = ScoringContext.build(None, None, ds.tools)
    args = json.loads((folder / "args.json").read_text())
    for c in ds.cases:
        for a in (args, {}, {"order_id": "ord_10482"}):
            run = Run(case_id=c.id, sample=0, turns=(Turn(calls=(ToolCall("probe", a, id="p"),)),))
            score = score_sample(c, run, ctx)
            assert score.scores["schema_validity"] in (0.0, 1.0, None)


def tool_schema_target() -> Target:
    return Target(
        name="tool_schemas",
        strategy=tool_schema_inputs(),
        check=check_tool_schema,
        files=lambda inp: ["dataset.jsonl", "tools.json"],
        lines=True,
        cli=lambda inp, folder: ["validate", "--dataset", "dataset.jsonl"],
    )


# ─── provider payloads ────────────────────────────────────────────────────────

SAMPLES = REPO / "tests" / "interop" / "samples"
PAYLOADS = REPO / "tests" / "adapters" / "payloads"
PROVIDERS = {
    # transcript format: (adapter provider, samples file, stream events file)
    "openai": ("openai_chat", "openai_chat.jsonl", "openai_chat_stream_chunks.json"),
    "responses": ("openai_responses", "responses.jsonl", None),
    "anthropic": ("anthropic", "anthropic.jsonl", "anthropic_stream_events.json"),
    "gemini": ("gemini", "gemini.jsonl", None),
}
BIG_ARGUMENTS = [
    "{" * 100,
    '{"a": ' + "[" * 80 + "]" * 80 + "}",
    '{"q": "' + "x" * 100_000 + '"}',
    '{"a": NaN}',
    '{"a": 1e400}',
    '{"a": 1, "a": 2}',
    '{"a": "\\ud800"}',
    '{"n": 123456789012345678901234567890}',
    "not json at all",
    "",
    "null",
    "[1, 2]",
    '"{\\"nested\\": \\"string\\"}"',
]


@cache
def provider_records() -> dict[str, list[dict[str, Any]]]:
    out = {}
    for fmt, (_, sample, _) in PROVIDERS.items():
        out[fmt] = [
            json.loads(ln) for ln in (SAMPLES / sample).read_text().splitlines() if ln.strip()
        ]
    return out


@cache
def provider_streams() -> dict[str, list[Any]]:
    return {
        fmt: json.loads((PAYLOADS / stream).read_text())
        for fmt, (_, _, stream) in PROVIDERS.items()
        if stream
    }


def _with_big_arguments(rng: random.Random, doc: Any) -> Any:
    """Put an adversarial arguments string or object where a call's arguments go."""
    text = json.dumps(doc)
    for key in ('"arguments": ', '"input": ', '"args": ', '"partial_json": '):
        if key in text and rng.random() < 0.5:
            paths = [p for p in _all_paths(doc) if p and p[-1] == key[1:-3]]
            if paths:
                value = rng.choice(BIG_ARGUMENTS) if rng.random() < 0.6 else rand_json(rng, 6)
                _set(doc, rng.choice(paths), value)
    return doc


def _all_paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.extend(_all_paths(v, (*prefix, k)))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out.extend(_all_paths(v, (*prefix, i)))
    return out


@st.composite
def provider_inputs(draw: Any) -> FuzzInput:
    fmt = draw(st.sampled_from(sorted(PROVIDERS)))
    records = json.loads(json.dumps(provider_records()[fmt]))
    streams = provider_streams()
    mode = draw(st.sampled_from(["arguments", "structural", "structural", "bytes", "stream"]))
    stream: Any = None
    rng = seeded(draw)
    if fmt in streams and (mode == "stream" or rng.random() < 0.25):
        events = _with_big_arguments(rng, json.loads(json.dumps(streams[fmt])))
        stream = mutate_structure(rng, events, max_ops=3) if rng.random() < 0.8 else events
    if mode == "arguments":
        records = _with_big_arguments(rng, records)
    elif mode == "structural":
        target = rng.choice(["response", "request", "record"])
        i = rng.randrange(len(records))
        if target == "record":
            records = mutate_structure(rng, records, max_ops=3)
        elif isinstance(records[i].get(target), dict):
            records[i][target] = mutate_structure(rng, records[i][target], max_ops=3)
    ascii_only = rng.random() < 0.5
    data = _jsonl(records if isinstance(records, list) else [records], ascii_only)
    if mode == "bytes":
        data = mutate_bytes(rng, data, max_ops=3)
    extra = {"stream.json": dump_json(stream)} if stream is not None else {}
    extra["format"] = fmt.encode()
    return FuzzInput(data, "transcripts.jsonl", extra, None, mode, fmt)


def check_providers(inp: FuzzInput, folder: Path) -> None:
    from gate.adapters import PayloadError, Provider, parse, stream_accumulator
    from gate.adapters.sse import iter_events
    from gate.interop.transcripts import Format, import_transcripts
    from gate.runsfile import RunsWriter, read_runs

    fmt = inp.extra["format"].decode()
    provider = Provider(PROVIDERS[fmt][0])
    # 1. the adapters on every response payload of the file, decoded strictly
    for raw in inp.data.split(b"\n"):
        try:
            record = jsonio.loads_strict(raw)
        except jsonio.JsonInputError:
            continue
        payload = record.get("response") if isinstance(record, dict) else record
        try:
            turn = parse(provider, payload)
        except PayloadError as exc:
            assert isinstance(exc.path, str) and str(exc).strip()
            continue
        _round_trip(folder, [Run("c", 0, turns=(Turn(calls=turn.calls, content=turn.content),))])
    # 2. stream events, whole and through the SSE reader
    if (folder / "stream.json").exists():
        try:  # strictly, as the SSE reader decodes every event
            events = jsonio.loads_strict((folder / "stream.json").read_bytes())
        except jsonio.JsonInputError:
            events = []
        for source in ("events", "sse"):
            try:
                acc = stream_accumulator(provider)
                if source == "events":
                    for ev in events if isinstance(events, list) else [events]:
                        acc.add(ev)
                else:
                    sse = "".join(
                        f"data: {json.dumps(ev)}\n\n"
                        for ev in (events if isinstance(events, list) else [events])
                    )
                    for _, ev in iter_events(
                        (sse + "data: [DONE]\n\n").encode().splitlines(keepends=True)
                    ):
                        acc.add(ev)
                turn = acc.finish()
            except PayloadError:
                continue
            _round_trip(
                folder, [Run("s", 0, turns=(Turn(calls=turn.calls, content=turn.content),))]
            )
    # 3. the transcripts reader (toolgate import transcripts): a valid import or an InputError
    imported = import_transcripts(folder / inp.name, Format(fmt), cases=True, display=inp.name)
    _round_trip(folder, list(imported.runs))
    del RunsWriter, read_runs


def _round_trip(folder: Path, runs: list[Run]) -> None:
    """Every run the adapters produce can be written to runs.jsonl and read back equal."""
    from gate.runsfile import RunsWriter, read_runs

    path = folder / "roundtrip.jsonl"
    with RunsWriter(path) as w:
        for r in runs:
            for c in r.calls:
                assert c.arguments is None or isinstance(c.arguments, dict)
                assert c.parse_ok == (c.arguments is not None)
            w.write(r)
    back = [r for _, r in read_runs(path)]
    assert [r.calls for r in back] == [r.calls for r in runs]


def provider_target() -> Target:
    return Target(
        name="providers",
        strategy=provider_inputs(),
        check=check_providers,
        files=lambda inp: ["transcripts.jsonl"],
        lines=True,
        cli=lambda inp, folder: [
            "import",
            "transcripts",
            "--format",
            inp.extra["format"].decode(),
            "transcripts.jsonl",
            "--out",
            "out",
            "--cases",
        ],
    )


def all_targets() -> dict[str, Target]:
    targets = [
        dataset_target("jsonl"),
        dataset_target("csv"),
        runs_target(),
        config_target(),
        results_target(),
        tool_schema_target(),
        provider_target(),
    ]
    return {t.name: t for t in targets}


_ = re  # re is kept for targets that grow text-level rules
