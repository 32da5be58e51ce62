"""The LLM judge: scores that are reported, never gated (docs/judge.md, seed 003).

:func:`run_judge` is the one entry point: it cuts judge items from every run (``rubrics``),
chooses which to judge under the budget (``sample``), answers each from the cache or the
endpoint (``cache``, ``client``) with bounded concurrency and a circuit breaker, and sums
up per rubric, with judge–human agreement when a calibration file is set (``agreement``).

It returns the ``judge`` block of results.json (docs/judge.md gives its ``status`` values).
A judge outage and budget exhaustion are *reported* in that block; they never raise and
never touch the verdict. ``run_judge`` raises only :class:`gate.errors.InputError` for bad
input the user must fix (a custom rubric prompt, a calibration file): call
:func:`check_judge_inputs` early to report those before a run. The block is deterministic
for the same runs, config and judge answers; what depends on the cache's state goes to
``results.timing["judge"]``.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from gate.config import Config
from gate.judge.agreement import HumanLabel, agreement, load_calibration
from gate.judge.cache import CACHE_DIR, JudgeCache, cache_key
from gate.judge.client import ChatClient, JudgeCallError, parse_answer
from gate.judge.rubrics import (
    ExtractContext,
    JudgeItem,
    Rubric,
    describe,
    display,
    load_rubrics,
)
from gate.judge.sample import Selection, select
from gate.model import DatasetLike, Run
from gate.results import MetricStat

__all__ = ["check_judge_inputs", "disabled_block", "judge_metrics", "run_judge"]


def disabled_block() -> dict[str, Any]:
    return {"status": "disabled", "gating": False, "notices": [], "rubrics": {}, "cases": {}}


def judge_metrics(block: Mapping[str, Any]) -> dict[str, MetricStat]:
    """``judge.<rubric>`` → mean and n of each rubric in a judge block, shaped like the
    deterministic metrics so that reports and the baseline diff can show them base → head.

    For ``results.metrics`` only if every consumer skips ``judge.*`` when deciding: the
    verdict must never depend on them (``gates:`` already refuses them).
    """
    rubrics = block.get("rubrics") or {}
    return {
        str(r.get("metric", f"judge.{name}")): MetricStat(mean=r.get("mean"), n=int(r.get("n", 0)))
        for name, r in sorted(rubrics.items())
        if isinstance(r, Mapping)
    }


def check_judge_inputs(config: Config) -> tuple[list[Rubric], tuple[HumanLabel, ...] | None]:
    """Load the enabled rubrics and the calibration file, raising ``InputError`` (with file,
    line and field) for anything the user must fix. No network."""
    rubrics = load_rubrics(config)
    judge = config.judge
    if judge is None or judge.calibration_file is None:
        return rubrics, None
    path = config.resolve(judge.calibration_file)
    human = load_calibration(path, {r.name: r.scale for r in rubrics}, display=display(path))
    return rubrics, human


class _Breaker:
    """Counts judge calls that failed in a row; opens after ``threshold`` of them."""

    def __init__(self, threshold: int) -> None:
        self.threshold = threshold
        self._lock = threading.Lock()
        self._run = 0
        self.open = False
        self.last_error: str | None = None

    def failed(self, message: str) -> None:
        with self._lock:
            self._run += 1
            self.last_error = message
            if self._run >= self.threshold:
                self.open = True

    def succeeded(self) -> None:
        with self._lock:
            self._run = 0


def _estimate_tokens(messages: Sequence[Mapping[str, str]], answer: str | None) -> dict[str, int]:
    # ~4 characters a token: only used when the endpoint reports no usage.
    prompt = math.ceil(sum(len(m["content"]) for m in messages) / 4)
    completion = math.ceil(len(answer or "") / 4)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def run_judge(
    config: Config,
    dataset: DatasetLike,
    runs: Sequence[Run],
    out: Path,
    *,
    timing: dict[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """Judge the runs and return the ``judge`` block of results.json (module docstring).

    ``timing`` (the run's timing) receives the run-dependent figures under ``"judge"``.
    ``environ`` (default ``os.environ``) is where the API key is looked up; ``sleep`` is
    the wait between retries (tests pass a no-op).
    """
    judge = config.judge
    if judge is None:
        return disabled_block()
    started = time.monotonic()
    rubrics, human = check_judge_inputs(config)
    by_name = {r.name: r for r in rubrics}
    env = os.environ if environ is None else environ
    notices: list[str] = []

    # 1. Items, from each run once, in a fixed order.
    cases = {c.id: c for c in dataset.cases}
    ctx = ExtractContext(free_text=config.scoring.free_text)
    seen: set[tuple[str, int]] = set()
    unknown: list[str] = []
    duplicates = 0
    items: list[JudgeItem] = []
    for run in sorted(runs, key=lambda r: (r.case_id, r.sample)):
        key = (run.case_id, run.sample)
        if key in seen:
            duplicates += 1
            continue
        case = cases.get(run.case_id)
        if case is None:
            unknown.append(run.case_id)
            continue
        seen.add(key)
        for rubric in rubrics:
            items.extend(rubric.items(case, run, ctx))
    if unknown:
        notices.append(
            f"{len(unknown)} run(s) name cases not in the dataset and were not judged "
            f"(first: {sorted(unknown)[0]!r})"
        )
    if duplicates:
        notices.append(f"{duplicates} duplicate run(s) of the same case-sample were judged once")

    # 2. Which of them to judge.
    selection = select(
        seen,
        items,
        rubric_order=[r.name for r in rubrics],
        rate=judge.sample,
        max_evaluations=judge.max_evaluations,
        seed=judge.seed,
    )

    # 3. Answers: from the cache, or from the endpoint.
    key_missing = bool(judge.api_key_env) and not env.get(judge.api_key_env)
    api_key = env.get(judge.api_key_env) if judge.api_key_env else None
    client = ChatClient(
        base_url=judge.base_url,
        model=judge.model,
        api_key=api_key,
        timeout_s=judge.timeout_s,
        max_retries=judge.max_retries,
        json_mode=judge.json_mode,
        sleep=sleep,
    )
    cache = JudgeCache(out / CACHE_DIR)
    breaker = _Breaker(judge.max_consecutive_failures)

    def answer(item: JudgeItem) -> dict[str, Any]:
        rubric = by_name[item.rubric]
        key = cache_key(
            rubric=rubric.name,
            prompt_sha256=rubric.prompt_sha256,
            model=judge.model,
            inputs=item.inputs,
        )
        hit = cache.get(key, rubric.scale)
        if hit is not None:
            return {**_from_entry(hit, rubric), "cached": True}
        if key_missing:
            return {"status": "skipped", "error": f"no API key: ${judge.api_key_env} is not set"}
        if breaker.open:
            return {"status": "skipped", "error": "the judge endpoint was taken as down"}
        messages = rubric.messages(item.inputs)
        try:
            completion = client.complete(messages)
        except JudgeCallError as exc:
            breaker.failed(str(exc))
            return {
                "status": "error",
                "error": str(exc),
                "error_kind": exc.kind.value,
                "status_code": exc.status,
            }
        breaker.succeeded()
        parsed = parse_answer(completion.content, rubric.scale)
        estimated = completion.usage is None
        usage = (
            dict(completion.usage)
            if completion.usage
            else _estimate_tokens(messages, completion.content)
        )
        entry: dict[str, Any] = {
            "rubric": rubric.name,
            "model": judge.model,
            "status": "ok" if parsed.label is not None else "unparsable",
            "label": parsed.label,
            "reason": parsed.reason,
            "problem": parsed.problem,
            "raw": parsed.raw,
            "usage": usage,
            "usage_estimated": estimated,
        }
        cache.put(key, entry)
        return {**_from_entry(entry, rubric), "cached": False, "attempts": completion.attempts}

    chosen = selection.chosen
    if chosen:
        try:
            with ThreadPoolExecutor(max_workers=min(judge.concurrency, len(chosen))) as pool:
                outcomes = list(pool.map(answer, chosen))
        finally:
            client.close()
    else:
        outcomes = []

    # 4. Sum up.
    block = _summarise(rubrics, items, selection, chosen, outcomes, human, judge.seed)
    block.update(
        {
            "model": judge.model,
            "seed": judge.seed,
            "sample": judge.sample,
            "max_evaluations": judge.max_evaluations,
            "price_per_1k_tokens": judge.price_per_1k_tokens,
            "estimated_cost": round(block["tokens"]["total"] / 1000 * judge.price_per_1k_tokens, 6),
        }
    )
    if block["calibration"] is not None:
        block["calibration"]["file"] = judge.calibration_file
    ev = block["evaluations"]
    if key_missing and ev["skipped_unavailable"]:
        notices.append(
            f"judge not run: the environment variable {judge.api_key_env} is not set "
            f"(secrets are not passed to pull requests from forks); "
            f"{ev['skipped_unavailable']} item(s) not judged"
        )
    elif breaker.open:
        notices.append(
            f"judge endpoint taken as down after {judge.max_consecutive_failures} failed calls "
            f"in a row (last: {breaker.last_error}); {ev['skipped_unavailable']} item(s) skipped"
        )
    if ev["errors"]:
        kinds = Counter(
            f"HTTP {o['status_code']}" if o.get("status_code") else o["error_kind"]
            for o in outcomes
            if o["status"] == "error"
        )
        detail = ", ".join(f"{n} × {k}" for k, n in sorted(kinds.items()))
        notices.append(f"{ev['errors']} judge call(s) failed after retries ({detail})")
    if ev["skipped_for_budget"]:
        notices.append(
            f"judge budget reached (max_evaluations: {judge.max_evaluations}): "
            f"{ev['skipped_for_budget']} item(s) not judged; "
            "raise judge.max_evaluations to judge them"
        )
    if ev["unparsable"]:
        notices.append(
            f"{ev['unparsable']} judge answer(s) were unparsable (recorded, not guessed)"
        )
    if not items and not unknown:
        notices.append("nothing to judge: the enabled rubrics found no items in these runs")
    failed = ev["errors"] + ev["skipped_unavailable"]
    answered = ev["judged"]
    if failed and not answered:
        status = "unavailable"
    elif failed:
        status = "degraded"
    elif ev["skipped_for_budget"]:
        status = "partial"
    else:
        status = "ok"
    block["status"] = status
    block["notices"] = notices

    fresh = [o for o in outcomes if o["status"] in ("ok", "unparsable") and not o.get("cached")]
    spent = sum(o["usage"]["total_tokens"] for o in fresh)
    (timing if timing is not None else {})["judge"] = {
        "wall_s": round(time.monotonic() - started, 3),
        "calls": len(fresh) + ev["errors"],
        "cache_hits": sum(1 for o in outcomes if o.get("cached")),
        "tokens_spent": spent,
        "cost_spent": round(spent / 1000 * judge.price_per_1k_tokens, 6),
    }
    return block


def _from_entry(entry: Mapping[str, Any], rubric: Rubric) -> dict[str, Any]:
    label = entry.get("label")
    usage = entry.get("usage")
    return {
        "status": entry["status"],
        "label": label,
        "score": rubric.values[label]
        if entry["status"] == "ok" and isinstance(label, str)
        else None,
        "reason": entry.get("reason"),
        "problem": entry.get("problem"),
        "raw": entry.get("raw"),
        "usage": dict(usage) if isinstance(usage, dict) else {"total_tokens": 0},
        "usage_estimated": bool(entry.get("usage_estimated")),
    }


def _summarise(
    rubrics: Sequence[Rubric],
    items: Sequence[JudgeItem],
    selection: Selection,
    chosen: Sequence[JudgeItem],
    outcomes: Sequence[dict[str, Any]],
    human: tuple[HumanLabel, ...] | None,
    seed: int,
) -> dict[str, Any]:
    """The deterministic part of the block: per rubric, per case, tokens, agreement."""
    eligible = Counter(i.rubric for i in items)
    per: dict[str, dict[str, Any]] = {}
    for r in rubrics:
        per[r.name] = {
            **describe(r),
            "labels": dict.fromkeys(r.scale, 0),
            "eligible": eligible[r.name],
            "judged": 0,
            "n": 0,
            "unparsable": 0,
            "errors": 0,
            "skipped_unavailable": 0,
            "skipped_for_budget": selection.skipped_for_budget.get(r.name, 0),
            "not_sampled": selection.not_sampled.get(r.name, 0),
            "_scores": [],
        }
    cases: dict[str, list[dict[str, Any]]] = {}
    tokens = {"prompt": 0, "completion": 0, "total": 0, "estimated": False}
    judge_labels: dict[tuple[str, int, str, str], str] = {}
    for item, o in zip(chosen, outcomes, strict=True):
        stats = per[item.rubric]
        status = o["status"]
        entry: dict[str, Any] = {
            "sample": item.sample,
            "rubric": item.rubric,
            "item": item.item,
            "status": status,
        }
        if status in ("ok", "unparsable"):
            stats["judged"] += 1
            usage = o["usage"]
            tokens["prompt"] += int(usage.get("prompt_tokens", 0))
            tokens["completion"] += int(usage.get("completion_tokens", 0))
            tokens["total"] += int(usage.get("total_tokens", 0))
            tokens["estimated"] = tokens["estimated"] or o["usage_estimated"]
        if status == "ok":
            stats["n"] += 1
            stats["labels"][o["label"]] += 1
            stats["_scores"].append(o["score"])
            judge_labels[(item.case_id, item.sample, item.rubric, item.item)] = o["label"]
            entry.update(label=o["label"], score=o["score"], reason=o["reason"])
        elif status == "unparsable":
            stats["unparsable"] += 1
            entry.update(problem=o["problem"], raw=o["raw"])
        elif status == "error":
            stats["errors"] += 1
            entry.update(error=o["error"])
        else:
            stats["skipped_unavailable"] += 1
            continue  # counted; not listed per case (the notice says why)
        cases.setdefault(item.case_id, []).append(entry)
    for stats in per.values():
        scores = stats.pop("_scores")
        stats["mean"] = round(sum(scores) / len(scores), 6) if scores else None
        stats["agreement"] = None
    calibration: dict[str, Any] | None = None
    if human is not None:
        matched = 0
        for r in rubrics:
            labelled = [h for h in human if h.rubric == r.name]
            if not labelled:
                continue
            pairs = [(judge_labels[h.key], h.label) for h in labelled if h.key in judge_labels]
            matched += len(pairs)
            per[r.name]["agreement"] = {
                **agreement(pairs, seed=seed),
                "unmatched": len(labelled) - len(pairs),
            }
        calibration = {"labels": len(human), "matched": matched}
    totals = {
        k: sum(s[k] for s in per.values())
        for k in (
            "eligible",
            "judged",
            "unparsable",
            "errors",
            "skipped_unavailable",
            "skipped_for_budget",
            "not_sampled",
        )
    }
    totals["selected"] = len(chosen)
    for entries in cases.values():
        order = {r.name: i for i, r in enumerate(rubrics)}
        entries.sort(key=lambda e: (e["sample"], order[e["rubric"]]))
    return {
        "gating": False,
        "case_samples": {
            "total": selection.total_case_samples,
            "sampled": selection.sampled_case_samples,
        },
        "evaluations": totals,
        "tokens": tokens,
        "rubrics": per,
        "cases": dict(sorted(cases.items())),
        "calibration": calibration,
    }
