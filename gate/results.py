"""results.json: the versioned file every reporter renders from (DESIGN §9).

The pydantic models here *are* the schema (``gate/schemas/results.schema.json`` is
generated from them and checked in tests). Writing builds plain dicts for speed on large
runs; reading — our own results for ``report``/``merge``, or a baseline — validates with
these models so that a malformed or foreign file is a clear input error.

Everything in a results file is deterministic for the same inputs and seed, except what
lives under ``timing`` (wall times, latencies, dates): reproducibility tests compare the
files with ``timing`` removed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gate import jsonio
from gate.errors import Problem, ResultsFileError

SCHEMA_VERSION = 1


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MetricStat(_M):
    """A metric over the dataset (or a slice): the mean over cases of per-case means;
    ``std`` is the standard deviation over samples of the dataset-level value; ``n`` the
    number of cases it applied to (n/a cases left out); ``ci_low``/``ci_high`` a seeded
    bootstrap 95% interval when samples > 1 or cases > 1."""

    mean: float | None
    std: float | None = None
    n: int = 0
    ci_low: float | None = None
    ci_high: float | None = None


class SampleResult(_M):
    sample: int
    passed: bool
    scores: dict[str, float | None]
    failed_checks: list[str] = Field(default_factory=list)
    reasons: dict[str, str] = Field(default_factory=dict)
    evidence: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    usage: dict[str, int] | None = None
    extra: bool = False
    """True for a sample added by adaptive confirmation (``confirm:``)."""


class CaseResult(_M):
    id: str
    line: int | None = None
    difficulty: str | None = None
    tags: list[str] = Field(default_factory=list)
    expected_no_tool: bool = False
    must_not_call: list[str] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)
    """Names of the tools the case's expectations involve (for drift attribution)."""
    passed: bool
    pass_rate: float
    flaky: bool
    scores: dict[str, MetricStat]
    samples: list[SampleResult]


class HardFailureResult(_M):
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


class ShardInfo(_M):
    index: int
    count: int


class GateResult(_M):
    metric: str
    slice: str | None = None
    op: Literal["min", "max"]
    threshold: float
    value: float | None
    passed: bool
    reason: str
    failing_cases: list[str] = Field(default_factory=list)


class VarianceResult(_M):
    max_std: float | None = None
    observed_max_std: float | None = None
    worst_metric: str | None = None
    max_flaky_share: float | None = None
    flaky_share: float = 0.0
    flaky_cases: list[str] = Field(default_factory=list)
    passed: bool = True
    reasons: list[str] = Field(default_factory=list)


class Verdict(_M):
    passed: bool
    summary: str
    """One line: the verdict and why."""
    reasons: list[str] = Field(default_factory=list)
    gates: list[GateResult] = Field(default_factory=list)
    variance: VarianceResult = Field(default_factory=VarianceResult)
    hard_failures: int = 0
    regressions: int = 0


class Flip(_M):
    case_id: str
    kind: Literal["regression", "fix", "noise", "new", "removed"]
    base_pass_rate: float | None
    head_pass_rate: float | None
    base_samples: int = 0
    head_samples: int = 0
    failed_checks: list[str] = Field(default_factory=list)
    line: int | None = None
    reason: str = ""


class MetricDelta(_M):
    base: float | None
    head: float | None
    delta: float | None


class ToolDrift(_M):
    tool: str
    change: Literal["added", "removed", "changed"]
    diff: list[str] = Field(default_factory=list)
    flipped_cases: list[str] = Field(default_factory=list)


class Comparison(_M):
    source: str
    """Where the baseline came from, in words (a file, an artifact of run N, …)."""
    comparable: bool
    note: str | None = None
    base_dataset_sha256: str | None = None
    metrics: dict[str, MetricDelta] = Field(default_factory=dict)
    flips: list[Flip] = Field(default_factory=list)
    tool_drift: list[ToolDrift] = Field(default_factory=list)
    base_usage: dict[str, float] = Field(default_factory=dict)


class Results(_M):
    schema_version: Literal[1] = SCHEMA_VERSION
    toolgate_version: str
    gate_name: str
    dataset: DatasetInfo
    agent: dict[str, Any]
    samples: int
    seed: int
    shard: ShardInfo | None = None
    tools: dict[str, ToolInfo] = Field(default_factory=dict)
    metrics: dict[str, MetricStat]
    slices: dict[str, SliceResult] = Field(default_factory=dict)
    per_tool: dict[str, ToolRollup] = Field(default_factory=dict)
    confusion: dict[str, dict[str, int]] = Field(default_factory=dict)
    malformed: dict[str, int] = Field(default_factory=dict)
    hard_failures: list[HardFailureResult] = Field(default_factory=list)
    cases: list[CaseResult]
    usage: dict[str, float] = Field(default_factory=dict)
    """Token usage totals and per-case means (deterministic for a replayed run)."""
    verdict: Verdict | None = None
    comparison: Comparison | None = None
    advisor: dict[str, Any] | None = None
    confirm: dict[str, Any] | None = None
    judge: dict[str, Any] | None = None
    notices: list[str] = Field(default_factory=list)
    timing: dict[str, Any] = Field(default_factory=dict)
    """Wall times, latencies and dates: the only part that differs between identical runs."""


def read_results(path: Path, *, display: str | None = None) -> Results:
    """Read and validate a results.json (ours or a baseline)."""
    name = display or str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ResultsFileError(Problem(name, None, None, f"cannot read: {exc.strerror or exc}")) from None
    try:
        data = jsonio.loads_strict(raw, max_depth=128)
    except jsonio.JsonInputError as exc:
        raise ResultsFileError(Problem(name, None, None, str(exc))) from None
    if isinstance(data, dict) and data.get("schema_version") not in (None, SCHEMA_VERSION):
        raise ResultsFileError(
            Problem(
                name,
                None,
                "schema_version",
                f"{data.get('schema_version')!r} is not supported (this ToolGate reads {SCHEMA_VERSION})",
            )
        )
    try:
        return Results.model_validate(data)
    except ValidationError as exc:
        problems = [
            Problem(name, None, ".".join(str(p) for p in e["loc"]) or None, e["msg"])
            for e in exc.errors(include_url=False)[:20]
        ]
        raise ResultsFileError(problems) from None


def write_results(path: Path, results: Results | dict[str, Any]) -> None:
    """Write results.json canonically (sorted keys, 2-space indent)."""
    data = results.model_dump(mode="json") if isinstance(results, Results) else results
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_bytes(jsonio.dumps(data, indent=True))
    tmp.replace(path)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of results.json (``gate/schemas/results.schema.json``)."""
    return Results.model_json_schema()
