"""The properties of the tests against a base history, on the integrated gate: real
``toolgate check`` runs (in process) of a ``python`` agent whose every sample's outcome
is given, against a baseline results.json written by an earlier check.

Case ``c<i>`` passes a sample when the agent calls ``ping(n=i)``; the agent reads which
samples pass from ``plan.json`` beside it (written by the test before each check; the
agent runs in a worker process).
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gate.dataset import load_dataset
from gate.pipeline import CheckOptions, check
from gate.policy import engine
from gate.policy.casetest import Counts, single_bound
from gate.policy.history import CaseHistory, HistoryEntry
from gate.policy.sequential import CaseStatus, status
from gate.results import Results, read_results

CASES = 4
AGENT = """
import json
from pathlib import Path

PLAN_FILE = Path(__file__).with_name("plan.json")


def run(messages, tools, call_tool, case_id, sample):
    # The agent runs in a worker process: the plan comes in a file, read for every call.
    outcomes = json.loads(PLAN_FILE.read_text())[case_id]
    if sample < len(outcomes) and outcomes[sample]:
        call_tool("ping", {"n": int(case_id[1:])})
        return "done"
    return "no"
"""
SETTINGS = settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _dataset(root: Path, edited: int | None = None) -> str:
    tool = {
        "name": "ping",
        "description": "Ping a case.",
        "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
    }
    rows = []
    for i in range(CASES):
        note = "edited" if i == edited else "as written"
        rows.append(
            json.dumps(
                {
                    "id": f"c{i}",
                    "user_input": f"ping {i}",
                    "notes": note,
                    "available_tools": [tool],
                    "expected_tool_calls": [{"name": "ping", "args": {"n": i}}],
                    "expected_no_tool": False,
                    "tool_responses": [{"name": "ping", "response": {"ok": True}}],
                }
            )
        )
    (root / "dataset.jsonl").write_text("\n".join(rows) + "\n")
    return load_dataset(root / "dataset.jsonl").sha256


def _config(root: Path, *, max_extra: int | None, edited: int | None = None) -> Path:
    sha = _dataset(root, edited)
    policy = "" if max_extra is None else f"policy: {{max_extra_samples: {max_extra}}}\n"
    path = root / "toolgate.yml"
    path.write_text(
        "name: props\n"
        f"dataset: {{path: dataset.jsonl, sha256: {sha}}}\n"
        "agent: {kind: python, callable: 'tgprop_agent:run', path: ['.'], timeout_s: 20}\n"
        "concurrency: 2\n" + policy
    )
    return path


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ModuleType]]:
    root = tmp_path_factory.mktemp("props")
    (root / "tgprop_agent.py").write_text(AGENT)
    sys.path.insert(0, str(root))
    try:
        import tgprop_agent  # type: ignore[import-not-found]

        yield root, tgprop_agent
    finally:
        sys.path.remove(str(root))
        sys.modules.pop("tgprop_agent", None)


_RUN = [0]


def _check(
    agent: tuple[Path, ModuleType],
    plan: Mapping[str, Sequence[bool]],
    baseline: Path | None,
    *,
    max_extra: int | None,
    edited: int | None = None,
) -> tuple[Results, Path]:
    root, _ = agent
    (root / "plan.json").write_text(json.dumps({k: list(v) for k, v in plan.items()}))
    _RUN[0] += 1
    out = root / f"out-{_RUN[0]}"
    config = _config(root, max_extra=max_extra, edited=edited)
    got = check(
        CheckOptions(
            config_path=config,
            out=out,
            baseline=str(baseline) if baseline else "none",
            progress=False,
            comment=False,
        ),
        {"PATH": ""},
        io.StringIO(),
    )
    return got.results, out / "results.json"


outcomes = st.lists(st.booleans(), min_size=2, max_size=2)
plans = st.fixed_dictionaries({f"c{i}": outcomes for i in range(CASES)})


def _blocked_by_history(r: Results) -> bool:
    assert r.verdict is not None
    return any(
        x.startswith("suite-level drop") or "regression(s) >" in x for x in r.verdict.reasons
    )


@SETTINGS
@given(base=plans)
def test_check__identical_base_and_head__never_regress_nor_fail(
    agent: tuple[Path, ModuleType], base: dict[str, list[bool]]
) -> None:
    _, first = _check(agent, base, None, max_extra=0)
    head, _ = _check(agent, base, first, max_extra=0)
    assert head.verdict is not None and head.verdict.passed, head.verdict.reasons
    assert head.comparison is not None and not head.comparison.flips
    assert all(c.test is not None and c.test.outcome == "unchanged" for c in head.cases)


@SETTINGS
@given(base=plans, head=plans, flips=plans)
def test_check__adding_failures_on_head__never_turns_a_block_into_a_pass(
    agent: tuple[Path, ModuleType],
    base: dict[str, list[bool]],
    head: dict[str, list[bool]],
    flips: dict[str, list[bool]],
) -> None:
    _, first = _check(agent, {k: [True, True] for k in base}, None, max_extra=0)
    _, second = _check(agent, base, first, max_extra=0)
    worse = {k: [x and not f for x, f in zip(v, flips[k], strict=True)] for k, v in head.items()}
    a, _ = _check(agent, head, second, max_extra=0)
    b, _ = _check(agent, worse, second, max_extra=0)
    if _blocked_by_history(a):
        assert _blocked_by_history(b), (a.verdict, b.verdict)
    was = {c.id for c in a.cases if c.test and c.test.outcome == "regressed"}
    now = {c.id for c in b.cases if c.test and c.test.outcome == "regressed"}
    assert was <= now


@SETTINGS
@given(
    base=st.fixed_dictionaries(
        {f"c{i}": st.lists(st.booleans(), min_size=2, max_size=2) for i in range(CASES)}
    ),
    head=st.fixed_dictionaries(
        {f"c{i}": st.lists(st.booleans(), min_size=42, max_size=42) for i in range(CASES)}
    ),
)
def test_check__extra_samples__only_for_undecided_cases_and_replayable(
    agent: tuple[Path, ModuleType], base: dict[str, list[bool]], head: dict[str, list[bool]]
) -> None:
    history = {k: [True] * 2 for k in base}
    _, prev = _check(agent, history, None, max_extra=None)
    for _ in range(3):  # a base history of 8 samples per case
        _, prev = _check(agent, history, prev, max_extra=None)
    _, prev = _check(agent, base, prev, max_extra=None)
    baseline = read_results(prev)
    got, _ = _check(agent, head, prev, max_extra=None)
    assert got.policy is not None
    spent = got.policy.spend.per_case
    # Every extra sample the gate ran is the next one of the plan, in order …
    for c in got.cases:
        assert [s.passed for s in c.samples] == head[c.id][: len(c.samples)]
        assert c.extra_samples == spent.get(c.id, 0)
    # … and the engine, given the same outcomes, plans the same extra samples, each for a
    # case that was still undecided when it was planned.
    hist = engine.BaseHistory(
        {
            c.id: CaseHistory(
                c.hash or "",
                tuple(HistoryEntry(e.passes, e.samples) for e in c.history),
            )
            for c in baseline.cases
        }
    )
    hashes = {c.id: c.hash or "" for c in got.cases}
    params = engine.EngineParams()
    bound = single_bound(CASES, params.alpha_case)
    taken = {k: 2 for k in head}

    def sampler(plan: Mapping[str, int]) -> dict[str, list[engine.Sample]]:
        out: dict[str, list[engine.Sample]] = {}
        for cid, k in plan.items():
            h = hist.cases[cid]
            now = Counts(sum(head[cid][: taken[cid]]), taken[cid])
            st_ = status(
                Counts(h.passes, h.samples), now, log_bound=bound, params=params.sequential
            )
            assert st_ is CaseStatus.SAMPLING, (cid, st_)
            out[cid] = [engine.Sample(x) for x in head[cid][taken[cid] : taken[cid] + k]]
            taken[cid] += k
        return out

    heads = [  # in dataset order, as the gate has them (ties are served in that order)
        engine.HeadCase(c.id, hashes[c.id], tuple(engine.Sample(x) for x in head[c.id][:2]))
        for c in got.cases
    ]
    ev = engine.evaluate(hist, heads, sampler, params=params)
    assert dict(ev.spend.per_case) == dict(spent)
    assert {i: c.outcome.value for i, c in ev.cases.items()} == {
        c.id: c.test.outcome for c in got.cases if c.test is not None
    }


def test_check__edited_case__not_comparable_listed_apart_history_restarts(
    agent: tuple[Path, ModuleType],
) -> None:
    passing = {f"c{i}": [True] * 40 for i in range(CASES)}
    failing = {**passing, "c1": [False] * 40, "c2": [False] * 40}
    _, prev = _check(agent, passing, None, max_extra=None)
    for _ in range(4):
        _, prev = _check(agent, passing, prev, max_extra=None)
    got, _ = _check(agent, failing, prev, max_extra=None, edited=1)
    tests: dict[str, Any] = {c.id: c.test for c in got.cases}
    assert tests["c1"].outcome == "not_comparable" and tests["c1"].comparability == "changed"
    assert tests["c2"].outcome == "regressed"
    assert got.comparison is not None
    assert [(f.case_id, f.kind) for f in got.comparison.flips] == [("c2", "regression")]
    c1 = next(c for c in got.cases if c.id == "c1")
    assert [e.samples for e in c1.history] == [c1.test.head_samples if c1.test else -1]
    assert got.verdict is not None and not got.verdict.passed


def test_merge__shards__tested_as_one_family_with_their_extra_samples(
    agent: tuple[Path, ModuleType],
) -> None:
    from gate.model import Shard
    from gate.pipeline.merge import merge_and_decide
    from gate.report.redact import Redactor

    root, _ = agent
    passing = {f"c{i}": [True] * 40 for i in range(CASES)}
    failing = {**passing, "c3": [False] * 40}
    _, prev = _check(agent, passing, None, max_extra=None)
    for _ in range(4):
        _, prev = _check(agent, passing, prev, max_extra=None)
    config = _config(root, max_extra=None)
    (root / "plan.json").write_text(json.dumps(failing))
    parts = []
    for i in (1, 2):
        out = root / f"shard-{i}"
        check(
            CheckOptions(
                config_path=config,
                out=out,
                baseline=str(prev),
                shard=Shard(i, 2),
                progress=False,
                comment=False,
            ),
            {"PATH": ""},
            io.StringIO(),
        )
        parts.append((f"shard {i}", out / "results.json"))
    from gate.pipeline.inputs import read_config

    merged = merge_and_decide(
        parts,
        config=read_config(config),
        baseline=read_results(prev),
        baseline_source="base",
        out=root / "merged",
        redactor=Redactor(),
        stream=io.StringIO(),
    ).results
    assert merged.policy is not None and merged.comparison is not None
    assert [(f.case_id, f.kind) for f in merged.comparison.flips] == [("c3", "regression")]
    c3 = next(c for c in merged.cases if c.id == "c3")
    assert c3.test is not None and c3.test.outcome == "regressed" and c3.extra_samples > 0
    assert c3.test.head_samples == len(c3.samples)
    assert all(c.hash is not None and c.history for c in merged.cases)
    assert merged.verdict is not None and not merged.verdict.passed
