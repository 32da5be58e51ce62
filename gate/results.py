"""results.json: the versioned file every reporter renders from (docs/reports.md) — and the one
module that assembles, converts and reads a :class:`Results`.

The pydantic models here *are* the schema (``gate/schemas/results.schema.json`` is
generated from them and checked in tests); they live only at this boundary. Inside, the
stages hand each other typed values of :mod:`gate.model`: the reduction's
:class:`~gate.model.SuiteStats`, the comparison, the verdict. This module turns them into
a :class:`Results` (:func:`assemble`) or writes them without building one
(:func:`write_scored`, for runs of any size), and turns a file back into typed values
(:func:`read_results`, :func:`stats_of`, :func:`merge_part`).

**Schema 2 (lean).** Per sample: its scores always, its ``failed_checks`` when there are
some; the reasons only of the metrics that missed their best value or do not apply (and
of failed checks a foreign file may key them by) — a reason that is one of the file's
``stock_reasons`` (:data:`STOCK_REASONS`, the sentences of metrics that do not apply,
the same in nearly every sample) named in the sample's ``reasons_stock`` instead of
written out; the evidence only for a sample that did not pass; tallies without their
zero entries. Per-sample and per-case ``scores`` (and per-case
``std``) are arrays in the order of the top-level ``metric_names``. Files of schema 1 (the
previous release: dict scores, reasons and evidence of every sample) are read too, and
converted once, here.

**Layout.** Keys sorted and two-space indentation, except that an object or array of
scalars nested two or more levels deep (a metric's statistics, a tool's counts, a case's
scores) is written on one line, and each sample record on one line (its keys sorted, the
evidence keeping the calls' argument order as the dataset and the model wrote them). The same
inputs give the same bytes; everything outside ``timing`` is deterministic (wall times,
latencies and dates live there: reproducibility tests compare files without it).

Compatibility: ``schema_version`` changes only when a field is removed or changes meaning;
new optional fields keep the version.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

import orjson
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from gate import jsonio
from gate import model as m
from gate.errors import Problem, ResultsFileError
from gate.model import (
    ActualCall,
    ArgDiff,
    Evidence,
    HardFailureKind,
    SampleScore,
    Tallies,
    ToolCall,
    ToolTally,
)
from gate.policy.casetest import CaseVerdict
from gate.policy.engine import EngineParams, Evaluation
from gate.policy.history import (
    CASE_HASH_VERSION,
    HISTORY_WINDOW,
    BaseHistory,
    CaseHistory,
    HistoryEntry,
    MetricSums,
)
from gate.policy.merge import MergePart, merge
from gate.policy.power import Detectability
from gate.policy.reduce import reduce, sample_metric_names
from gate.policy.table import CaseMeta, RowsBuilder
from gate.scorers.registry import BY_NAME, COST_METRICS, METRICS
from gate.scorers.usage import fill, usage_positions
from gate.usage import InvalidUsage, usage_of

SCHEMA_VERSION: Literal[2] = 2

STOCK_REASONS: dict[str, str] = {
    "batching": "n/a: the expected calls are not written in batches",
    "free_text_similarity": "n/a: no free-text argument compared",
    "no_tool_respected": "n/a: the case expects tool calls",
    "recovery_rate": "n/a: no tool error to recover from",
    "step_budget_exceeded": "n/a: no step budget",
}
"""Reasons a sample record names instead of writing out (``reasons_stock``): each file
carries this table (``stock_reasons``), and the reader fills them in from the file's own
table, so an entry may change without older files changing meaning."""
READS: tuple[int, ...] = (1, 2)
"""The schema versions :func:`read_results` reads (1: the previous release's)."""


class _M(BaseModel):
    # defer_build: a model's validator is built when it first validates; writing a scored
    # run builds the few of its header, not the 29 every import would.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class MetricStat(_M):
    """A metric over the dataset (or a slice): the mean over cases of per-case means;
    ``std`` is the standard deviation over samples of the dataset-level value; ``n`` the
    number of cases it applied to (n/a cases left out); ``ci_low``/``ci_high`` a seeded
    bootstrap 95% interval over cases (dataset level only; ``None`` with fewer than 2
    cases). ``mean`` is ``None`` when no case has a value ("n/a"); ``std`` is ``None``
    with fewer than 2 samples (see ``notices``). A pooled metric
    (``unnecessary_call_rate``) is a ratio of sums, ``n`` then counts calls."""

    mean: float | None
    std: float | None = None
    n: int = 0
    ci_low: float | None = None
    ci_high: float | None = None


class SampleResult(_M):
    """One case-sample. ``scores`` follows ``Results.metric_names`` (``None`` = n/a).

    ``reasons``: one sentence per metric that missed its best value or does not apply
    (omitted when there is none); ``evidence`` (only for a sample that did not pass):
    ``expected``, ``actual``, ``alternative``, ``matched``, ``missing``, ``extra``,
    ``arg_diffs``, ``malformed``, ``violations``, ``summary``, ``unrecorded``,
    ``agent_error``, ``batching``, ``effects`` (``docs/scoring.md``); ``tallies``: the raw
    counts the dataset level pools (``calls``, ``calls_on_no_tool``, ``per_tool``
    ``{name: [expected, matched, called]}``, ``confusion`` ``[[expected, actual]]``,
    ``malformed`` ``{class: n}``, ``unrecorded``), zero entries left out — kept so that
    shard results can be merged and re-pooled without re-running anything."""

    sample: int
    passed: bool
    scores: list[float | None]
    failed_checks: list[str] = Field(default_factory=list)
    reasons: dict[str, str] = Field(default_factory=dict)
    evidence: dict[str, Any] = Field(default_factory=dict)
    tallies: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    usage: dict[str, int | float] | None = None
    usage_error: str | None = None
    """Why the usage the agent reported could not be used (``gate.usage``: negative, out
    of range, inconsistent); the sample then has no ``usage`` and no token figures."""
    extra: bool = False
    """True for an extra sample (sequential sampling, seeding)."""
    turns: list[TurnResult] | None = None
    """A conversation's user turns, each scored where it happened (absent for a one-turn
    case): ``passed``, ``failed_checks``, ``scores`` (in ``metric_names`` order) and
    ``ran`` (false for a turn the conversation never reached)."""
    turns_passed: int | None = None
    """A conversation's user turns that passed."""
    first_failing_turn: int | None = None
    """The 1-based number of a conversation's first user turn that failed (``None`` when
    every turn passed, or a one-turn case)."""
    reasons_stock: list[str] = Field(default_factory=list)
    """Metrics whose reason is the file's stock sentence (``Results.stock_reasons``):
    moved into ``reasons`` as the file is read, so it is empty in memory."""

    @model_validator(mode="after")
    def _stock_reasons_in(self, info: ValidationInfo) -> SampleResult:
        if self.reasons_stock:
            table = (info.context or {}).get("stock_reasons", STOCK_REASONS)
            unknown = [n for n in self.reasons_stock if n not in table]
            if unknown:
                raise ValueError(f"reasons_stock: {unknown[0]!r} is not in stock_reasons")
            self.reasons = dict(
                sorted({**self.reasons, **{n: table[n] for n in self.reasons_stock}}.items())
            )
            self.reasons_stock = []
        return self

    @property
    def answered_a_turn(self) -> bool:
        """A conversation sample whose agent answered one of its user turns at least (it
        got past its first): an error later is a broken turn, not an agent that never
        answered."""
        return bool(self.turns) and sum(t.ran for t in self.turns or ()) > 1


class TurnResult(_M):
    """One user turn of a conversation sample (:class:`SampleResult.turns`)."""

    passed: bool
    scores: list[float | None]
    failed_checks: list[str] = Field(default_factory=list)
    ran: bool = True
    user: str | None = None
    """The scripted user message that started the turn."""
    called: list[str] = Field(default_factory=list)
    """The tools the agent called in the turn, in order."""


class HistoryRun(_M):
    """One run's contribution to a case's base history: its passes of its samples and,
    per gated metric, ``[n, sum, sum of squares]`` over the samples where it applied;
    per cost metric, the samples' values (what the cost test compares a pull request's
    samples with; absent in files of earlier releases)."""

    passes: int = Field(ge=0)
    samples: int = Field(ge=0)
    metrics: dict[str, list[float]] = Field(default_factory=dict)
    values: dict[str, list[float]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> HistoryRun:
        if self.passes > self.samples:
            raise ValueError(f"passes ({self.passes}) > samples ({self.samples})")
        for name, v in self.metrics.items():
            if len(v) != 3 or v[0] < 0:
                raise ValueError(f"metrics.{name} must be [n, sum, sum of squares]")
        for name, vals in self.values.items():
            if len(vals) > self.samples:
                raise ValueError(
                    f"values.{name} holds {len(vals)} values for {self.samples} samples"
                )
        return self

    def entry(self) -> HistoryEntry:
        """The history entry this run's record describes."""
        return HistoryEntry(
            self.passes,
            self.samples,
            {k: MetricSums(int(v[0]), v[1], v[2]) for k, v in self.metrics.items()},
            {k: tuple(v) for k, v in self.values.items()},
        )


class CaseTestResult(_M):
    """One case's test against the base history (``docs/policy.md``)."""

    outcome: Literal["regressed", "improved", "unchanged", "undecided", "not_comparable"]
    comparability: Literal["comparable", "new", "changed"]
    base_passes: int | None = None
    base_samples: int | None = None
    head_passes: int
    head_samples: int
    extra_samples: int = 0
    p_worse: float | None = None
    """Anytime-valid p-value of the regression test, min(1, 1/E)."""
    p_better: float | None = None
    log_e_worse: float | None = None
    log_e_better: float | None = None
    change: float | None = None
    """Head pass rate − base pass rate."""
    below_min_effect: bool = False


class CaseResult(_M):
    id: str
    line: int | None = None
    difficulty: str | None = None
    tags: list[str] = Field(default_factory=list)
    expected_no_tool: bool = False
    must_not_call: list[str] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)
    """Names of the tools the case's expectations involve, then the others it called."""
    passed: bool
    """True when every sample passed (pass rate 1.0); see ``pass_rate`` and ``flaky``."""
    pass_rate: float
    """Passed samples ÷ samples run (confirmation samples included)."""
    flaky: bool
    """0 < pass rate < 1."""
    scores: list[float | None]
    """Per metric of ``metric_names``, the mean over the samples where it applied
    (``None``: n/a in all)."""
    std: list[float | None] = Field(default_factory=list)
    """Per metric of ``metric_names``, the sample standard deviation over samples
    (ddof=1); ``None`` with fewer than 2 values."""
    extra_samples: int = 0
    """How many of ``samples`` were extra ones (sequential sampling of an undecided case)."""
    hash: str | None = None
    """The case's hash: its content and the scoring config (``case_hash_version`` 2; in
    version 1 also its tools' definitions and the agent identity; absent in files of
    earlier releases)."""
    setup: str | None = None
    """The hash of the setup the case's history was made under: the agent identity and
    the definitions of the case's tools (absent in files of earlier releases)."""
    history: list[HistoryRun] = Field(default_factory=list)
    """The base history this run carries forward for the case, oldest run first: the
    baseline's history (when the hash and the setup match) plus this run's counts."""
    test: CaseTestResult | None = None
    """The case's test against the base history (absent without one)."""
    samples: list[SampleResult]


class HardFailureResult(_M):
    """A failure that fails the gate whatever the averages; ``line`` is the case's line
    in the dataset (``Results.dataset.path``)."""

    kind: str
    case_id: str
    sample: int
    call: dict[str, Any]
    message: str
    line: int | None = None


class ToolRollup(_M):
    expected: int
    matched: int
    recall: float | None
    called: int = 0


class SliceResult(_M):
    cases: int
    pass_rate: float | None
    metrics: dict[str, MetricStat]


class ToolInfo(_M):
    hash: str
    description: str
    parameters: dict[str, Any]


class DatasetInfo(_M):
    path: str
    version: str | None
    sha256: str
    cases: int
    """Cases in these results (a shard holds only its own)."""
    total_cases: int | None = None
    """Cases in the whole dataset (``merge`` checks that the shards cover them all)."""
    cases_sha256: str | None = None
    """sha256 of the dataset file alone, without the tool files it references
    (``"@tools.json"``): two results whose datasets differ only in those tool definitions
    are still compared — that comparison is what shows tool-definition drift."""


class ShardInfo(_M):
    index: int
    count: int


class GateResult(_M):
    metric: str
    slice: str | None = None
    op: Literal["min", "max", "max_increase"]
    threshold: float
    value: float | None
    """The metric's value; for ``max_increase``, the typical case's rise per sample over
    its base history as a fraction (0.31: +31 %; ``gate.policy.cost``)."""
    passed: bool
    reason: str
    failing_cases: list[str] = Field(default_factory=list)
    """Cases whose own mean is on the wrong side of the threshold, worst first."""
    no_data: bool = False
    """True when the metric is n/a everywhere (or the slice is empty): such a gate fails."""
    not_checked: bool = False
    """A ``max_increase`` gate without a comparable base history (it passes, unchecked)."""
    undecided: bool = False
    """A ``max_increase`` gate that could not decide (it passes; ``reason`` says why and
    what would decide it)."""


class VarianceResult(_M):
    """The variance guards (``variance:`` in the config). ``stds`` holds, for every metric
    the std guard watches (the gated metrics and ``case_passed``), the std over samples of
    its dataset-level value."""

    max_std: float | None = None
    observed_max_std: float | None = None
    worst_metric: str | None = None
    stds: dict[str, float | None] = Field(default_factory=dict)
    max_flaky_share: float | None = None
    flaky_share: float = 0.0
    flaky_cases: list[str] = Field(default_factory=list)
    passed: bool = True
    reasons: list[str] = Field(default_factory=list)
    not_computed: list[str] = Field(default_factory=list)
    """Configured guards whose figure does not exist for this run (one sample per case):
    not computed, never a pass or a failure."""


class Verdict(_M):
    passed: bool
    summary: str
    """One line: the verdict and why."""
    reasons: list[str] = Field(default_factory=list)
    gates: list[GateResult] = Field(default_factory=list)
    variance: VarianceResult = Field(default_factory=VarianceResult)
    hard_failures: int = 0
    regressions: int = 0
    """Significant regressions."""
    likely_regressions: int = 0
    """Likely regressions: fell by the minimum effect, not significant yet."""
    likely_fail: bool = False
    """``regressions.likely: fail``: likely regressions counted against the allowance."""
    suite_drops: list[str] = Field(default_factory=list)
    """The suite tests that failed the gate (``case_passed``: the pass rate)."""
    new_failing: int = 0
    """Cases new in this run (absent from the baseline) that fail."""
    new_fail: bool = False
    """``regressions.new_cases: fail``: those cases fail the gate."""
    not_compared: m.NotCompared | None = None
    """Set when the run was compared with nothing, with why: the first line says so."""
    require_baseline: bool = False
    """A run compared with nothing fails (``--require-baseline``)."""
    removed: int = 0
    """Removed cases not retired in ``dataset.retired``: each fails the gate."""
    undecided: int = 0
    """Cases whose pass rate fell with too few samples to tell (``undecided`` flips)."""
    undecided_fail: bool = False
    """``regressions.undecided: fail``: those cases fail the gate."""


class MissingInfo(_M):
    """The missing case-samples (:class:`gate.model.MissingSamples`): failed by the
    infrastructure after their retries, counted neither as failures nor as passes."""

    count: int
    planned: int
    per_case: dict[str, int] = Field(default_factory=dict)
    """Case id → missing samples, for the cases that have any."""
    by_reason: dict[str, int] = Field(default_factory=dict)
    """Error kind → missing samples."""
    first_errors: list[str] = Field(default_factory=list)
    not_run: dict[str, int] = Field(default_factory=dict)
    """Case id → its samples not run on purpose (``agent.missing: skip``: the runs file
    has no run of them), among ``per_case``."""


class RunError(_M):
    """Why the verdict is "error" (exit code 4): the run decided nothing about the agent."""

    reason: str
    first_errors: list[str] = Field(default_factory=list)
    headline: str | None = None
    """What happened, in one line: the first line of every report ("the agent could not
    start: ModuleNotFoundError: No module named 'openai'"); ``None`` in results of earlier
    releases (the reason stands in)."""
    hint: str | None = None
    """What to do about it, when something can be said."""

    @property
    def first_line(self) -> str:
        return self.headline or self.reason


FlipKindName = Literal[
    "regression", "fix", "likely_regression", "likely_fix", "undecided", "noise", "new", "removed"
]


class Flip(_M):
    """A case whose pass rate moved from its base history (``gate.policy.flips``: one
    classification for every command and report), or that is new or removed."""

    case_id: str
    kind: FlipKindName
    base_pass_rate: float | None
    head_pass_rate: float | None
    base_samples: int = 0
    head_samples: int = 0
    head_extra_samples: int = 0
    """Extra samples (sequential sampling, seeding) included in ``head_samples``."""
    failed_checks: list[str] = Field(default_factory=list)
    """Checks that failed in head samples (a regression, noise) or in base samples (a
    fix)."""
    tools: list[str] = Field(default_factory=list)
    """Tools the case involves (expected, must-not-call or called)."""
    drifted_tools: list[str] = Field(default_factory=list)
    """Those of ``tools`` whose definition changed between base and head."""
    line: int | None = None
    reason: str = ""
    p_value: float | None = None
    """The anytime-valid p-value of the case's test, in the direction of the change."""
    because: str | None = None
    """For a likely regression or fix: why it is not significant yet, in words; for an
    undecided one: what would decide it."""


class MetricDelta(_M):
    base: float | None
    head: float | None
    delta: float | None
    beyond_noise: bool = False
    """More than noise: a suite test found the change significant, a flipped case moved
    it, or the base value lies outside the head's bootstrap interval."""


class SetupChange(_M):
    """An identity key of the agent that differs between the base and this run."""

    key: str
    base: Any = None
    head: Any = None


class ToolDrift(_M):
    tool: str
    change: Literal["added", "removed", "changed"]
    diff: list[str] = Field(default_factory=list)
    flipped_cases: list[str] = Field(default_factory=list)
    server: str | None = None
    """In ``Results.mcp_tool_drift``: the MCP server advertising the tool (None: removed,
    no server advertises it)."""


class Comparison(_M):
    source: str
    """Where the baseline came from, in words (a file, an artifact of run N, …)."""
    comparable: bool
    note: str | None = None
    rule: str = ""
    """The flip classification, in words."""
    base_dataset_sha256: str | None = None
    base_samples: int = 0
    regressions: int = 0
    """Significant regressions (what ``regressions.max_new_failures`` counts)."""
    likely_regressions: int = 0
    """Likely regressions: fell by the minimum effect, not significant yet."""
    fixes: int = 0
    likely_fixes: int = 0
    undecided: int = 0
    """Cases whose pass rate moved with too few samples to tell (``undecided`` flips)."""
    noise: int = 0
    metrics: dict[str, MetricDelta] = Field(default_factory=dict)
    slice_metrics: dict[str, dict[str, MetricDelta]] = Field(default_factory=dict)
    """Per slice (``key=value``) either run has: metric → base, head and delta (what a
    gate on a slice is compared with)."""
    flips: list[Flip] = Field(default_factory=list)
    """Regressions first, then likely regressions, fixes, likely fixes, noise, new and
    removed; dataset order within each."""
    tool_drift: list[ToolDrift] = Field(default_factory=list)
    setup_changes: list[SetupChange] = Field(default_factory=list)
    """What this run changed of the agent's identity (model, endpoint, sampling
    settings, system prompt, kind) against the baseline: compared, not a reason not to."""
    base_usage: dict[str, float] = Field(default_factory=dict)
    cost: list[CostDeltaResult] = Field(default_factory=list)
    """What a sample cost, against the base history: the reports' Cost group."""
    changes: m.CaseChanges = Field(default_factory=m.CaseChanges)
    """The cases added, changed and removed against the baseline (by id and hash)."""
    not_compared: m.NotCompared | None = None
    """Set when nothing was compared (``comparable`` false): why."""


class CostDeltaResult(_M):
    """A cost metric per sample, base history → head, over the comparable cases with a
    value on both sides (the cost test's figures, ``docs/policy.md``)."""

    metric: str
    base: float | None
    head: float | None
    change: float | None
    relative: float | None
    """The change as a fraction of the base (``None`` with a base of 0)."""
    p_value: float
    """One-sided, for a rise of the mean per sample."""
    beyond_noise: bool
    cases: int
    typical: float | None = None
    """The typical case's relative change per sample (what a ``max_increase`` gate
    compares with its bound; absent in files of earlier releases)."""


class Advisor(_M):
    """What these samples can and cannot detect (see ``gate.policy.advisor``)."""

    samples: int
    cases: int
    per_case_min_detectable_drop: float | None
    """Smallest drop of one case's pass rate, from a stable pass, that a one-sided Fisher
    exact test at α=0.05 calls significant with ``samples`` samples on each side
    (``None``: not even 1.0 → 0.0 is)."""
    per_case_samples_for_total_drop: int
    """Fewest samples per side for which a total drop (1.0 → 0.0) of one case is
    significant (α=0.05): 3."""
    dataset_min_detectable_drop: float | None
    """Smallest drop of the dataset pass rate (mean over cases) detected with power 0.8
    by a two-sided z-test at α=0.05, at the observed within-case spread."""
    within_case_std: float | None
    """Root of the mean over cases of the unbiased within-case variance of pass/fail."""
    rule: str
    summary: str


class ConfirmInfo(_M):
    """Adaptive confirmation (``confirm:``): extra samples spent on apparent flips."""

    max_extra_samples: int
    extra_samples: int
    cases: dict[str, int] = Field(default_factory=dict)


class SuiteTestResult(_M):
    """A suite-level test: the pass rate (``case_passed``) or a gated metric, base history
    against head, clustered by case."""

    name: str
    method: str
    better: Literal["higher", "lower"]
    cases: int
    base_mean: float | None
    head_mean: float | None
    change: float | None
    se: float | None
    p_value: float
    alpha: float
    blocked: bool
    typical: float | None = None
    """A cost metric's typical case's relative change (``gate.policy.cost``)."""
    typical_p_value: float | None = None
    """A cost metric's typical case's test: one-sided p-value of a rise."""


class FlakinessInfo(_M):
    """The variance guard: head significantly flakier than its base history blocks; a
    flakiness level the base already had is a warning; the optional absolute ceiling."""

    cases: int
    base_spread: float | None
    head_spread: float | None
    p_value: float
    alpha: float
    flakier: bool
    head_flaky: list[str] = Field(default_factory=list)
    already_flaky: list[str] = Field(default_factory=list)
    newly_flaky: list[str] = Field(default_factory=list)
    head_share: float = 0.0
    ceiling: float | None = None
    over_ceiling: bool = False


class SpendInfo(_M):
    """Samples this run spent: ``initial`` on every case, ``extra`` on undecided ones
    (``per_case``), under ``cap``; ``undecided``: cases still undecided at the cap."""

    initial: int
    extra: int
    cap: int
    rounds: int
    per_case: dict[str, int] = Field(default_factory=dict)
    undecided: int = 0
    seed: int = 0
    """Samples a base run spent bringing histories up to ``min_history``."""
    seeded: int = 0
    """Cases those samples went to."""
    held_back: list[str] = Field(default_factory=list)
    """Undecided cases that got no extra samples: a hard failure of theirs already
    fails the gate."""
    saved: int = 0
    """Extra samples those cases could have taken under the caps (at most)."""
    sampled: int = 0
    """Cases that got extra samples from sequential sampling."""
    needed: int = 0
    """Cases that needed extra samples after their first ones (the cap was theirs)."""
    undecidable: int = 0
    """Undecided cases that got no extra samples because none could decide them (their
    base history is too short for even a total failure to be significant)."""


class PolicyParams(_M):
    alpha: float
    alpha_case: float
    alpha_suite: float
    alpha_flaky: float
    initial_samples: int
    max_extra_samples: int | None
    """``None``: 1.5 per comparable case on a pull request, 0.5 on a base run."""
    max_samples_per_case: int
    min_effect: float
    suite_min_effect: float
    flaky_ceiling: float | None
    history_window: int
    min_history: int = 0
    """``policy.min_history`` (0 in files of earlier releases)."""
    max_seed_samples: int | None = None


class HistoryInfo(_M):
    """How deep the base history was, against ``policy.min_history``, and what that let
    this run catch."""

    min_history: int
    comparable: int
    """Cases tested against a history."""
    short: int
    """Of those, cases whose history holds fewer than ``min_history`` samples."""
    median_samples: int | None = None
    """Median history length of the comparable cases."""
    caught_broken: float | None = None
    """Probability that an always-passing case that now always fails is caught in this
    run (mean over the comparable always-passing cases; None: none)."""
    caught_half: float | None = None
    """The same for one that now fails half the time."""


class PolicyInfo(_M):
    """The tests against the base history (``docs/policy.md``)."""

    params: PolicyParams
    blocked: bool
    reasons: list[str] = Field(default_factory=list)
    outcomes: dict[str, int] = Field(default_factory=dict)
    """Cases per outcome."""
    suite: list[SuiteTestResult] = Field(default_factory=list)
    flakiness: FlakinessInfo
    spend: SpendInfo
    detect: list[str] = Field(default_factory=list)
    history: HistoryInfo | None = None
    base_run: bool = False
    """This run was a base-branch run (it seeded the histories up to ``min_history``)."""
    recorded: bool = False
    """The runs were recorded elsewhere (a ``replay`` agent): no sample can be added, so
    a history comes from the base branch's recorded runs, not from a base run."""
    bill: m.RunBill | None = None
    """What the run said it would spend before it started (``toolgate check``)."""
    """What this run could detect and what it spent, in words."""


class Results(_M):
    schema_version: Literal[2] = SCHEMA_VERSION
    toolgate_version: str
    gate_name: str
    dataset: DatasetInfo
    agent: dict[str, Any]
    samples: int
    seed: int
    case_hash_version: int = 1
    """What the cases' ``hash`` covers: 2 — the case and the scoring; 1 (files of the
    previous release) — also the tools' definitions and the agent identity."""
    scoring_sha256: str | None = None
    """The hash of the scoring settings the run was scored with (``scoring``,
    ``dataset.normalize``); None when scored without a config or by an older release."""
    shard: ShardInfo | None = None
    tools: dict[str, ToolInfo] = Field(default_factory=dict)
    metric_names: list[str] = Field(default_factory=list)
    """The order of every per-case and per-sample ``scores`` array (and per-case ``std``)."""
    metrics: dict[str, MetricStat]
    slices: dict[str, SliceResult] = Field(default_factory=dict)
    per_tool: dict[str, ToolRollup] = Field(default_factory=dict)
    confusion: dict[str, dict[str, int]] = Field(default_factory=dict)
    malformed: dict[str, int] = Field(default_factory=dict)
    hard_failures: list[HardFailureResult] = Field(default_factory=list)
    cases: list[CaseResult]
    usage: dict[str, int | float] = Field(default_factory=dict)
    """Token usage totals and per-case means (deterministic for a replayed run)."""
    pass_hat: list[float | None] = Field(default_factory=list)
    """pass^k for k = 1 … ``samples`` (item k − 1): the mean over cases of the chance
    that k samples of a case all pass, C(c, k) / C(n, k) (``gate.policy.reduce``);
    empty in files of earlier releases."""
    verdict: Verdict | None = None
    comparison: Comparison | None = None
    advisor: Advisor | None = None
    confirm: ConfirmInfo | None = None
    policy: PolicyInfo | None = None
    judge: dict[str, Any] | None = None
    mcp_tool_drift: list[ToolDrift] = Field(default_factory=list)
    """The pinned tool definitions against what ``agent.servers`` advertise now (pinned →
    advertised; ``gate.interop.mcp_tools``): reported with the tool drift, never gating."""
    notices: list[str] = Field(default_factory=list)
    missing: MissingInfo | None = None
    """The missing case-samples; None when there are none."""
    run_error: RunError | None = None
    """Set when the verdict is "error" (then ``verdict.passed`` is false): the reports say
    the run is not valid instead of listing regressions."""
    timing: dict[str, Any] = Field(default_factory=dict)
    """Wall times, latencies and dates: the only part that differs between identical runs."""
    stock_reasons: dict[str, str] = Field(default_factory=lambda: dict(STOCK_REASONS))
    """The sentences the samples' ``reasons_stock`` name (:data:`STOCK_REASONS`; a file
    is read with its own table, and written with this release's)."""

    @model_validator(mode="after")
    def _arrays_follow_metric_names(self) -> Results:
        k = len(self.metric_names)
        for i, c in enumerate(self.cases):
            if len(c.scores) != k or (c.std and len(c.std) != k):
                raise ValueError(
                    f"cases[{i}] ({c.id!r}): its scores and std must have one entry per "
                    f"metric_names ({k})"
                )
            for j, s in enumerate(c.samples):
                if len(s.scores) != k:
                    raise ValueError(
                        f"cases[{i}].samples[{j}] ({c.id!r} sample {s.sample}): its scores "
                        f"must have one entry per metric_names ({k})"
                    )
        return self

    def case_scores(self, case: CaseResult) -> dict[str, float | None]:
        """A case's scores by metric name."""
        return dict(zip(self.metric_names, case.scores, strict=True))

    def case_std(self, case: CaseResult) -> dict[str, float]:
        """A case's std over samples by metric name (metrics with ≥ 2 values only)."""
        return {n: v for n, v in zip(self.metric_names, case.std, strict=False) if v is not None}

    def sample_scores(self, sample: SampleResult) -> dict[str, float | None]:
        """A sample's scores by metric name."""
        return dict(zip(self.metric_names, sample.scores, strict=True))


# ─── per-sample records ──────────────────────────────────────────────────────


class SampleRecords(Protocol):
    """The results.json records of a run's samples, by case (dataset index in scope),
    each case's in the reduction's order: regular samples by number, then confirmation
    samples."""

    def of_case(self, case: int) -> Sequence[bytes]: ...


def kept_reasons(
    reasons: Mapping[str, str],
    scores: Mapping[str, float | None],
    failed_checks: Iterable[str],
) -> dict[str, str]:
    """The reasons a sample record keeps (module docstring): of the metrics that missed
    their best value (:attr:`gate.scorers.registry.Metric.ideal`) or do not apply, of any
    other metric, and of failed checks."""
    checks = failed_checks if isinstance(failed_checks, tuple | list) else tuple(failed_checks)
    out: dict[str, str] = {}
    for name, why in reasons.items():
        if name in _COST and name not in checks:
            continue  # what a sample cost is its figure, not a reason
        ideal = _IDEAL.get(name)
        if ideal is None or name in checks:
            out[name] = why
            continue
        value = scores.get(name)
        if value is None or value != ideal:
            out[name] = why
    return out


_IDEAL: dict[str, float] = {name: metric.ideal for name, metric in BY_NAME.items()}
_COST = frozenset(COST_METRICS)


def _lean_tallies(t: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in t.items() if v}


def _lean_tallies_of(t: Tallies) -> dict[str, Any]:
    """:func:`_lean_tallies` of :func:`tallies_json` (the same dict, built directly)."""
    out: dict[str, Any] = {}
    if t.calls:
        out["calls"] = t.calls
    if t.calls_on_no_tool:
        out["calls_on_no_tool"] = t.calls_on_no_tool
    if t.confusion:
        out["confusion"] = [[e, a] for e, a in t.confusion]
    if t.malformed:
        out["malformed"] = dict(t.malformed)
    if t.per_tool:
        out["per_tool"] = {n: [x.expected, x.matched, x.called] for n, x in t.per_tool.items()}
    if t.unrecorded:
        out["unrecorded"] = t.unrecorded
    return out


@m.value
class RecordTemplate:
    """A sample record but its ``sample``, its ``usage`` and the scores taken from its
    usage (:data:`gate.scorers.usage.USAGE_METRICS`): the samples of one scored run
    (identical runs are scored once) differ in nothing else, so the record is rendered
    once and each sample only fills in those (:meth:`render`)."""

    head: bytes
    """``{`` and the keys before ``sample`` (error, evidence, extra, failed_checks,
    first_failing_turn, passed, reasons), each with its comma."""
    tail: bytes
    """``scores``, ``tallies`` and a conversation's ``turns`` (the keys between ``sample``
    and ``usage``)."""
    scores: tuple[float | None, ...] = ()
    """The scores, when :attr:`usage_at` names some to fill in per sample."""
    usage_at: tuple[int, ...] = ()
    """Where the usage metrics stand in ``scores`` (empty: nothing to fill in)."""
    rest: bytes = b""
    """The keys after ``scores`` in ``tail``, with their leading comma."""

    def render(
        self,
        sample: int,
        usage: Mapping[str, int | float] | None,
        usage_scores: Sequence[float | None] | None = None,
    ) -> bytes:
        """The record of sample ``sample``; ``usage_scores``: its usage metrics (in
        :data:`~gate.scorers.usage.USAGE_METRICS` order) when they differ from the
        scored run's."""
        # (orjson sorts keys by their UTF-8 bytes: the order of code points, as sorted() does)
        usage_part = (
            b""
            if usage is None
            else b',"usage_error":' + orjson.dumps(usage.reason)
            if isinstance(usage, InvalidUsage)
            else b',"usage":'
            + orjson.dumps(usage if type(usage) is dict else dict(usage), option=_SORTED)
        )
        tail = self.tail
        if (
            usage_scores is not None
            and self.usage_at
            and tuple(self.scores[i] for i in self.usage_at) != tuple(usage_scores)
        ):
            scores = fill(list(self.scores), self.usage_at, usage_scores)
            tail = b'"scores":' + orjson.dumps(scores, option=_RECORD_OPTIONS) + self.rest
        return b"".join(
            (self.head, b'"sample":', str(sample).encode(), b",", tail, usage_part, b"}")
        )


def _template(
    *,
    passed: bool,
    scores: list[float | None],
    failed_checks: Sequence[str],
    reasons: Mapping[str, str],
    evidence: Mapping[str, Any] | None,
    tallies: Mapping[str, Any],
    error: str | None,
    extra: bool,
    turns: Sequence[Mapping[str, Any]] | None = None,
    usage_at: tuple[int, ...] = (),
) -> RecordTemplate:
    """One sample record (compact, its keys in sorted order, its defaults left out) as a
    template. ``turns``: a conversation's user turns (``TurnResult`` fields); ``usage_at``:
    where the usage metrics stand in ``scores``, to be filled in per sample."""
    head: dict[str, Any] = {}
    if error is not None:
        head["error"] = error
    if evidence and not passed:
        head["evidence"] = evidence
    if extra:
        head["extra"] = True
    if failed_checks:
        head["failed_checks"] = list(failed_checks)
    if turns is not None:
        head["first_failing_turn"] = next(
            (i for i, t in enumerate(turns, start=1) if not t["passed"]), None
        )
    head["passed"] = passed
    own = {k: v for k, v in reasons.items() if STOCK_REASONS.get(k) != v}
    if own:
        head["reasons"] = dict(sorted(own.items()))
    if len(own) < len(reasons):
        head["reasons_stock"] = sorted(k for k in reasons if k not in own)
    rest: dict[str, Any] = {"tallies": dict(sorted(tallies.items()))}
    if turns is not None:
        rest["turns"] = [dict(sorted(t.items())) for t in turns]
        rest["turns_passed"] = sum(1 for t in turns if t["passed"])
    rest_bytes = b"," + orjson.dumps(rest, default=_default, option=_RECORD_OPTIONS)[1:-1]
    return RecordTemplate(
        head=orjson.dumps(head, default=_default, option=_RECORD_OPTIONS)[:-1] + b",",
        tail=b'"scores":'
        + orjson.dumps(scores, default=_default, option=_RECORD_OPTIONS)
        + rest_bytes,
        scores=tuple(scores) if usage_at else (),
        usage_at=usage_at,
        rest=rest_bytes if usage_at else b"",
    )


_RECORD_OPTIONS = orjson.OPT_NON_STR_KEYS
_SORTED = orjson.OPT_SORT_KEYS


_EXPECTED: dict[int, tuple[tuple[m.ExpectedCall, ...], orjson.Fragment]] = {}
_EXPECTED_SIZE = 4096


def _expected_fragment(calls: tuple[m.ExpectedCall, ...]) -> orjson.Fragment:
    """The JSON of an expectation list as a sample's evidence lists it, written once per
    list: every failing sample of a case shows the same one (the same tuple object, the
    compiled case's)."""
    hit = _EXPECTED.get(id(calls))
    if hit is not None and hit[0] is calls:
        return hit[1]
    text = orjson.dumps(expected_json(calls), default=_default, option=_RECORD_OPTIONS)
    fragment = orjson.Fragment(text)
    if len(_EXPECTED) >= _EXPECTED_SIZE:
        _EXPECTED.clear()
    _EXPECTED[id(calls)] = (calls, fragment)
    return fragment


def record_template(
    score: SampleScore, *, names: Sequence[str], extra: bool = False, reasons_kept: bool = False
) -> RecordTemplate:
    """The record of a scored sample (lean: see the module docstring) as a template.
    ``reasons_kept``: the score's reasons are those a record keeps already (as
    :func:`gate.scorers.score_sample` gives them without ``full``)."""
    scores = score.scores
    values = list(scores.values())
    if len(values) != len(names) or tuple(scores) != tuple(names):
        values = [scores.get(n) for n in names]
    return _template(
        passed=score.passed,
        scores=values,
        failed_checks=score.failed_checks,
        reasons=score.reasons
        if reasons_kept
        else kept_reasons(score.reasons, scores, score.failed_checks),
        evidence=evidence_json(score.evidence, expected=_expected_fragment(score.evidence.expected))
        if score.evidence is not None
        else None,
        tallies=_lean_tallies_of(score.tallies),
        error=score.error,
        extra=extra,
        turns=[_turn_json(t, names) for t in score.turns] if score.turns else None,
        usage_at=() if _not_sampled(score) else usage_positions(names),
    )


def _not_sampled(score: SampleScore) -> bool:
    from gate.policy.validity import is_missing

    return is_missing(score.error, score.hard_failures)


def _turn_json(t: m.TurnScore, names: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "called": list(t.called),
        "failed_checks": list(t.failed_checks),
        "passed": t.passed,
        "scores": [t.scores.get(n) for n in names],
        "user": t.user,
    }
    if not t.ran:
        out["ran"] = False
    return out


def sample_record(score: SampleScore, *, names: Sequence[str], extra: bool = False) -> bytes:
    """A scored sample's results.json record (lean: see the module docstring)."""
    return record_template(score, names=names, extra=extra).render(score.sample, score.usage)


def result_record(
    s: SampleResult, *, names: Sequence[str], write: Sequence[str] | None = None
) -> bytes:
    """A :class:`SampleResult`'s record, written as :func:`sample_record` would (``names``
    are its results' ``metric_names``; ``write``, the names to write its scores over, when
    they differ)."""
    scores = dict(zip(names, s.scores, strict=True))

    def over(values: Sequence[float | None]) -> list[float | None]:
        if write is None:
            return list(values)
        by = dict(zip(names, values, strict=True))
        return [by.get(n) for n in write]

    turns = (
        [
            {
                "called": list(t.called),
                "failed_checks": list(t.failed_checks),
                "passed": t.passed,
                "scores": over(t.scores),
                **({} if t.user is None else {"user": t.user}),
                **({} if t.ran else {"ran": False}),
            }
            for t in s.turns
        ]
        if s.turns is not None
        else None
    )
    return _template(
        passed=s.passed,
        scores=over(s.scores),
        failed_checks=s.failed_checks,
        reasons=kept_reasons(s.reasons, scores, s.failed_checks),
        evidence=s.evidence,
        tallies=_lean_tallies(s.tallies),
        error=s.error,
        extra=s.extra,
        turns=turns,
    ).render(s.sample, usage_of(s.usage, s.usage_error))


# ─── typed values → results.json ─────────────────────────────────────────────


def _actual_json(a: ActualCall) -> dict[str, Any]:
    out = a.call.to_json()
    out["turn"] = a.turn
    return out


def _arg_diff_json(d: ArgDiff) -> dict[str, Any]:
    diffs = []
    for p in d.diffs:
        entry: dict[str, Any] = {"argument": p.argument, "expected": p.expected, "why": p.why}
        if p.present:
            entry["actual"] = p.actual
        diffs.append(entry)
    return {
        "expected_index": d.expected_index,
        "actual_index": d.actual_index,
        "tool": d.tool,
        "diffs": diffs,
    }


def expected_json(calls: Sequence[m.ExpectedCall]) -> list[dict[str, Any]]:
    """An expectation list as a sample's evidence lists it (docs/scoring.md): flat, each
    call in the dataset's syntax, and in a list written with batches each with its
    ``batch`` (the reports read it: no order is expected inside a batch)."""
    if not m.is_batched(calls):
        return [e.to_json() for e in calls]
    out = []
    for e in calls:
        call = e.to_json()
        call["batch"] = e.batch
        out.append(call)
    return out


def evidence_json(ev: Evidence, *, expected: Any = None) -> dict[str, Any]:
    """A sample's :class:`~gate.model.Evidence` as results.json holds it (the keys are
    documented in ``docs/scoring.md``); ``expected``, the JSON of ``ev.expected`` when the
    caller has it already (:func:`_expected_fragment`)."""
    out: dict[str, Any] = {
        "expected": expected_json(ev.expected) if expected is None else expected,
        "actual": [_actual_json(a) for a in ev.actual],
        "alternative": ev.alternative,
        "matched": [[i, j] for i, j in ev.matched],
        "missing": [{"index": m.index, "name": m.name, "why": m.why.value} for m in ev.missing],
        "extra": [{"index": x.index, "name": x.name} for x in ev.extra],
        "arg_diffs": [_arg_diff_json(d) for d in ev.arg_diffs],
        "malformed": [
            {"index": m.index, "name": m.name, "kind": m.kind.value, "detail": m.detail}
            for m in ev.malformed
        ],
        "violations": [
            {"rule": v.rule.value, "index": v.index, "name": v.name, "message": v.message}
            for v in ev.violations
        ],
        "summary": ev.summary,
    }
    if ev.unrecorded:
        out["unrecorded"] = list(ev.unrecorded)
    if ev.agent_error is not None:
        out["agent_error"] = ev.agent_error
    if ev.batching:
        out["batching"] = [
            {
                "kind": b.kind.value,
                "expected": list(b.expected),
                "names": list(b.names),
                "turns": list(b.turns),
            }
            for b in ev.batching
        ]
    if ev.turn is not None:
        out["turn"] = {"index": ev.turn.index, "of": ev.turn.of, "user": ev.turn.user}
    if ev.effects is not None:
        fx = ev.effects
        out["effects"] = {
            "made": list(fx.made),
            "failed": list(fx.failed),
            "matched": [[i, j] for i, j in fx.matched],
            "missing": [{"index": m.index, "name": m.name, "why": m.why.value} for m in fx.missing],
            "extra": [{"index": x.index, "name": x.name} for x in fx.extra],
            "arg_diffs": [_arg_diff_json(d) for d in fx.arg_diffs],
            "order": fx.order,
        }
        if fx.repeated:
            out["effects"]["repeated"] = list(fx.repeated)
    return out


def tallies_json(t: Tallies) -> dict[str, Any]:
    """A sample's :class:`~gate.model.Tallies` as results.json holds them (whole; a
    sample record leaves out the zero entries)."""
    return {
        "calls": t.calls,
        "calls_on_no_tool": t.calls_on_no_tool,
        "per_tool": {n: [x.expected, x.matched, x.called] for n, x in t.per_tool.items()},
        "confusion": [[e, a] for e, a in t.confusion],
        "malformed": dict(t.malformed),
        "unrecorded": t.unrecorded,
    }


def tallies_of(t: Mapping[str, Any]) -> Tallies:
    """Tallies read back from a sample record (tolerant of the shapes of schema 1)."""
    per_tool = t.get("per_tool") or {}
    confusion = t.get("confusion") or []
    malformed = t.get("malformed") or {}
    if not isinstance(malformed, Mapping):  # a list of classes, in older files
        counted: dict[str, int] = {}
        for kind in malformed:
            counted[str(kind)] = counted.get(str(kind), 0) + 1
        malformed = counted
    return Tallies(
        calls=int(t.get("calls", 0) or 0),
        calls_on_no_tool=int(t.get("calls_on_no_tool", 0) or 0),
        per_tool={str(n): ToolTally(int(e), int(mm), int(c)) for n, (e, mm, c) in per_tool.items()},
        confusion=tuple((str(e), None if a is None else str(a)) for e, a in confusion),
        malformed={str(k): int(v) for k, v in malformed.items()},
        unrecorded=int(t.get("unrecorded", 0) or 0),
    )


def _hard_json(h: m.HardFailure) -> HardFailureResult:
    return HardFailureResult(
        kind=str(h.kind),
        case_id=h.case_id,
        sample=h.sample,
        call=h.call.to_json(),
        message=h.message,
        line=h.line,
    )


def _hard_of(h: HardFailureResult) -> m.HardFailure:
    call = h.call
    args = call.get("arguments")
    raw = call.get("raw_arguments")
    try:
        kind = HardFailureKind(h.kind)
    except ValueError:
        kind = HardFailureKind.MUST_NOT_CALL if "must" in h.kind else HardFailureKind.ARG_SCOPE
    return m.HardFailure(
        kind=kind,
        case_id=h.case_id,
        sample=h.sample,
        call=ToolCall(
            name=str(call.get("name", "?")),
            arguments=args if isinstance(args, dict) else None,
            id=call.get("id") if isinstance(call.get("id"), str) else None,
            raw_arguments=raw if isinstance(raw, str) else None,
            parse_ok=bool(call.get("parse_ok", isinstance(args, dict))),
        ),
        message=h.message,
        line=h.line,
    )


def _metric_json(s: m.MetricStats) -> MetricStat:
    return MetricStat(mean=s.mean, std=s.std, n=s.n, ci_low=s.ci_low, ci_high=s.ci_high)


def _metric_of(s: MetricStat) -> m.MetricStats:
    return m.MetricStats(mean=s.mean, std=s.std, n=s.n, ci_low=s.ci_low, ci_high=s.ci_high)


def verdict_json(v: m.Verdict) -> Verdict:
    var = v.variance
    return Verdict(
        passed=v.passed,
        summary=v.summary,
        reasons=list(v.reasons),
        gates=[
            GateResult(
                metric=g.metric,
                slice=g.slice,
                op=g.op.value,
                threshold=g.threshold,
                value=g.value,
                passed=g.passed,
                reason=g.reason,
                failing_cases=list(g.failing_cases),
                no_data=g.no_data,
                not_checked=g.not_checked,
                undecided=g.undecided,
            )
            for g in v.gates
        ],
        variance=VarianceResult(
            max_std=var.max_std,
            observed_max_std=var.observed_max_std,
            worst_metric=var.worst_metric,
            stds=dict(var.stds),
            max_flaky_share=var.max_flaky_share,
            flaky_share=var.flaky_share,
            flaky_cases=list(var.flaky_cases),
            passed=var.passed,
            reasons=list(var.reasons),
            not_computed=list(var.not_computed),
        ),
        hard_failures=v.hard_failures,
        regressions=v.regressions,
        likely_regressions=v.likely_regressions,
        likely_fail=v.likely_fail,
        suite_drops=list(v.suite_drops),
        new_failing=v.new_failing,
        new_fail=v.new_fail,
        not_compared=v.not_compared,
        require_baseline=v.require_baseline,
        removed=v.removed,
        undecided=v.undecided,
        undecided_fail=v.undecided_fail,
    )


def _delta_json(d: m.MetricDelta) -> MetricDelta:
    return MetricDelta(base=d.base, head=d.head, delta=d.delta, beyond_noise=d.beyond_noise)


def comparison_json(c: m.Comparison) -> Comparison:
    """The comparison as results.json holds it (``toolgate diff --format json`` too)."""
    return Comparison(
        source=c.source,
        comparable=c.comparable,
        note=c.note,
        rule=c.rule,
        base_dataset_sha256=c.base_dataset_sha256,
        base_samples=c.base_samples,
        regressions=c.regressions,
        likely_regressions=c.likely_regressions,
        fixes=c.fixes,
        likely_fixes=c.likely_fixes,
        undecided=c.undecided,
        noise=c.noise,
        metrics={k: _delta_json(d) for k, d in c.metrics.items()},
        slice_metrics={
            s: {k: _delta_json(d) for k, d in ds.items()} for s, ds in c.slice_metrics.items()
        },
        flips=[
            Flip(
                case_id=f.case_id,
                kind=f.kind.value,
                base_pass_rate=f.base_pass_rate,
                head_pass_rate=f.head_pass_rate,
                base_samples=f.base_samples,
                head_samples=f.head_samples,
                head_extra_samples=f.head_extra_samples,
                failed_checks=list(f.failed_checks),
                tools=list(f.tools),
                drifted_tools=list(f.drifted_tools),
                line=f.line,
                reason=f.reason,
                p_value=f.p_value,
                because=f.because,
            )
            for f in c.flips
        ],
        tool_drift=[
            ToolDrift(
                tool=d.tool,
                change=d.change.value,
                diff=list(d.diff),
                flipped_cases=list(d.flipped_cases),
            )
            for d in c.tool_drift
        ],
        setup_changes=[SetupChange(key=x.key, base=x.base, head=x.head) for x in c.setup_changes],
        base_usage=dict(c.base_usage),
        cost=[
            CostDeltaResult(
                metric=d.metric,
                base=d.base,
                head=d.head,
                change=d.change,
                relative=d.relative,
                p_value=d.p_value,
                beyond_noise=d.beyond_noise,
                cases=d.cases,
                typical=d.typical,
            )
            for d in c.cost
        ],
        changes=c.changes,
        not_compared=c.not_compared,
    )


def _advisor_json(a: m.Advice | None) -> Advisor | None:
    if a is None:
        return None
    return Advisor(
        samples=a.samples,
        cases=a.cases,
        per_case_min_detectable_drop=a.per_case_min_detectable_drop,
        per_case_samples_for_total_drop=a.per_case_samples_for_total_drop,
        dataset_min_detectable_drop=a.dataset_min_detectable_drop,
        within_case_std=a.within_case_std,
        rule=a.rule,
        summary=a.summary,
    )


def _header_fields(h: m.RunHeader) -> dict[str, Any]:
    d = h.dataset
    return {
        "toolgate_version": h.toolgate_version,
        "gate_name": h.gate_name,
        "dataset": DatasetInfo(
            path=d.path,
            version=d.version,
            sha256=d.sha256,
            cases=d.cases,
            total_cases=d.total_cases,
            cases_sha256=d.cases_sha256,
        ),
        "agent": dict(h.agent),
        "scoring_sha256": h.scoring_sha256,
        "seed": h.seed,
        "shard": None if h.shard is None else ShardInfo(index=h.shard.index, count=h.shard.count),
        "tools": {
            name: ToolInfo(hash=t.hash, description=t.description, parameters=dict(t.parameters))
            for name, t in h.tools.items()
        },
    }


def _outline(
    stats: m.SuiteStats,
    *,
    verdict: m.Verdict | None,
    comparison: m.Comparison | None,
    judge: Mapping[str, Any] | None,
    notices: Sequence[str],
    timing: Mapping[str, Any],
    mcp_tool_drift: Sequence[ToolDrift] = (),
) -> dict[str, Any]:
    """Every field of the results but the cases."""
    confirm = stats.confirm
    return {
        "schema_version": SCHEMA_VERSION,
        "stock_reasons": dict(STOCK_REASONS),
        "case_hash_version": CASE_HASH_VERSION,
        **_header_fields(stats.header),
        "samples": stats.samples,
        "metric_names": list(stats.metric_names),
        "metrics": {k: _metric_json(s) for k, s in stats.metrics.items()},
        "slices": {
            name: SliceResult(
                cases=sl.cases,
                pass_rate=sl.pass_rate,
                metrics={k: _metric_json(s) for k, s in sl.metrics.items()},
            )
            for name, sl in stats.slices.items()
        },
        "per_tool": {
            n: ToolRollup(expected=t.expected, matched=t.matched, recall=t.recall, called=t.called)
            for n, t in stats.per_tool.items()
        },
        "confusion": {k: dict(v) for k, v in stats.confusion.items()},
        "malformed": dict(stats.malformed),
        "hard_failures": [_hard_json(h) for h in stats.hard_failures],
        "usage": dict(stats.usage),
        "pass_hat": list(stats.pass_hat),
        "verdict": None if verdict is None else verdict_json(verdict),
        "comparison": None if comparison is None else comparison_json(comparison),
        "mcp_tool_drift": list(mcp_tool_drift),
        "advisor": _advisor_json(stats.advisor),
        "confirm": None
        if confirm is None
        else ConfirmInfo(
            max_extra_samples=confirm.max_extra_samples,
            extra_samples=confirm.extra_samples,
            cases=dict(confirm.cases),
        ),
        "policy": None,
        "judge": None if judge is None else dict(judge),
        "notices": [*stats.notices, *(verdict.notices if verdict else ()), *notices],
        "timing": {**stats.timing, **timing},
    }


def sampled(results: Results, case: CaseResult) -> int:
    """How many samples of ``case`` were sampled: its samples but the missing ones (the
    infrastructure failed them; neither a pass nor a failure)."""
    gone = results.missing.per_case.get(case.id, 0) if results.missing is not None else 0
    return len(case.samples) - gone


def failed_by_agent(results: Results) -> list[str]:
    """The ids of the cases every sample of which the agent failed before answering (a
    crash, a timeout, a protocol error, its own error: :func:`gate.errors.agent_failed`),
    in dataset order — no answer to score, listed apart from the cases it answered
    wrongly."""
    from gate.errors import agent_failed

    return [
        c.id
        for c in results.cases
        if c.samples and all(agent_failed(s.error) and not s.answered_a_turn for s in c.samples)
    ]


def not_sampled(results: Results) -> list[str]:
    """The ids of the cases every sample of which is missing, in dataset order: *not
    sampled* — neither passed nor failed (listed apart by the reports)."""
    gone = results.missing
    if gone is None:
        return []
    return [c.id for c in results.cases if c.samples and gone.per_case.get(c.id) == len(c.samples)]


def with_validity(
    results: Results, missing: m.MissingSamples, invalid: m.RunInvalid | None
) -> Results:
    """``results`` with its missing samples and, for a run that is not valid, the verdict
    "error" (``gate.policy.validity``): then nothing reads it as passed."""
    update: dict[str, Any] = {}
    if missing.count:
        update["missing"] = MissingInfo(
            count=missing.count,
            planned=missing.planned,
            per_case=dict(missing.per_case),
            by_reason=dict(missing.by_reason),
            first_errors=list(missing.first_errors),
            not_run=dict(missing.not_run),
        )
    if invalid is not None:
        error = RunError(
            reason=invalid.reason,
            first_errors=list(invalid.first_errors),
            headline=invalid.headline or None,
            hint=invalid.hint,
        )
        update["run_error"] = error
        if results.verdict is not None:
            # Nothing was measured: no gate, variance rule or regression was evaluated on
            # it, and none is named as missed.
            update["verdict"] = Verdict(
                passed=False,
                summary=f"ERROR — {error.first_line}",
                reasons=[error.first_line],
                hard_failures=results.verdict.hard_failures,
            )
    return results.model_copy(update=update) if update else results


def _case_fields(c: m.CaseStats, names: Sequence[str]) -> dict[str, Any]:
    """A case's fields but its samples, as results.json holds them."""
    return _fields(c, [c.scores.get(n) for n in names], [c.std.get(n) for n in names])


def _cases_fields(cases: Sequence[m.CaseStats], names: Sequence[str]) -> Iterator[dict[str, Any]]:
    """:func:`_case_fields` of every case (from the reduction's arrays when it can)."""
    rows = getattr(cases, "score_rows", None)
    if rows is None:
        for c in cases:
            yield _case_fields(c, names)
    else:
        for row in rows(names):
            yield _fields(*row)


def _fields(c: m.CaseStats, scores: list[float | None], std: list[float | None]) -> dict[str, Any]:
    return {
        "id": c.id,
        "line": c.line,
        "difficulty": c.difficulty,
        "tags": list(c.tags),
        "expected_no_tool": c.expected_no_tool,
        "must_not_call": list(c.must_not_call),
        "tools": list(c.tools),
        "passed": c.passed,
        "pass_rate": c.pass_rate,
        "flaky": c.flaky,
        "scores": scores,
        "std": std,
        "extra_samples": c.extra_samples,
        "hash": None,
        "setup": None,
        "history": [],
        "test": None,
    }


@dataclasses.dataclass(frozen=True, slots=True)
class PolicyFields:
    """What the tests against the base history add to results.json: the top-level
    ``policy`` and, per case id, its ``hash``, ``history`` and ``test``."""

    info: PolicyInfo
    cases: Mapping[str, Mapping[str, Any]]
    hash_version: int = CASE_HASH_VERSION
    """What the cases' hashes cover (``Results.case_hash_version``)."""


def _history_json(h: CaseHistory | None) -> list[HistoryRun]:
    if h is None:
        return []
    return [
        HistoryRun(
            passes=e.passes,
            samples=e.samples,
            metrics={k: [v.n, v.total, v.total_sq] for k, v in sorted(e.metrics.items())},
            values={k: list(v) for k, v in sorted(e.values.items())},
        )
        for e in h.entries
    ]


def _case_test_json(v: CaseVerdict) -> CaseTestResult:
    return CaseTestResult(
        outcome=v.outcome.value,
        comparability=v.comparability.value,
        base_passes=None if v.base is None else v.base.passes,
        base_samples=None if v.base is None else v.base.samples,
        head_passes=v.head.passes,
        head_samples=v.head.samples,
        extra_samples=v.extra_samples,
        p_worse=v.p_worse,
        p_better=v.p_better,
        log_e_worse=v.log_e_worse,
        log_e_better=v.log_e_better,
        change=v.change,
        below_min_effect=v.below_min_effect,
    )


def policy_fields(
    evaluation: Evaluation,
    params: EngineParams,
    *,
    hashes: Mapping[str, str],
    history: BaseHistory,
    detect: Sequence[str],
    hash_version: int = CASE_HASH_VERSION,
    detection: Detectability | None = None,
    base_run: bool = False,
    bill: m.RunBill | None = None,
    recorded: bool = False,
) -> PolicyFields:
    """The results.json fields of an engine evaluation (``history``: the one this run
    carries forward)."""
    seq = params.sequential
    fl = evaluation.flakiness
    sp = evaluation.spend
    outcomes: dict[str, int] = {}
    for v in evaluation.cases:
        outcomes[v.outcome.value] = outcomes.get(v.outcome.value, 0) + 1
    info = PolicyInfo(
        params=PolicyParams(
            alpha=params.alpha,
            alpha_case=params.alpha_case,
            alpha_suite=params.alpha_suite,
            alpha_flaky=params.alpha_flaky,
            initial_samples=seq.initial,
            max_extra_samples=seq.max_extra,
            max_samples_per_case=seq.max_per_case,
            min_effect=params.min_effect,
            suite_min_effect=params.suite_min_effect,
            flaky_ceiling=params.flaky_ceiling,
            history_window=history.window,
            min_history=seq.min_history,
            max_seed_samples=seq.max_seed,
        ),
        blocked=evaluation.blocked,
        reasons=[r.value for r in evaluation.reasons],
        outcomes=dict(sorted(outcomes.items())),
        suite=[
            SuiteTestResult(
                name=t.name,
                method=t.method.value,
                better=t.better.value,
                cases=t.cases,
                base_mean=t.base_mean,
                head_mean=t.head_mean,
                change=t.change,
                se=t.se,
                p_value=t.p_value,
                alpha=t.alpha,
                blocked=t.blocked,
                typical=t.cost.typical if t.cost is not None else None,
                typical_p_value=t.cost.typical_p_rise if t.cost is not None else None,
            )
            for t in evaluation.suite
        ],
        flakiness=FlakinessInfo(
            cases=fl.cases,
            base_spread=fl.base_spread,
            head_spread=fl.head_spread,
            p_value=fl.p_value,
            alpha=fl.alpha,
            flakier=fl.flakier,
            head_flaky=list(fl.head_flaky),
            already_flaky=list(fl.already_flaky),
            newly_flaky=list(fl.newly_flaky),
            head_share=fl.head_share,
            ceiling=fl.ceiling,
            over_ceiling=fl.over_ceiling,
        ),
        spend=SpendInfo(
            initial=sp.initial,
            extra=sp.extra,
            cap=sp.cap,
            rounds=sp.rounds,
            per_case=dict(sp.per_case),
            undecided=sp.undecided,
            seed=sp.seed,
            seeded=sp.seeded,
            held_back=[v.case_id for v in evaluation.cases if v.case_id in evaluation.held_back],
            saved=sp.saved,
            sampled=sp.sampled,
            needed=sp.needed,
            undecidable=sp.undecidable,
        ),
        detect=list(detect),
        history=_history_info(evaluation, seq.min_history, detection),
        base_run=base_run,
        recorded=recorded,
        bill=bill,
    )
    cases = {
        v.case_id: {
            "hash": hashes.get(v.case_id),
            "setup": _setup_of(history.cases.get(v.case_id)),
            "history": _history_json(history.cases.get(v.case_id)),
            "test": _case_test_json(v),
        }
        for v in evaluation.cases
    }
    return PolicyFields(info, cases, hash_version)


def _history_info(
    evaluation: Evaluation, min_history: int, detection: Detectability | None
) -> HistoryInfo:
    depths = sorted(v.base.samples for v in evaluation.cases if v.base is not None)
    return HistoryInfo(
        min_history=min_history,
        comparable=len(depths),
        short=sum(1 for d in depths if d < min_history),
        median_samples=depths[len(depths) // 2] if depths else None,
        caught_broken=None if detection is None else detection.stable_broken,
        caught_half=None if detection is None else detection.stable_half,
    )


def _setup_of(h: CaseHistory | None) -> str | None:
    return None if h is None else h.setup


def history_of(
    results: Results,
    hashes: Mapping[str, str],
    *,
    dataset_sha256: str,
    legacy: Mapping[str, str] | None = None,
) -> BaseHistory:
    """The base history a results file carries. A case written with a hash and a history
    keeps them — a file of the previous release (``case_hash_version`` 1) hashed the
    case with its tools and agent: where that hash equals ``legacy`` (the case as the
    base run saw it, hashed that way) the history takes the current hash, and otherwise
    keeps the stale one (not comparable). A case of an earlier release's file (no hash)
    starts its history from its counts in that file, with the hash the case has now
    (``hashes``) when the file was made from the same dataset (sha256) — and no hash, so
    not comparable, when not."""
    same = results.dataset.sha256 == dataset_sha256
    window = results.policy.params.history_window if results.policy else HISTORY_WINDOW
    out: dict[str, CaseHistory] = {}
    names = results.metric_names
    for c in results.cases:
        if c.hash is not None and c.history:
            hash_, setup = c.hash, c.setup
            if results.case_hash_version < CASE_HASH_VERSION:
                matched = legacy is not None and legacy.get(c.id) == c.hash
                hash_ = hashes.get(c.id, c.hash) if matched else c.hash
                setup = None
            out[c.id] = CaseHistory(hash_, tuple(e.entry() for e in c.history), setup)
            continue
        hash_ = c.hash if c.hash is not None else (hashes.get(c.id, "") if same else "")
        passes = sum(1 for s in c.samples if s.passed)
        per_metric: dict[str, list[float | None]] = {n: [] for n in names}
        for s in c.samples:
            for n, v in zip(names, s.scores, strict=True):
                per_metric[n].append(v)
        sums = {n: MetricSums.of(vals) for n, vals in per_metric.items()}
        values = {
            n: tuple(v for v in vals if v is not None)
            for n, vals in per_metric.items()
            if n in COST_METRICS
        }
        entry = HistoryEntry(
            passes,
            len(c.samples),
            {k: v for k, v in sums.items() if v.n},
            {k: v for k, v in values.items() if v},
        )
        out[c.id] = CaseHistory(hash_, (entry,))
    return BaseHistory(out, window)


def assemble(
    stats: m.SuiteStats,
    records: SampleRecords,
    *,
    verdict: m.Verdict | None = None,
    comparison: m.Comparison | None = None,
    judge: Mapping[str, Any] | None = None,
    notices: Sequence[str] = (),
    timing: Mapping[str, Any] | None = None,
    mcp_tool_drift: Sequence[ToolDrift] = (),
    policy: PolicyFields | None = None,
) -> Results:
    """The :class:`Results` of a run: its statistics, its sample records (read back from
    the bytes results.json gets), and what was decided about it."""
    fields = _outline(
        stats,
        verdict=verdict,
        comparison=comparison,
        judge=judge,
        notices=notices,
        timing=timing or {},
        mcp_tool_drift=mcp_tool_drift,
    )
    names = stats.metric_names
    cases = []
    for i, (c, f) in enumerate(zip(stats.cases, _cases_fields(stats.cases, names), strict=True)):
        samples = [SampleResult.model_validate_json(r) for r in records.of_case(i)]
        # (the records name this release's STOCK_REASONS, the validator's default)
        extra = policy.cases.get(c.id, {}) if policy is not None else {}
        cases.append(CaseResult(**{**f, **extra}, samples=samples))
    fields["cases"] = cases
    if policy is not None:
        fields["policy"] = policy.info
        fields["case_hash_version"] = policy.hash_version
    return Results(**fields)


# ─── writing ──────────────────────────────────────────────────────────────────

_DUMP_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
_CASE_KEYS = tuple(sorted((*CaseResult.model_fields,)))
_SCALARS = (str, int, float, bool, type(None))


def _default(obj: Any) -> Any:
    # orjson calls this for what it cannot serialise itself. A model's ``__dict__`` holds
    # exactly its fields (extra keys are forbidden, private attributes live elsewhere).
    if isinstance(obj, BaseModel):
        return obj.__dict__
    if isinstance(obj, Mapping):
        return dict(obj)
    if isinstance(obj, set | frozenset):
        return sorted(obj, key=repr)
    if isinstance(obj, enum.Enum):
        return obj.value
    raise TypeError(f"not JSON-serialisable: {type(obj).__name__}")


def _compact(value: Any) -> str:
    return orjson.dumps(value, default=_default, option=_DUMP_OPTIONS).decode()


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.__dict__
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # a value of gate.model held as it is (declared once, there)
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return value
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, set | frozenset | enum.Enum):
        return _default(value)
    return value


def _layout(value: Any, depth: int, pad: str) -> str:
    """The layout of the module docstring for one value at ``depth`` (the root is 0): an
    object or array of scalars nested two or more levels deep on one line, everything
    else indented by two spaces, keys sorted."""
    value = _plain(value)
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        if depth >= 2 and all(isinstance(_plain(v), _SCALARS) for v in value.values()):
            return _compact(value)
        inner = pad + "  "
        items = sorted(value.items(), key=_key_of)
        body = ",\n".join(
            f"{inner}{_compact(str(k))}: {_layout(v, depth + 1, inner)}" for k, v in items
        )
        return "{\n" + body + "\n" + pad + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        if depth >= 2 and all(isinstance(_plain(v), _SCALARS) for v in value):
            return _compact(value)
        inner = pad + "  "
        body = ",\n".join(f"{inner}{_layout(v, depth + 1, inner)}" for v in value)
        return "[\n" + body + "\n" + pad + "]"
    return _compact(value)


def _key_of(item: tuple[Any, Any]) -> str:
    return str(item[0])


def dumps_results(results: BaseModel | Mapping[str, Any], *, indent: bool = True) -> bytes:
    """Canonical bytes of any part of a results file (the layout of the module docstring;
    compact with ``indent=False``); a whole :class:`Results` is :func:`results_bytes`."""
    if isinstance(results, Results):
        results = _present(results.__dict__)
    if not indent:
        return orjson.dumps(results, default=_default, option=_DUMP_OPTIONS)
    return (_layout(results, 0, "") + "\n").encode()


def _case_bytes(fields: Mapping[str, Any], samples: Sequence[bytes], lead: bytes = b"") -> bytes:
    """One case: a field a line (its samples a record a line), at the case's depth, after
    ``lead``; built in bytes and joined once (the sample records are never decoded)."""
    parts = [lead, b"{\n"]
    for key, head in _CASE_HEADS:
        parts.append(head)
        if key == "samples":
            if samples:
                parts += (b"[\n        ", b",\n        ".join(samples), b"\n      ]")
            else:
                parts.append(b"[]")
        else:
            # A case's other fields are scalars or arrays of scalars: one line each (what
            # _layout gives at this depth, without walking them).
            parts.append(orjson.dumps(fields[key], default=_default, option=_DUMP_OPTIONS))
        parts.append(b",\n")
    parts[-1] = b"\n    }"
    return b"".join(parts)


_CASE_HEADS = tuple((key, f'      "{key}": '.encode()) for key in _CASE_KEYS)
"""Each case key and the start of its line."""


_ABSENT_WHEN_NONE = frozenset({"missing", "run_error"})


def _present(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The top-level fields a results file holds: those of :data:`_ABSENT_WHEN_NONE` only
    when set (a valid run without missing samples has neither)."""
    return {k: v for k, v in fields.items() if not (k in _ABSENT_WHEN_NONE and v is None)}


def _document(
    outline: Mapping[str, Any], cases: Iterable[tuple[Mapping[str, Any], Sequence[bytes]]]
) -> Iterator[bytes]:
    """The bytes of a results file in pieces, a case at a time (the text is never whole).
    The keys of :data:`_ABSENT_WHEN_NONE` are left out when None (a valid run has none)."""
    outline = _present(outline)
    keys = sorted([*outline, "cases"])
    parts = ["{\n"]
    for i, key in enumerate(keys):
        end = ",\n" if i < len(keys) - 1 else "\n"
        if key != "cases":
            parts.append(f"  {_compact(key)}: {_layout(outline[key], 1, '  ')}{end}")
            continue
        yield "".join(parts).encode()
        parts = []
        first = True
        for case_fields, samples in cases:
            head = b'  "cases": [\n    ' if first else b",\n    "
            yield _case_bytes(case_fields, samples, head)
            first = False
        yield (b'  "cases": []' if first else b"\n  ]") + end.encode()
    yield ("".join(parts) + "}\n").encode()


def results_bytes(results: Results) -> bytes:
    """The whole file :func:`write_results` writes."""
    return b"".join(_results_chunks(results))


def _results_chunks(results: Results) -> Iterator[bytes]:
    names = results.metric_names
    outline = dict(results.__dict__)
    cases = outline.pop("cases")
    return _document(
        outline,
        ((c.__dict__, [result_record(s, names=names) for s in c.samples]) for c in cases),
    )


def write_results(path: Path, results: Results) -> None:
    """Write results.json (module docstring's layout), case by case, so the file's text
    is never in memory whole."""
    _write(path, _results_chunks(results))


def write_scored(
    path: Path,
    stats: m.SuiteStats,
    records: SampleRecords,
    *,
    verdict: m.Verdict | None = None,
    comparison: m.Comparison | None = None,
    judge: Mapping[str, Any] | None = None,
    notices: Sequence[str] = (),
    timing: Mapping[str, Any] | None = None,
    mcp_tool_drift: Sequence[ToolDrift] = (),
) -> None:
    """Write the results.json of a run from its statistics and its sample records, without
    building a :class:`Results` (the same bytes as ``write_results(path, assemble(…))``)."""
    outline = _outline(
        stats,
        verdict=verdict,
        comparison=comparison,
        judge=judge,
        notices=notices,
        timing=timing or {},
        mcp_tool_drift=mcp_tool_drift,
    )
    names = stats.metric_names
    fields = _cases_fields(stats.cases, names)
    cases = ((f, records.of_case(i)) for i, f in enumerate(fields))
    _write(path, _document(outline, cases))


def _write(path: Path, chunks: Iterable[bytes]) -> None:
    from gate.outdir import write_atomic

    write_atomic(path, chunks)


def to_jsonable(results: Results) -> dict[str, Any]:
    """A plain-dict copy of ``results`` (what results.json holds)."""
    data: dict[str, Any] = orjson.loads(results_bytes(results))
    return data


def decided(
    results: Results, verdict: m.Verdict, comparison: m.Comparison | None = None
) -> Results:
    """``results`` with a verdict (and the comparison it was decided on), the verdict's
    notices added to its own."""
    return results.model_copy(
        update={
            "verdict": verdict_json(verdict),
            "comparison": None if comparison is None else comparison_json(comparison),
            "notices": [*results.notices, *verdict.notices],
        }
    )


def with_comparison(results: Results, comparison: m.Comparison) -> Results:
    """``results`` with ``comparison`` in place of the one it had (``toolgate report
    --baseline``)."""
    return results.model_copy(update={"comparison": comparison_json(comparison)})


# ─── reading ──────────────────────────────────────────────────────────────────


def read_results(path: Path, *, display: str | None = None) -> Results:
    """Read and validate a results.json (ours, a baseline, a shard's; schema 1 or 2)."""
    name = display or str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ResultsFileError(
            Problem(name, None, None, f"cannot read: {exc.strerror or exc}")
        ) from None
    try:
        data = jsonio.loads_strict(raw, max_depth=128)
    except jsonio.JsonInputError as exc:
        raise ResultsFileError(Problem(name, None, None, _not_results(raw) or str(exc))) from None
    version = data.get("schema_version") if isinstance(data, dict) else None
    if isinstance(data, dict) and version not in (None, *READS):
        raise ResultsFileError(
            Problem(
                name,
                None,
                "schema_version",
                f"{version!r} is not supported (this ToolGate reads "
                f"{' and '.join(map(str, READS))})",
            )
        )
    if isinstance(data, dict) and (version == 1 or "schema_version" not in data):
        data = _from_schema1(data)
    try:
        table = data.get("stock_reasons") if isinstance(data, dict) else None
        results = Results.model_validate(
            data, context={"stock_reasons": table if isinstance(table, dict) else {}}
        )
        results.stock_reasons = dict(STOCK_REASONS)  # rewritten with this release's table
        return results
    except ValidationError as exc:
        problems = [
            Problem(name, None, ".".join(str(p) for p in e["loc"]) or None, e["msg"])
            for e in exc.errors(include_url=False)[:20]
        ]
        raise ResultsFileError(problems) from None


def _not_results(raw: bytes) -> str | None:
    """What a file that is not a results.json is, when it is recognisably another kind."""
    first = raw.split(b"\n", 1)[0]
    try:
        obj = jsonio.loads_strict(first)
    except jsonio.JsonInputError:
        return None
    if isinstance(obj, dict) and "case_id" in obj and "turns" in obj:
        return (
            "this is a runs file (one run per line, as toolgate run writes runs.jsonl), not a "
            "results.json: score it first (toolgate score --runs FILE), or give the "
            "results.json that toolgate check or score wrote"
        )
    if isinstance(obj, dict) and ("messages" in obj or "expected_tool_calls" in obj):
        return "this is a dataset (one case per line), not a results.json"
    return None


def _from_schema1(data: dict[str, Any]) -> dict[str, Any]:
    """A schema-1 document (the previous release's) in schema 2's shape: scores by name
    become arrays over ``metric_names`` (the registry's order, then any other name, sorted).
    Nothing else changes: reasons and evidence stay as the file has them."""
    out = dict(data)
    out["schema_version"] = SCHEMA_VERSION
    cases = data.get("cases")
    if not isinstance(cases, list):
        return out
    seen: set[str] = set()
    for c in cases:
        if isinstance(c, dict):
            for key in ("scores", "std"):
                if isinstance(c.get(key), dict):
                    seen.update(c[key])
            for s in c.get("samples") or []:
                if isinstance(s, dict) and isinstance(s.get("scores"), dict):
                    seen.update(s["scores"])
    names = [n for n in METRICS if n in seen] + sorted(seen.difference(METRICS))
    out["metric_names"] = names
    new_cases = []
    for c in cases:
        if not isinstance(c, dict):
            new_cases.append(c)
            continue
        c = dict(c)
        for key in ("scores", "std"):
            if isinstance(c.get(key), dict):
                c[key] = [c[key].get(n) for n in names]
        samples = []
        for s in c.get("samples") or []:
            if isinstance(s, dict) and isinstance(s.get("scores"), dict):
                s = {**s, "scores": [s["scores"].get(n) for n in names]}
            samples.append(s)
        if "samples" in c:
            c["samples"] = samples
        new_cases.append(c)
    out["cases"] = new_cases
    return out


def stats_of(results: Results) -> m.SuiteStats:
    """The typed statistics of a results file (a baseline to compare with, results to
    report on): what :func:`gate.baseline.diff.compare` and the confirmation stage read."""
    return m.SuiteStats(
        header=header_of(results),
        samples=results.samples,
        metric_names=tuple(results.metric_names),
        metrics={k: _metric_of(s) for k, s in results.metrics.items()},
        slices={
            name: m.SliceStats(
                cases=sl.cases,
                pass_rate=sl.pass_rate,
                metrics={k: _metric_of(s) for k, s in sl.metrics.items()},
            )
            for name, sl in results.slices.items()
        },
        cases=tuple(_case_of(results, c) for c in results.cases),
        per_tool={
            n: m.ToolRecall(
                expected=t.expected, matched=t.matched, recall=t.recall, called=t.called
            )
            for n, t in results.per_tool.items()
        },
        confusion=results.confusion,
        malformed=results.malformed,
        hard_failures=tuple(_hard_of(h) for h in results.hard_failures),
        usage=dict(results.usage),
        pass_hat=tuple(results.pass_hat),
        advisor=None,
        confirm=None
        if results.confirm is None
        else m.ConfirmStats(
            max_extra_samples=results.confirm.max_extra_samples,
            extra_samples=results.confirm.extra_samples,
            cases=dict(results.confirm.cases),
        ),
        notices=tuple(results.notices),
        timing=dict(results.timing),
    )


def header_of(results: Results) -> m.RunHeader:
    d = results.dataset
    return m.RunHeader(
        toolgate_version=results.toolgate_version,
        gate_name=results.gate_name,
        dataset=m.DatasetRef(
            path=d.path,
            version=d.version,
            sha256=d.sha256,
            cases=d.cases,
            total_cases=d.total_cases,
            cases_sha256=d.cases_sha256,
        ),
        agent=dict(results.agent),
        seed=results.seed,
        shard=None if results.shard is None else m.Shard(results.shard.index, results.shard.count),
        scoring_sha256=results.scoring_sha256,
        tools={
            n: m.ToolRef(hash=t.hash, description=t.description, parameters=t.parameters)
            for n, t in results.tools.items()
        },
    )


def _case_of(results: Results, c: CaseResult) -> m.CaseStats:
    tally: dict[str, int] = {}
    for s in c.samples:
        for check in s.failed_checks:
            tally[check] = tally.get(check, 0) + 1
    from gate.policy.validity import is_missing

    hard = {h.sample for h in results.hard_failures if h.case_id == c.id}
    initial = [
        s.passed
        for s in c.samples
        if not s.extra and not is_missing(s.error, (True,) if s.sample in hard else ())
    ]
    names = results.metric_names
    return m.CaseStats(
        id=c.id,
        line=c.line,
        difficulty=c.difficulty,
        tags=tuple(c.tags),
        expected_no_tool=c.expected_no_tool,
        must_not_call=tuple(c.must_not_call),
        tools=tuple(c.tools),
        passed=c.passed,
        pass_rate=c.pass_rate,
        flaky=c.flaky,
        samples=len(c.samples),
        extra_samples=c.extra_samples,
        scores=dict(zip(names, c.scores, strict=True)),
        std={n: v for n, v in zip(names, c.std, strict=False) if v is not None},
        failed_checks=tuple(n for n, _ in sorted(tally.items(), key=lambda kv: (-kv[1], kv[0]))),
        initial_pass_rate=sum(initial) / len(initial) if initial else 0.0,
        initial_samples=len(initial),
    )


# ─── merging shard results ────────────────────────────────────────────────────


def merge_part(name: str, results: Results, names: Sequence[str]) -> MergePart:
    """One shard's results, typed for :func:`gate.policy.merge.merge`; its sample records
    are written over ``names`` (every part's metric names, together)."""
    metas = tuple(
        CaseMeta(
            id=c.id,
            line=c.line,
            difficulty=c.difficulty,
            tags=tuple(c.tags),
            expected_no_tool=c.expected_no_tool,
            must_not_call=tuple(c.must_not_call),
            expect_tools=tuple(c.tools),
        )
        for c in results.cases
    )
    hard: dict[tuple[str, int], list[m.HardFailure]] = {}
    for h in results.hard_failures:
        hard.setdefault((h.case_id, h.sample), []).append(_hard_of(h))
    builder = RowsBuilder(names, metas)
    records: list[list[bytes]] = []
    own = results.metric_names
    for i, c in enumerate(results.cases):
        for s in c.samples:
            builder.add(
                i,
                s.sample,
                passed=s.passed,
                scores=dict(zip(own, s.scores, strict=True)),
                failed_checks=s.failed_checks,
                tallies=tallies_of(s.tallies),
                usage=usage_of(s.usage, s.usage_error),
                hard=hard.get((c.id, s.sample), ()),
                extra=s.extra,
                error=s.error,
            )
        ordered = sorted(c.samples, key=lambda s: (s.extra, s.sample))
        records.append([result_record(s, names=own, write=names) for s in ordered])
    flags = [[s.extra for s in c.samples] for c in results.cases]
    return MergePart(
        name=name,
        header=header_of(results),
        samples=results.samples,
        metas=metas,
        regular=tuple(len(f) - sum(f) for f in flags),
        extras_last=tuple(f == sorted(f) for f in flags),
        rows=builder.build(),
        records=records,
        max_extra=results.confirm.max_extra_samples if results.confirm else 0,
        judge=results.judge,
        notices=tuple(results.notices),
        timing=results.timing,
    )


@dataclasses.dataclass(frozen=True, slots=True)
class MergedRun:
    """Shard parts joined and reduced: the whole dataset's statistics and records, and
    the judge block and timing the parts bring (:func:`merge_run`)."""

    stats: m.SuiteStats
    records: SampleRecords
    judge: Mapping[str, Any] | None
    timing: Mapping[str, Any]


def merge_run(parts: Sequence[tuple[str, Results]]) -> MergedRun:
    """Merge ``(display name, results)`` shard parts (:mod:`gate.policy.merge` says what
    is refused) and reduce them as one run."""
    names = sample_metric_names({n for _, r in parts for n in r.metric_names})
    merged = merge([merge_part(name, r, names) for name, r in parts])
    stats = reduce(merged.table, merged.header, seed=merged.seed, max_extra=merged.max_extra)
    stats = dataclasses.replace(stats, notices=(*merged.notices, *stats.notices))
    return MergedRun(stats, ListRecords(merged.records), merged.judge, merged.timing)


def merge_results(parts: Sequence[tuple[str, Results]]) -> Results:
    """The merged results of shard parts, without a verdict."""
    run = merge_run(parts)
    return assemble(run.stats, run.records, judge=run.judge, timing=run.timing)


class ListRecords:
    """:class:`SampleRecords` already in the reduction's order, per case."""

    def __init__(self, by_case: Sequence[Sequence[bytes]]) -> None:
        self._by_case = by_case

    def of_case(self, case: int) -> Sequence[bytes]:
        return self._by_case[case]


def json_schema() -> dict[str, Any]:
    """The JSON Schema of results.json (``gate/schemas/results.schema.json``)."""
    return Results.model_json_schema()


if __name__ == "__main__":  # python -m gate.results > gate/schemas/results.schema.json
    import sys

    sys.stdout.write(jsonio.dumps(json_schema(), indent=True).decode())
