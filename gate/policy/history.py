"""The base history: per-case counts that accumulate across the base branch's runs.

A case's history is the list of its base runs' contributions (:class:`HistoryEntry`:
passes, samples, and per-metric sums), newest last, for as long as the case is
unchanged. "Unchanged" is one hash per case (:func:`case_hash`) over what defines the
*test*: the case's own content and the scoring config. What a pull request tests — the
agent (model, endpoint, sampling settings, system prompt, a program's kind) and the
definitions of the tools it is offered — is not in it: a change of those is compared
against the history, never a reason to stop comparing.

A history also remembers the *setup* its runs were made under (:func:`setup_hash`: the
agent identity and the definitions of the case's tools). Runs of the base branch under
another setup than its newest run describe another agent, so when a base run's setup
differs from the history's, the history restarts from that run (:func:`extend`): "the
base" always means the base branch as it is now.

A run whose hash for a case differs from the history's starts that case's history again
(the old counts describe another case); a case the history does not know yet starts one.

Each baseline refresh (a run on the base branch, checked against the previous history)
appends its counts with :func:`extend`. The history is a sliding window: it keeps the
newest runs whose samples add up to at most ``window`` (default
:data:`HISTORY_WINDOW`), dropping the oldest runs whole, so a model that drifts slowly is
compared against its recent behaviour, and a results file stays small. Results written
before histories existed load with ``extend(None, run)``: their per-case counts become
a history of one entry.

Pure: no file I/O; the results.json fields that carry a history are read and written by
the results layer.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gate.jsonio import canonical
from gate.model import CASE_HASH_VERSION as CASE_HASH_VERSION
from gate.model import Comparability as Comparability

HISTORY_WINDOW = 100
"""Most base samples kept per case (the newest runs whose samples fit)."""


@dataclass(frozen=True, slots=True)
class MetricSums:
    """Sufficient statistics of one metric over samples: count, sum and sum of squares."""

    n: int = 0
    total: float = 0.0
    total_sq: float = 0.0

    def __post_init__(self) -> None:
        if self.n < 0:
            raise ValueError(f"MetricSums.n must be ≥ 0, got {self.n}")

    @classmethod
    def of(cls, values: Iterable[float | None]) -> MetricSums:
        """The sums of the values that apply (``None``: n/a, left out)."""
        vals = [float(v) for v in values if v is not None]
        return cls(len(vals), math.fsum(vals), math.fsum(v * v for v in vals))

    def __add__(self, other: MetricSums) -> MetricSums:
        return MetricSums(
            self.n + other.n, self.total + other.total, self.total_sq + other.total_sq
        )

    @property
    def mean(self) -> float | None:
        """Mean over the samples where the metric applied; ``None`` with none."""
        return self.total / self.n if self.n else None


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One base run's contribution to a case's history: its counts, per gated metric the
    sums, and per cost metric the samples' values (what the cost test ranks the head's
    samples among: :mod:`gate.policy.cost`; absent in histories of earlier releases)."""

    passes: int
    samples: int
    metrics: Mapping[str, MetricSums] = field(default_factory=dict)
    values: Mapping[str, tuple[float, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 0 <= self.passes <= self.samples:
            raise ValueError(
                f"a history entry needs 0 ≤ passes ≤ samples, got {self.passes}/{self.samples}"
            )


@dataclass(frozen=True, slots=True)
class CaseHistory:
    """Everything the base branch has seen of one unchanged case, oldest run first, under
    one setup (``None``: a history written before setups were recorded)."""

    case_hash: str
    entries: tuple[HistoryEntry, ...]
    setup: str | None = None

    @property
    def passes(self) -> int:
        return sum(e.passes for e in self.entries)

    @property
    def samples(self) -> int:
        return sum(e.samples for e in self.entries)

    @property
    def failures(self) -> int:
        return self.samples - self.passes

    def metric(self, name: str) -> MetricSums:
        """The metric's sums over every entry (zero counts when it never applied)."""
        return sum((e.metrics[name] for e in self.entries if name in e.metrics), MetricSums())

    def values(self, name: str) -> tuple[float, ...]:
        """The metric's recorded sample values over the entries that recorded them,
        oldest first."""
        return tuple(v for e in self.entries for v in e.values.get(name, ()))


@dataclass(frozen=True, slots=True)
class CaseRun:
    """One case's counts in one run, with the case's hash: what a refresh appends."""

    case_id: str
    case_hash: str
    passes: int
    samples: int
    metrics: Mapping[str, MetricSums] = field(default_factory=dict)
    setup: str | None = None
    """The setup the run was made under (:func:`setup_hash`)."""
    values: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    """Per cost metric, the samples' values (:attr:`HistoryEntry.values`)."""
    legacy_setup: str | None = None
    """The same setup hashed as the previous release did (:data:`LEGACY_IDENTITY_KEYS`)."""

    def same_setup(self, recorded: str | None) -> bool:
        """Whether a history recorded under ``recorded`` describes this run's setup (a
        history of an earlier release: its setup hashed the previous way, or none)."""
        return recorded is None or self.setup is None or recorded in (self.setup, self.legacy_setup)

    def entry(self) -> HistoryEntry:
        return HistoryEntry(self.passes, self.samples, self.metrics, self.values)


@dataclass(frozen=True, slots=True)
class BaseHistory:
    """The base history of a dataset: case id → its history."""

    cases: Mapping[str, CaseHistory]
    window: int = HISTORY_WINDOW


def case_hash(*, case: Mapping[str, Any], scoring: Mapping[str, Any]) -> str:
    """sha256 over the canonical JSON of what defines a case's test: the case's content
    and the scoring config. Key order and whitespace do not matter; any change of a value
    does."""
    doc = {"case": case, "scoring": scoring}
    return hashlib.sha256(canonical(doc).encode()).hexdigest()


def legacy_case_hash(
    *,
    case: Mapping[str, Any],
    tools: Mapping[str, Any],
    agent: Mapping[str, Any],
    scoring: Mapping[str, Any],
) -> str:
    """The previous release's case hash (version 1), which also covered the definitions
    of the case's tools and the agent identity: what a history of that release is matched
    by, once, before it takes the current hash."""
    doc = {"agent": agent, "case": case, "scoring": scoring, "tools": tools}
    return hashlib.sha256(canonical(doc).encode()).hexdigest()


LEGACY_IDENTITY_KEYS = (
    "kind",
    "model",
    "base_url",
    "temperature",
    "params",
    "system_prompt_sha256",
)
"""The identity keys of the previous release (a program's kind alone): a history recorded
under them is the same setup as a run whose legacy setup hash matches, once."""

IDENTITY_KEYS = (*LEGACY_IDENTITY_KEYS, "command", "callable", "path", "env")
"""What of an agent's description (``results.agent``) identifies the agent under test:
for an endpoint, the model, the endpoint, its sampling settings and the system prompt's
content; for a program (command, python, mcp), its command line (or callable and import
path), the environment the config gives it (``agent.env``) and the model the config
declares (``agent.model``). Its code is what a pull request changes, and no hash sees it;
a model chosen in a file the program reads is seen through a declared ``agent.model``."""


def agent_identity(agent: Mapping[str, Any], keys: Sequence[str] = IDENTITY_KEYS) -> dict[str, Any]:
    """The identity keys of an agent's description."""
    return {k: agent[k] for k in keys if k in agent}


def setup_hash(*, agent: Mapping[str, Any], tools: Mapping[str, Any]) -> str:
    """sha256 over what a pull request tests for one case: the agent identity and the
    definitions of the tools the case offers (name → definition hash)."""
    doc = {"agent": agent, "tools": tools}
    return hashlib.sha256(canonical(doc).encode()).hexdigest()


def lookup(
    history: BaseHistory | None, case_id: str, hash_: str
) -> tuple[Comparability, CaseHistory | None]:
    """The case's history when it is comparable to a head case with this hash."""
    if history is None or case_id not in history.cases:
        return Comparability.NEW, None
    got = history.cases[case_id]
    if got.case_hash != hash_:
        return Comparability.CHANGED, None
    if got.samples == 0:
        return Comparability.NEW, None
    return Comparability.COMPARABLE, got


def trim(entries: Sequence[HistoryEntry], window: int) -> tuple[HistoryEntry, ...]:
    """The newest entries whose samples add up to at most ``window``; the newest entry is
    always kept, even when it alone is larger."""
    kept: list[HistoryEntry] = []
    total = 0
    for e in reversed(entries):
        if kept and total + e.samples > window:
            break
        kept.append(e)
        total += e.samples
    return tuple(reversed(kept))


def extend(
    history: BaseHistory | None, run: Sequence[CaseRun], *, window: int | None = None
) -> BaseHistory:
    """The history after one more base run: each case of the run appends its counts when
    its hash and its setup match, and starts again otherwise (a new setup: the base
    branch changed the agent or the tools, so its older runs describe another agent);
    cases the run does not have are dropped (they left the dataset). A history without a
    recorded setup (an earlier release's) takes the run's. ``window`` defaults to the
    history's own."""
    size = window if window is not None else (history.window if history else HISTORY_WINDOW)
    if size < 1:
        raise ValueError(f"the history window must be ≥ 1 sample, got {size}")
    out: dict[str, CaseHistory] = {}
    for r in run:
        if r.case_id in out:
            raise ValueError(f"case {r.case_id!r} appears twice in one run")
        prior = history.cases.get(r.case_id) if history is not None else None
        if prior is not None and prior.case_hash == r.case_hash and r.same_setup(prior.setup):
            entries = trim((*prior.entries, r.entry()), size)
        else:
            entries = (r.entry(),)
        setup = r.setup if r.setup is not None else (prior.setup if prior else None)
        out[r.case_id] = CaseHistory(r.case_hash, entries, setup)
    return BaseHistory(out, size)
