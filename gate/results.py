"""results.json: the versioned file every reporter renders from (DESIGN §9).

The pydantic models here *are* the schema (``gate/schemas/results.schema.json`` is
generated from them and checked in tests). Writing builds plain dicts for speed on large
runs; reading — our own results for ``report``/``merge``, or a baseline — validates with
these models so that a malformed or foreign file is a clear input error.

Everything in a results file is deterministic for the same inputs and seed, except what
lives under ``timing`` (wall times, latencies, dates): reproducibility tests compare the
files with ``timing`` removed.

Building and writing are on the hot path of ``toolgate score`` (100,000 case-samples):
validating every sample record with pydantic costs seconds, so ``gate.policy.reduce``
builds the per-case and per-sample records with :func:`construct` (no validation: the
data was built by our own code from validated inputs) and :func:`write_results`
serialises the models' fields directly with orjson. The bytes are the same as
``model_dump(mode="json")`` would give, sorted.

Compatibility: ``schema_version`` changes only when a field is removed or changes meaning;
new optional fields keep the version.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gate import jsonio
from gate.errors import Problem, ResultsFileError

SCHEMA_VERSION: Literal[1] = 1


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


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
    sample: int
    passed: bool
    scores: dict[str, int | float | None]
    """As the scorers gave them (an int stays an int when read back); ``None`` = n/a."""
    failed_checks: list[str] = Field(default_factory=list)
    reasons: dict[str, str] = Field(default_factory=dict)
    evidence: dict[str, Any] = Field(default_factory=dict)
    tallies: dict[str, Any] = Field(default_factory=dict)
    """The scorer's raw counts for this sample (calls, calls on no-tool cases, per-tool
    expected/matched/called, confusion pairs, malformed calls): kept so that shard
    results can be merged and re-pooled without re-running anything."""
    error: str | None = None
    usage: dict[str, int | float] | None = None
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
    """True when every sample passed (pass rate 1.0); see ``pass_rate`` and ``flaky``."""
    pass_rate: float
    """Passed samples ÷ samples run (confirmation samples included)."""
    flaky: bool
    """0 < pass rate < 1."""
    scores: dict[str, float | None]
    """Per metric, the mean over the samples where it applied (``None``: n/a in all)."""
    std: dict[str, float] = Field(default_factory=dict)
    """Per metric, the sample standard deviation over samples (ddof=1); only metrics
    with a value in at least 2 samples appear."""
    extra_samples: int = 0
    """How many of ``samples`` were added by adaptive confirmation."""
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
    op: Literal["min", "max"]
    threshold: float
    value: float | None
    passed: bool
    reason: str
    failing_cases: list[str] = Field(default_factory=list)
    """Cases whose own mean is on the wrong side of the threshold, worst first."""
    no_data: bool = False
    """True when the metric is n/a everywhere (or the slice is empty): such a gate fails."""


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
    """A case whose outcome changed between base and head (see ``gate.baseline.diff``)."""

    case_id: str
    kind: Literal["regression", "fix", "noise", "new", "removed"]
    base_pass_rate: float | None
    head_pass_rate: float | None
    base_samples: int = 0
    head_samples: int = 0
    head_extra_samples: int = 0
    """Confirmation samples included in ``head_samples``."""
    failed_checks: list[str] = Field(default_factory=list)
    """Checks that failed in head samples (regression, noise) or in base samples (fix)."""
    tools: list[str] = Field(default_factory=list)
    """Tools the case involves (expected, must-not-call or called)."""
    drifted_tools: list[str] = Field(default_factory=list)
    """Those of ``tools`` whose definition changed between base and head."""
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
    server: str | None = None
    """In ``Results.mcp_tool_drift``: the MCP server advertising the tool (None: removed,
    no server advertises it)."""


class Comparison(_M):
    source: str
    """Where the baseline came from, in words (a file, an artifact of run N, …)."""
    comparable: bool
    note: str | None = None
    rule: str = ""
    """The flip rule as it applies to these sample counts, in words."""
    base_dataset_sha256: str | None = None
    base_samples: int = 0
    regressions: int = 0
    fixes: int = 0
    noise: int = 0
    metrics: dict[str, MetricDelta] = Field(default_factory=dict)
    slice_metrics: dict[str, dict[str, MetricDelta]] = Field(default_factory=dict)
    """Per slice (``key=value``) either run has: metric → base, head and delta (what a
    gate on a slice is compared with)."""
    flips: list[Flip] = Field(default_factory=list)
    """Regressions first, then fixes, noise, new and removed; dataset order within each."""
    tool_drift: list[ToolDrift] = Field(default_factory=list)
    base_usage: dict[str, float] = Field(default_factory=dict)


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
    usage: dict[str, int | float] = Field(default_factory=dict)
    """Token usage totals and per-case means (deterministic for a replayed run)."""
    verdict: Verdict | None = None
    comparison: Comparison | None = None
    advisor: Advisor | None = None
    confirm: ConfirmInfo | None = None
    judge: dict[str, Any] | None = None
    mcp_tool_drift: list[ToolDrift] = Field(default_factory=list)
    """The pinned tool definitions against what ``agent.servers`` advertise now (pinned →
    advertised; ``gate.interop.mcp_tools``): reported with the tool drift, never gating."""
    notices: list[str] = Field(default_factory=list)
    timing: dict[str, Any] = Field(default_factory=dict)
    """Wall times, latencies and dates: the only part that differs between identical runs."""


def read_results(path: Path, *, display: str | None = None) -> Results:
    """Read and validate a results.json (ours or a baseline)."""
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
        raise ResultsFileError(Problem(name, None, None, str(exc))) from None
    if isinstance(data, dict) and data.get("schema_version") not in (None, SCHEMA_VERSION):
        raise ResultsFileError(
            Problem(
                name,
                None,
                "schema_version",
                f"{data.get('schema_version')!r} is not supported "
                f"(this ToolGate reads {SCHEMA_VERSION})",
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
    """Write results.json canonically (sorted keys, 2-space indent), byte for byte what
    :func:`dumps_results` gives — but case by case, so the file's text is never in memory
    whole (614 MB for 100,000 case-samples)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("wb") as fh:
        for chunk in _results_chunks(results):
            fh.write(chunk)
    tmp.replace(path)


_CASES_PLACEHOLDER = "\x00toolgate-cases\x00"
"""Stands in for the cases array in the document's outline (which is written whole
instead, should any string of the outline hold it too)."""


def _results_chunks(results: Results | dict[str, Any]) -> Iterator[bytes]:
    """The bytes of :func:`dumps_results` in pieces: the outline with the cases array
    left out, then each case (indented to its depth), then the rest of the outline."""
    fields = dict(results.__dict__ if isinstance(results, BaseModel) else results)
    cases = fields.get("cases")
    if not isinstance(cases, list) or not cases:
        yield dumps_results(results)
        return
    fields["cases"] = [_CASES_PLACEHOLDER]
    outline = dumps_results(fields)
    marker = orjson.dumps(_CASES_PLACEHOLDER)
    if outline.count(marker) != 1:  # a string that holds the marker: do it whole
        yield dumps_results(results)
        return
    head, _, tail = outline.partition(marker)
    yield head  # ends with '"cases": [' and the newline and indent of its first element
    option = _DUMP_OPTIONS | orjson.OPT_INDENT_2
    for i, case in enumerate(cases):
        text = orjson.dumps(case, default=_default, option=option)
        yield (b",\n    " if i else b"") + text.replace(b"\n", b"\n    ")
    yield tail


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
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    raise TypeError(f"not JSON-serialisable: {type(obj).__name__}")


_DUMP_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def dumps_results(results: BaseModel | dict[str, Any], *, indent: bool = True) -> bytes:
    """Canonical bytes of a results file — or of any of its parts — the same as
    ``model_dump(mode="json")`` would give, sorted, fast."""
    option = _DUMP_OPTIONS | (orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE if indent else 0)
    return orjson.dumps(results, default=_default, option=option)


def to_jsonable(results: Results) -> dict[str, Any]:
    """A plain-dict copy of ``results`` (what results.json holds)."""
    data: dict[str, Any] = orjson.loads(dumps_results(results, indent=False))
    return data


_T = TypeVar("_T", bound=BaseModel)


def construct(cls: type[_T], fields: dict[str, Any]) -> _T:
    """Build a model from ``fields`` without validation (trusted, internally built data).

    ``fields`` should hold every field of ``cls`` (missing ones are filled from their
    defaults); nested models must already be model instances. About 10× cheaper than
    ``model_construct``, which matters for the hundreds of thousands of sample records
    of a large run. ``fields`` becomes the model's ``__dict__`` (not copied).
    """
    spec = _SPECS.get(cls)
    if spec is None:
        spec = _SPECS[cls] = (
            frozenset(cls.model_fields),
            {n: i for n, i in cls.model_fields.items() if not i.is_required()},
        )
    names, defaults = spec
    if len(fields) != len(names) or fields.keys() != names:
        for name, info in defaults.items():
            if name not in fields:
                fields[name] = info.get_default(call_default_factory=True)
    obj = cls.__new__(cls)
    _set_attr(obj, "__dict__", fields)
    _SET_FIELDS(obj, set(names))
    _SET_EXTRA(obj, None)
    _SET_PRIVATE(obj, None)
    return obj


_set_attr = object.__setattr__
_SET_FIELDS = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_SET_EXTRA = BaseModel.__dict__["__pydantic_extra__"].__set__
_SET_PRIVATE = BaseModel.__dict__["__pydantic_private__"].__set__
_SPECS: dict[type[BaseModel], tuple[frozenset[str], dict[str, Any]]] = {}


def json_schema() -> dict[str, Any]:
    """The JSON Schema of results.json (``gate/schemas/results.schema.json``)."""
    return Results.model_json_schema()


if __name__ == "__main__":  # python -m gate.results > gate/schemas/results.schema.json
    import sys

    sys.stdout.write(jsonio.dumps(json_schema(), indent=True).decode())
