"""Join shard results into the results of the whole dataset (``toolgate merge``).

Each shard's results.json carries every sample record with its scores and tallies, so
the merge recomputes every statistic from them exactly as ``build_results`` would have
on an unsharded run (same case order — dataset line order — and same seed, hence the
same bootstrap interval): merging is a reduction, never an average of shard averages.

Refused, as input errors naming the files: parts made from different datasets (sha256)
or with different sample counts or seeds, overlapping cases, shards of different splits,
a missing shard, and parts that together do not cover every case of the dataset.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gate import __version__
from gate.errors import Problem, ResultsFileError
from gate.gcpause import no_gc
from gate.policy.reduce import CaseMeta, assemble
from gate.results import DatasetInfo, HardFailureResult, Results


def merge_results(parts: Sequence[tuple[str, Results]]) -> Results:
    """Merge ``(display name, results)`` parts; see the module docstring."""
    if not parts:
        raise ResultsFileError(Problem("toolgate merge", None, None, "no results to merge"))
    problems: list[Problem] = []
    name0, first = parts[0]
    for name, r in parts[1:]:
        if r.dataset.sha256 != first.dataset.sha256:
            problems.append(
                Problem(
                    name,
                    None,
                    "dataset.sha256",
                    f"made from dataset {r.dataset.sha256[:12]}…, but {name0} from "
                    f"{first.dataset.sha256[:12]}…: shards must come from one dataset",
                )
            )
        if r.samples != first.samples:
            problems.append(
                Problem(name, None, "samples", f"{r.samples} samples, {name0} has {first.samples}")
            )
        if r.seed != first.seed:
            problems.append(Problem(name, None, "seed", f"seed {r.seed}, {name0} has {first.seed}"))
    problems.extend(_shard_problems(parts))
    owner: dict[str, str] = {}
    for name, r in parts:
        for c in r.cases:
            flags = [s.extra for s in c.samples]
            if len(flags) - sum(flags) != r.samples or flags != sorted(flags):
                problems.append(
                    Problem(
                        name,
                        c.line,
                        "cases",
                        f"case {c.id!r} holds {len(flags) - sum(flags)} regular samples "
                        f"(the file says {r.samples}), or confirmation samples before them",
                    )
                )
            if c.id in owner:
                problems.append(
                    Problem(name, c.line, "cases", f"case {c.id!r} is also in {owner[c.id]}")
                )
            else:
                owner[c.id] = name
    total = first.dataset.total_cases
    if total is not None and not problems and len(owner) != total:
        problems.append(
            Problem(
                "toolgate merge",
                None,
                None,
                f"the parts hold {len(owner)} of the dataset's {total} cases: "
                f"{total - len(owner)} missing (a shard's results are missing or incomplete)",
            )
        )
    if problems:
        raise ResultsFileError(problems[:50])

    cases = sorted(
        (c for _, r in parts for c in r.cases),
        key=lambda c: (c.line if c.line is not None else 1 << 62, c.id),
    )
    position = {c.id: i for i, c in enumerate(cases)}
    hard: list[HardFailureResult] = sorted(
        (h for _, r in parts for h in r.hard_failures),
        key=lambda h: (position.get(h.case_id, 1 << 62), h.sample),
    )
    metas = [
        CaseMeta(
            id=c.id,
            line=c.line,
            difficulty=c.difficulty,
            tags=tuple(c.tags),
            expected_no_tool=c.expected_no_tool,
            must_not_call=tuple(c.must_not_call),
            expect_tools=tuple(c.tools),
        )
        for c in cases
    ]
    judges = [r.judge for _, r in parts if r.judge is not None]
    notices = list(
        dict.fromkeys(n for _, r in parts for n in r.notices if not n.startswith("samples: 1"))
    )
    judge: dict[str, Any] | None = None
    if len(judges) == 1:
        judge = judges[0]
    elif judges:
        judge = {"shards": judges}
        notices.append(f"judge scores of {len(judges)} shards are listed per shard, not merged")
    header: dict[str, Any] = {
        "toolgate_version": __version__,
        "gate_name": first.gate_name,
        "dataset": DatasetInfo(
            path=first.dataset.path,
            version=first.dataset.version,
            sha256=first.dataset.sha256,
            cases=len(cases),
            total_cases=total,
            cases_sha256=first.dataset.cases_sha256,
        ),
        "agent": dict(first.agent),
        "seed": first.seed,
        "shard": None,
        "tools": dict(first.tools),
        "judge": judge,
        "timing": {"shards": {name: r.timing for name, r in parts}},
    }
    max_extra = max((r.confirm.max_extra_samples for _, r in parts if r.confirm), default=0)
    with no_gc():
        merged = assemble(
            metas,
            [c.samples for c in cases],
            hard,
            header=header,
            seed=first.seed,
            max_extra=max_extra,
        )
    merged.notices[:0] = notices
    return merged


def _shard_problems(parts: Sequence[tuple[str, Results]]) -> list[Problem]:
    shards = [(name, r.shard) for name, r in parts]
    if len(parts) == 1 and shards[0][1] is None:
        return []
    problems: list[Problem] = []
    counts = {s.count for _, s in shards if s is not None}
    for name, s in shards:
        if s is None:
            problems.append(
                Problem(
                    name, None, "shard", "not a shard (it holds a whole run); merge shards only"
                )
            )
    if len(counts) > 1:
        problems.append(
            Problem(
                "toolgate merge",
                None,
                "shard",
                f"shards of different splits ({', '.join(f'/{n}' for n in sorted(counts))})",
            )
        )
        return problems
    if problems or not counts:
        return problems
    n = counts.pop()
    seen: dict[int, str] = {}
    for name, s in shards:
        assert s is not None
        if s.index in seen:
            problems.append(
                Problem(name, None, "shard", f"shard {s.index}/{n} is also {seen[s.index]}")
            )
        seen[s.index] = name
    missing = [i for i in range(1, n + 1) if i not in seen]
    if missing:
        problems.append(
            Problem(
                "toolgate merge",
                None,
                "shard",
                f"missing shard(s) {', '.join(f'{i}/{n}' for i in missing)}",
            )
        )
    return problems
