"""The schema of results.json: :class:`Results` and the parts only the file has.

Everything a run computes is written as :mod:`gate.model` declares it — the statistics
(:class:`~gate.model.MetricStats`, :class:`~gate.model.SliceStats`,
:class:`~gate.model.ToolRecall`), the header (:class:`~gate.model.DatasetRef`,
:class:`~gate.model.ToolRef`, :class:`~gate.model.Shard`), the comparison and the verdict:
pydantic validates those dataclasses as they are, so a field is declared once, there.
The classes here hold what only the file has: the per-case and per-sample records, the
policy block, the missing samples and the run error. ``gate/schemas/results.schema.json``
is generated from :class:`Results` (``python -m gate.results``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_serializer,
    model_validator,
)

from gate import model as m

SCHEMA_VERSION: Literal[2] = 2

STOCK_REASONS: dict[str, str] = {
    "batching": "n/a: the expected calls are not written in batches",
    "free_text_similarity": "n/a: no free-text argument compared",
    "no_tool_respected": "n/a: the case expects tool calls",
    "recovery_rate": "n/a: no tool error to recover from",
    "step_budget_exceeded": "n/a: no step budget",
    "extra_writes": "n/a: the case is judged by its calls (pass_on: calls)",
    "missing_writes": "n/a: the case is judged by its calls (pass_on: calls)",
    "write_precision": "n/a: the case is judged by its calls (pass_on: calls)",
    "write_recall": "n/a: the case is judged by its calls (pass_on: calls)",
}
"""Reasons a sample record names instead of writing out (``reasons_stock``): each file
carries this table (``stock_reasons``), and the reader fills them in from the file's own
table, so an entry may change without older files changing meaning."""
READS: tuple[int, ...] = (1, 2)
"""The schema versions :func:`gate.results.read_results` reads (1: the previous release's)."""


class _M(BaseModel):
    # defer_build: a model's validator is built when it first validates; writing a scored
    # run builds the few of its header, not the 29 every import would.
    model_config = ConfigDict(extra="forbid", defer_build=True)


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
    """Why the usage the agent reported could not be used (``gate.model.usage``: negative, out
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
    test: m.CaseTest | None = None
    """The case's test against the base history (absent without one)."""
    samples: list[SampleResult]

    @field_serializer("samples", mode="wrap")
    def _samples_out(self, samples: Any, handler: SerializerFunctionWrapHandler) -> Any:
        # a case of gate.results.open_results holds a view over the file: dumped as a list
        return handler(samples if isinstance(samples, list) else list(samples))


class HardFailureResult(_M):
    """A failure that fails the gate whatever the averages; ``line`` is the case's line
    in the dataset (``Results.dataset.path``)."""

    kind: str
    case_id: str
    sample: int
    call: dict[str, Any]
    message: str
    line: int | None = None


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
    flakiness: m.FlakinessInfo
    spend: SpendInfo
    detect: list[str] = Field(default_factory=list)
    """What this run could detect and what it spent, in words."""
    history: HistoryInfo | None = None
    base_run: bool = False
    """This run was a base-branch run (it seeded the histories up to ``min_history``)."""
    recorded: bool = False
    """The runs were recorded elsewhere (a ``replay`` agent): no sample can be added, so
    a history comes from the base branch's recorded runs, not from a base run."""
    bill: m.RunBill | None = None
    """What the run said it would spend before it started (``toolgate check``)."""


class Results(_M):
    # The values of gate.model it holds are validated as they come (a list given for a
    # tuple, a name for an enum), as the file's own fields are.
    model_config = ConfigDict(extra="forbid", defer_build=True, revalidate_instances="always")

    schema_version: Literal[2] = SCHEMA_VERSION
    toolgate_version: str
    gate_name: str
    dataset: m.DatasetRef
    agent: dict[str, Any]
    samples: int
    seed: int
    case_hash_version: int = 1
    """What the cases' ``hash`` covers: 2 — the case and the scoring; 1 (files of the
    previous release) — also the tools' definitions and the agent identity."""
    scoring_sha256: str | None = None
    """The hash of the scoring settings the run was scored with (``scoring``,
    ``dataset.normalize``); None when scored without a config or by an older release."""
    shard: m.Shard | None = None
    tools: dict[str, m.ToolRef] = Field(default_factory=dict)
    metric_names: list[str] = Field(default_factory=list)
    """The order of every per-case and per-sample ``scores`` array (and per-case ``std``)."""
    metrics: dict[str, m.MetricStats]
    slices: dict[str, m.SliceStats] = Field(default_factory=dict)
    per_tool: dict[str, m.ToolRecall] = Field(default_factory=dict)
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
    verdict: m.Verdict | None = None
    comparison: m.Comparison | None = None
    advisor: m.Advice | None = None
    confirm: m.ConfirmStats | None = None
    policy: PolicyInfo | None = None
    judge: dict[str, Any] | None = None
    mcp_tool_drift: list[m.ToolDrift] = Field(default_factory=list)
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
            wrong = wrong_arity(i, c, k)
            if wrong is not None:
                raise ValueError(wrong)
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


def wrong_arity(i: int, case: CaseResult, k: int) -> str | None:
    """What is wrong with case ``i`` whose scores or std do not have ``k`` entries (one
    per ``metric_names``); ``None`` when they do."""
    if len(case.scores) != k or (case.std and len(case.std) != k):
        return (
            f"cases[{i}] ({case.id!r}): its scores and std must have one entry per "
            f"metric_names ({k})"
        )
    return None


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


def json_schema() -> dict[str, Any]:
    """The JSON Schema of results.json (``gate/schemas/results.schema.json``)."""
    return Results.model_json_schema()
