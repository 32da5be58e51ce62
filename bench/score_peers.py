"""The peers of ``bench/score_bench.py``, each run in its own bench-only virtualenv.

Usage: ``PEER_PYTHON bench/score_peers.py PEER DATASET RUNS`` with PEER one of
``deepeval``, ``agentevals-strict``, ``agentevals-unordered``, ``bfcl``.

Like ToolGate, every peer starts from the files on disk: it reads the dataset (expected
calls, tool schemas) and decodes every line of the runs file with the stdlib ``json``
module, converts each case-sample into the peer's own input objects and computes the
peer's one number. It prints one JSON line: ``{"peer", "n", "scored_s", "import_s",
"checksum"}`` — ``scored_s`` is the time from opening the runs file to the last score
(imports excluded, to the peers' advantage), ``checksum`` the sum of the scores (so the
work cannot be optimised away and runs can be compared).

* ``deepeval`` — ``ToolCorrectnessMetric(evaluation_params=[INPUT_PARAMETERS])``,
  ``async_mode=False``, no ``available_tools`` (so no LLM is ever asked); its constructor
  insists on a model, so it gets a stub that raises if called.
* ``agentevals-strict`` / ``-unordered`` — ``create_trajectory_match_evaluator`` on OpenAI
  chat messages (one assistant message per turn; the reference one message per expected
  call), ``tool_args_match_mode="exact"``.
* ``bfcl`` — ``ast_checker`` (``simple`` for one expected call, ``parallel`` otherwise),
  with the tool schemas converted to BFCL's types and each expected value as a one-option
  answer; a run with an unparseable call is invalid without calling the checker (BFCL
  fails such output at decoding).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
os.environ.setdefault("DEEPEVAL_GRPC_LOGGING", "NO")
os.environ.setdefault("ERROR_REPORTING", "NO")


def load_dataset(path: str) -> dict[str, dict[str, Any]]:
    cases: dict[str, dict[str, Any]] = {}
    tools_cache: dict[str, list[Any]] = {}
    base = os.path.dirname(path)
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            c = json.loads(line)
            tools = c.get("available_tools", [])
            if isinstance(tools, str):
                ref = tools[1:]
                if ref not in tools_cache:
                    with open(os.path.join(base, ref), encoding="utf-8") as tf:
                        tools_cache[ref] = json.load(tf)
                tools = tools_cache[ref]
            c["_tools"] = [t.get("function", t) for t in tools]
            cases[c["id"]] = c
    return cases


def iter_runs(path: str):  # type: ignore[no-untyped-def]
    with open(path, "rb") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def _args(call: dict[str, Any]) -> dict[str, Any] | None:
    if call.get("parse_ok") is False:
        return None
    a = call.get("arguments")
    if isinstance(a, str):
        try:
            a = json.loads(a)
        except ValueError:
            return None
    return a if isinstance(a, dict) else None


# ─── DeepEval ─────────────────────────────────────────────────────────────────


def run_deepeval(dataset: str, runs: str) -> dict[str, Any]:
    t0 = time.perf_counter()
    from deepeval.metrics import ToolCorrectnessMetric
    from deepeval.models import DeepEvalBaseLLM
    from deepeval.test_case import LLMTestCase, ToolCall, ToolCallParams

    class NoModel(DeepEvalBaseLLM):
        """ToolCorrectnessMetric never calls its model without available_tools."""

        def __init__(self) -> None:
            super().__init__(model="none")

        def load_model(self, *args: Any, **kwargs: Any) -> Any:
            return None

        def generate(self, *args: Any, **kwargs: Any) -> str:
            raise RuntimeError("the bench model must never be called")

        async def a_generate(self, *args: Any, **kwargs: Any) -> str:
            raise RuntimeError("the bench model must never be called")

        def get_model_name(self, *args: Any, **kwargs: Any) -> str:
            return "none"

    metric = ToolCorrectnessMetric(
        model=NoModel(),
        evaluation_params=[ToolCallParams.INPUT_PARAMETERS],
        async_mode=False,
        include_reason=True,
    )
    import_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    cases = load_dataset(dataset)
    n = 0
    total = 0.0
    for run in iter_runs(runs):
        case = cases[run["case_id"]]
        called = []
        for turn in run.get("turns", []):
            for call in turn.get("calls", []):
                called.append(ToolCall(name=call["name"], input_parameters=_args(call) or {}))
        expected = [
            ToolCall(name=e["name"], input_parameters=e.get("args", {}))
            for e in case.get("expected_tool_calls", [])
        ]
        tc = LLMTestCase(
            input=case["user_input"],
            actual_output=run.get("final") or "",
            tools_called=called,
            expected_tools=expected,
        )
        total += metric.measure(tc, _show_indicator=False)
        n += 1
    return {"n": n, "scored_s": time.perf_counter() - t1, "import_s": import_s, "checksum": total}


# ─── agentevals ───────────────────────────────────────────────────────────────


def run_agentevals(dataset: str, runs: str, mode: str) -> dict[str, Any]:
    t0 = time.perf_counter()
    from agentevals.trajectory.match import create_trajectory_match_evaluator

    evaluator = create_trajectory_match_evaluator(
        trajectory_match_mode=mode, tool_args_match_mode="exact"
    )
    import_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    cases = load_dataset(dataset)
    n = 0
    total = 0.0
    for run in iter_runs(runs):
        case = cases[run["case_id"]]
        outputs: list[dict[str, Any]] = [{"role": "user", "content": case["user_input"]}]
        for turn in run.get("turns", []):
            calls = turn.get("calls", [])
            outputs.append(
                {
                    "role": "assistant",
                    "content": turn.get("content") or "",
                    "tool_calls": [
                        {
                            "id": c.get("id") or f"c{i}",
                            "type": "function",
                            "function": {
                                "name": c["name"],
                                # agentevals raises on arguments that are not JSON:
                                # an unparseable call is sent as an empty object.
                                "arguments": json.dumps(_args(c) or {}),
                            },
                        }
                        for i, c in enumerate(calls)
                    ],
                }
            )
            for r in turn.get("tool_results", []):
                outputs.append(
                    {
                        "role": "tool",
                        "tool_call_id": r.get("id") or "",
                        "content": json.dumps(r.get("content")),
                    }
                )
        outputs.append({"role": "assistant", "content": run.get("final") or ""})
        reference: list[dict[str, Any]] = [{"role": "user", "content": case["user_input"]}]
        for i, e in enumerate(case.get("expected_tool_calls", [])):
            reference.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": f"e{i}",
                            "type": "function",
                            "function": {
                                "name": e["name"],
                                "arguments": json.dumps(e.get("args", {})),
                            },
                        }
                    ],
                }
            )
        reference.append({"role": "assistant", "content": ""})
        res = evaluator(outputs=outputs, reference_outputs=reference)
        total += float(res["score"])
        n += 1
    return {"n": n, "scored_s": time.perf_counter() - t1, "import_s": import_s, "checksum": total}


# ─── BFCL ─────────────────────────────────────────────────────────────────────

_BFCL_TYPES = {
    "string": "string",
    "integer": "integer",
    "number": "float",
    "boolean": "boolean",
    "array": "array",
    "object": "dict",
}


def _bfcl_schema(p: dict[str, Any]) -> dict[str, Any]:
    out = dict(p)
    t = p.get("type")
    out["type"] = _BFCL_TYPES.get(t, "any") if isinstance(t, str) else "any"
    if "items" in p and isinstance(p["items"], dict):
        out["items"] = _bfcl_schema(p["items"])
    if "properties" in p and isinstance(p["properties"], dict):
        out["properties"] = {k: _bfcl_schema(v) for k, v in p["properties"].items()}
    return out


def run_bfcl(dataset: str, runs: str) -> dict[str, Any]:
    t0 = time.perf_counter()
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    import_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    cases = load_dataset(dataset)
    descriptions: dict[str, list[dict[str, Any]]] = {}
    n = 0
    total = 0.0
    for run in iter_runs(runs):
        case = cases[run["case_id"]]
        cid = run["case_id"]
        funcs = descriptions.get(cid)
        if funcs is None:
            funcs = []
            for t in case["_tools"]:
                params = t.get("parameters", {})
                funcs.append(
                    {
                        "name": t["name"],
                        "parameters": {
                            "type": "dict",
                            "properties": {
                                k: _bfcl_schema(v) for k, v in params.get("properties", {}).items()
                            },
                            "required": params.get("required", []),
                        },
                    }
                )
            descriptions[cid] = funcs
        expected = case.get("expected_tool_calls", [])
        output = []
        broken = False
        for turn in run.get("turns", []):
            for call in turn.get("calls", []):
                a = _args(call)
                if a is None:
                    broken = True
                output.append({call["name"]: a or {}})
        if broken or not expected:
            valid = (not expected) and not output
        else:
            answer = [{e["name"]: {k: [v] for k, v in e.get("args", {}).items()}} for e in expected]
            category = "simple" if len(expected) == 1 else "parallel"
            try:
                res = ast_checker(
                    funcs, output, answer, Language.PYTHON, category, "gpt-4o-2024-11-20"
                )
                valid = bool(res["valid"])
            except (KeyError, TypeError, AttributeError, IndexError):
                valid = False
        total += 1.0 if valid else 0.0
        n += 1
    return {"n": n, "scored_s": time.perf_counter() - t1, "import_s": import_s, "checksum": total}


def main() -> None:
    peer, dataset, runs = sys.argv[1:4]
    if peer == "deepeval":
        out = run_deepeval(dataset, runs)
    elif peer == "agentevals-strict":
        out = run_agentevals(dataset, runs, "strict")
    elif peer == "agentevals-unordered":
        out = run_agentevals(dataset, runs, "unordered")
    elif peer == "bfcl":
        out = run_bfcl(dataset, runs)
    else:
        raise SystemExit(f"unknown peer {peer!r}")
    out["peer"] = peer
    print(json.dumps(out))


if __name__ == "__main__":
    main()
