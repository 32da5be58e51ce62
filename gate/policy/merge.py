"""Join shard runs into the run of the whole dataset (``toolgate merge``).

Each shard's results carry every sample record with its scores and tallies, so the merge
recomputes every statistic from them exactly as the reduction would have on an unsharded
run (same case order — dataset line order — and same seed, hence the same bootstrap
interval): merging is a reduction, never an average of shard averages.

Refused, as input errors naming the files: parts of different agents, gate names, dataset
versions or scoring settings (``scoring_sha256``), parts made from different datasets (sha256)
or with different sample counts or seeds, overlapping cases, shards of different splits,
a missing shard, and parts that together do not cover every case of the dataset.

The parts come typed (``gate.pipeline.typed.merge_part`` reads them from results files);
this module checks them and joins their rows (:func:`merge`);
``gate.pipeline.typed.merge_run`` reduces them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gate import __version__
from gate.errors import Problem, ResultsFileError
from gate.jsonio import canonical
from gate.model import RunHeader
from gate.policy import stats
from gate.policy.table import CaseMeta, SampleRows, SampleTable, assemble


@dataclass(frozen=True, slots=True)
class MergePart:
    """One shard's run, typed: its header and sample counts, its cases (with how many
    regular samples each holds and whether its confirmation samples come after them), its
    rows (case indices into ``metas``) and its sample records, per case."""

    name: str
    header: RunHeader
    samples: int
    metas: tuple[CaseMeta, ...]
    regular: tuple[int, ...]
    extras_last: tuple[bool, ...]
    rows: SampleRows
    records: Sequence[Sequence[bytes]]
    max_extra: int = 0
    judge: Mapping[str, Any] | None = None
    notices: tuple[str, ...] = ()
    timing: Mapping[str, Any] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Merged:
    """The joined run: one header (built here, once), the table of every case's rows in
    dataset order, the records in the same order, and what the parts add."""

    header: RunHeader
    seed: int
    max_extra: int
    table: SampleTable
    records: Sequence[Sequence[bytes]]
    judge: Mapping[str, Any] | None
    notices: tuple[str, ...]
    timing: Mapping[str, Any]


def _agent_key(agent: Mapping[str, Any]) -> str:
    """The agent as configured; where its runs were read from (``runs``, each shard's own
    file) is not part of it."""
    return canonical({k: v for k, v in agent.items() if k != "runs"})


_Get = Callable[[MergePart], Any]

_SAME: tuple[tuple[str, _Get, _Get, str], ...] = (
    (
        "dataset.sha256",
        lambda p: p.header.dataset.sha256,
        lambda p: p.header.dataset.sha256,
        "made from dataset {b:.12}…, but {first} from {a:.12}…: shards must come from one dataset",
    ),
    ("samples", lambda p: p.samples, lambda p: p.samples, "{b} samples, {first} has {a}"),
    (
        "agent",
        lambda p: _agent_key(p.header.agent),
        lambda p: canonical(p.header.agent),
        "run by another agent ({b:.120}) than {first} ({a:.120})",
    ),
    (
        "gate_name",
        lambda p: p.header.gate_name,
        lambda p: p.header.gate_name,
        "gate {b!r}, {first} has {a!r}",
    ),
    (
        "dataset.version",
        lambda p: p.header.dataset.version,
        lambda p: p.header.dataset.version,
        "dataset version {b!r}, {first} has {a!r}",
    ),
    (
        "scoring_sha256",
        lambda p: p.header.scoring_sha256,
        lambda p: p.header.scoring_sha256 or "none",
        "scored with other settings (scoring, dataset.normalize: {b:.12}…) than {first} ({a:.12}…)",
    ),
    ("seed", lambda p: p.header.seed, lambda p: p.header.seed, "seed {b}, {first} has {a}"),
)
"""What every part must share with the first, and how a part that does not is named:
(field, the value compared, the value shown, the message). A part of another agent, gate,
dataset version or scoring settings is a part of another run (a shard of the regressed
agent, scored without a rule, must not merge into a pass)."""


def merge(parts: Sequence[MergePart]) -> Merged:
    """Check and join the parts (module docstring)."""
    if not parts:
        raise ResultsFileError(Problem("toolgate merge", None, None, "no results to merge"))
    problems: list[Problem] = []
    first = parts[0]
    fd = first.header.dataset
    for p in parts[1:]:
        for field, value, shown, message in _SAME:
            if value(p) != value(first):
                text = message.format(b=shown(p), a=shown(first), first=first.name)
                problems.append(Problem(p.name, None, field, text))
    problems.extend(_shard_problems(parts))
    owner: dict[str, str] = {}
    for p in parts:
        for meta, regular, ordered in zip(p.metas, p.regular, p.extras_last, strict=True):
            if regular != p.samples or not ordered:
                problems.append(
                    Problem(
                        p.name,
                        meta.line,
                        "cases",
                        f"case {meta.id!r} holds {regular} regular samples "
                        f"(the file says {p.samples}), or confirmation samples before them",
                    )
                )
            if meta.id in owner:
                problems.append(
                    Problem(
                        p.name, meta.line, "cases", f"case {meta.id!r} is also in {owner[meta.id]}"
                    )
                )
            else:
                owner[meta.id] = p.name
    total = fd.total_cases
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

    # Cases in dataset line order; each part's rows renumbered to the merged case index.
    located = sorted(
        ((meta, k, i) for k, p in enumerate(parts) for i, meta in enumerate(p.metas)),
        key=lambda t: (t[0].line if t[0].line is not None else 1 << 62, t[0].id),
    )
    position = {(k, i): j for j, (_, k, i) in enumerate(located)}
    metas = [meta for meta, _, _ in located]
    batches: list[SampleRows] = []
    for k, p in enumerate(parts):
        renumber = [position[(k, i)] for i in range(len(p.metas))]
        rows = p.rows
        batches.append(dataclasses.replace(rows, case=_renumbered(rows.case, renumber)))
    records = [parts[k].records[i] for _, k, i in located]
    judges = [p.judge for p in parts if p.judge is not None]
    notices = list(
        dict.fromkeys(n for p in parts for n in p.notices if not n.startswith("samples: 1"))
    )
    judge: Mapping[str, Any] | None = None
    if len(judges) == 1:
        judge = judges[0]
    elif judges:
        judge = {"shards": list(judges)}
        notices.append(f"judge scores of {len(judges)} shards are listed per shard, not merged")
    header = dataclasses.replace(
        first.header,
        toolgate_version=__version__,
        dataset=dataclasses.replace(fd, cases=len(metas), total_cases=total),
        shard=None,
    )
    return Merged(
        header=header,
        seed=first.header.seed,
        max_extra=max((p.max_extra for p in parts), default=0),
        table=assemble(metas, batches),
        records=records,
        judge=judge,
        notices=tuple(notices),
        timing={"shards": {p.name: dict(p.timing) for p in parts}},
    )


def _renumbered(case: stats.Ints, renumber: Sequence[int]) -> stats.Ints:
    if not len(case):
        return case
    return np.asarray(renumber, dtype=np.int64)[case]


def _shard_problems(parts: Sequence[MergePart]) -> list[Problem]:
    shards = [(p.name, p.header.shard) for p in parts]
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
