"""The data model: one file, read top to bottom.

Inside ToolGate everything is a frozen, slotted dataclass: cheap to build on the hot path
(100,000 case-samples are scored per run) and impossible to mutate by accident. The
boundaries — the dataset (``gate.dataset``), the config (``gate.config``), runs.jsonl
(``gate.runsfile``) and results.json (``gate.results``) — validate their input with
pydantic or by hand and convert it into these types; nothing passes raw dicts inward.

Vocabulary (DESIGN §3–§6):

* a **case** is one dataset row: the user turn, the tools the model saw, what it should
  (and must not) call, and the frozen tool responses;
* a **run** is what the agent did for one case in one **sample** (a case runs ``samples``
  times); its **turns** hold the calls of one assistant message — a parallel batch;
* a **sample score** is every scorer's verdict on one run; the statistics layer reduces
  sample scores over samples and cases.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gate.jsonio import canonical

JsonValue = Any
"""A decoded JSON value (dict / list / str / int / float / bool / None)."""


# ─── closed sets ──────────────────────────────────────────────────────────────


class OrderMode(enum.StrEnum):
    """How a case's actual calls are compared with its expected calls as a trajectory.

    With actual calls A and expected calls E matched one to one:

    * ``strict`` — the same calls in the same sequence; calls inside one assistant turn
      (a parallel batch) are compared as a set, never as a sequence;
    * ``unordered`` — the same multiset: nothing missing, nothing extra (the default);
    * ``subset`` — every actual call is expected (A ⊆ E): the agent did nothing outside
      the reference, though it may have stopped short;
    * ``superset`` — every expected call was made (A ⊇ E): extra calls are allowed.
    """

    UNORDERED = "unordered"
    STRICT = "strict"
    SUBSET = "subset"
    SUPERSET = "superset"


class Difficulty(enum.StrEnum):
    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"


class MatcherKind(enum.StrEnum):
    """The argument matchers of DESIGN §3. ``equal`` is a plain expected value."""

    EQUAL = "equal"
    IN = "$in"
    REGEX = "$regex"
    APPROX = "$approx"
    ABSENT = "$absent"
    ANY = "$any"


class Risk(enum.StrEnum):
    """Risk level of a tool, set in the config; weights unexpected calls."""

    READ = "read"
    WRITE = "write"
    IRREVERSIBLE = "irreversible"


class MalformedKind(enum.StrEnum):
    """Why a call is structurally broken (the classes seed 004 names)."""

    INVALID_JSON = "InvalidJson"
    UNKNOWN_NAME = "UnknownName"
    SCHEMA_MISMATCH = "SchemaMismatch"


class HardFailureKind(enum.StrEnum):
    """Failures that fail the whole gate whatever the averages."""

    MUST_NOT_CALL = "must_not_call"
    ARG_SCOPE = "arg_scope"
    REQUIRED_BEFORE = "required_before"


# ─── the dataset ──────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class SourceRef:
    """Where something was read from: a file and its 1-based line (CSV: the row's line)."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class ArgMatcher:
    """One expected argument value.

    * ``equal``: ``value`` equals the actual value after normalisation;
    * ``$in``: the actual value equals one of ``options`` (BFCL's possible answers);
    * ``$regex``: ``pattern`` matches the whole actual string (``re.fullmatch``, bounded);
    * ``$approx``: ``|actual - value| <= tol``;
    * ``$absent``: the argument must not be present;
    * ``$any``: the argument is present, with any value.
    """

    kind: MatcherKind
    value: JsonValue = None
    options: tuple[JsonValue, ...] = ()
    pattern: str | None = None
    tol: float = 0.0

    def to_json(self) -> JsonValue:
        """Back to the dataset's syntax (for evidence and reports)."""
        match self.kind:
            case MatcherKind.EQUAL:
                return self.value
            case MatcherKind.IN:
                return {"$in": list(self.options)}
            case MatcherKind.REGEX:
                return {"$regex": self.pattern}
            case MatcherKind.APPROX:
                return {"$approx": self.value, "tol": self.tol}
            case MatcherKind.ABSENT:
                return {"$absent": True}
            case MatcherKind.ANY:
                return {"$any": True}


@dataclass(frozen=True, slots=True)
class ExpectedCall:
    """A call the agent should make.

    ``required_args_only`` (default true): the expected args must be a subset of the
    actual args and extra actual args are allowed; false: the actual args must be exactly
    the expected set (``$absent`` keys excluded).
    """

    name: str
    args: Mapping[str, ArgMatcher] = field(default_factory=dict)
    required_args_only: bool = True

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {
            "name": self.name,
            "args": {k: m.to_json() for k, m in self.args.items()},
        }
        if not self.required_args_only:
            out["required_args_only"] = False
        return out


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool the model saw: its name, description and JSON Schema for the arguments."""

    name: str
    description: str = ""
    parameters: Mapping[str, JsonValue] = field(default_factory=dict)

    def definition(self) -> dict[str, JsonValue]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    def definition_hash(self) -> str:
        """sha256 of the canonical definition: any change to name, description or schema
        changes it (tool-definition drift, issue 6)."""
        return hashlib.sha256(canonical(self.definition()).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class FrozenResponse:
    """A recorded tool response. ``args is None`` answers any arguments of that tool (a
    per-tool default). A response with ``error`` set is delivered to the agent as an error
    (HTTP-500 style); ``response`` may be an empty result."""

    name: str
    args: Mapping[str, ArgMatcher] | None = None
    response: JsonValue = None
    error: JsonValue = None

    @property
    def is_error(self) -> bool:
        return self.error is not None


@dataclass(frozen=True, slots=True)
class Case:
    """One dataset row (DESIGN §3), validated."""

    id: str
    user_input: str
    source: SourceRef
    message_history: tuple[Mapping[str, JsonValue], ...] = ()
    available_tools: tuple[ToolSpec, ...] = ()
    expected_tool_calls: tuple[ExpectedCall, ...] = ()
    expected_no_tool: bool = False
    acceptable_alternatives: tuple[tuple[ExpectedCall, ...], ...] = ()
    must_not_call: tuple[str, ...] = ()
    difficulty: Difficulty | None = None
    order: OrderMode = OrderMode.UNORDERED
    tool_responses: tuple[FrozenResponse, ...] = ()
    step_budget: int | None = None
    tags: tuple[str, ...] = ()
    source_trace_id: str | None = None
    notes: str | None = None

    def tool(self, name: str) -> ToolSpec | None:
        for spec in self.available_tools:
            if spec.name == name:
                return spec
        return None

    def expectation_lists(self) -> tuple[tuple[ExpectedCall, ...], ...]:
        """The canonical expected list first, then every acceptable alternative; a case
        passes when its calls match any one of them."""
        return (self.expected_tool_calls, *self.acceptable_alternatives)


# ─── what the agent did ───────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call the model made. ``parse_ok`` is false (and ``arguments`` None) when the
    arguments the model sent could not be decoded to a JSON object; ``raw_arguments``
    keeps the string the model sent, when it sent one."""

    name: str
    arguments: Mapping[str, JsonValue] | None
    id: str | None = None
    raw_arguments: str | None = None
    parse_ok: bool = True

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {"name": self.name, "arguments": self.arguments}
        if self.id is not None:
            out["id"] = self.id
        if self.raw_arguments is not None:
            out["raw_arguments"] = self.raw_arguments
        out["parse_ok"] = self.parse_ok
        return out


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What the runner answered to one call (from the frozen responses)."""

    id: str | None
    content: JsonValue
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class Turn:
    """One assistant message: its calls form a parallel batch (scored as a set)."""

    calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    content: str | None = None


@dataclass(frozen=True, slots=True)
class Run:
    """The agent's work on one case in one sample (one line of runs.jsonl).

    ``error`` is set when the agent failed (crash, timeout, bad protocol output, step
    budget exhausted by the runner): the run is still scored — as a failed sample —
    never dropped.
    """

    case_id: str
    sample: int
    turns: tuple[Turn, ...] = ()
    final: str | None = None
    error: str | None = None
    latency_ms: float | None = None
    usage: Mapping[str, int] | None = None
    meta: Mapping[str, JsonValue] | None = None

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        """Every call, in turn order."""
        return tuple(c for t in self.turns for c in t.calls)

    @property
    def batches(self) -> tuple[tuple[ToolCall, ...], ...]:
        """The calls grouped by turn (empty turns left out)."""
        return tuple(t.calls for t in self.turns if t.calls)


# ─── scores ───────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class HardFailure:
    """A failure that fails the gate whatever the averages: a must-not-call violation,
    an argument-scope rule broken, a required preceding step missing before a risky tool."""

    kind: HardFailureKind
    case_id: str
    sample: int
    call: Mapping[str, JsonValue]
    message: str


@dataclass(frozen=True, slots=True)
class SampleScore:
    """Every deterministic scorer's verdict on one run (one case × sample).

    * ``scores``: metric name → value; ``None`` means not applicable ("n/a", left out of
      means), e.g. ``call_accuracy`` on a no-tool case. Rates are in [0, 1]; counts ≥ 0.
    * ``passed`` / ``failed_checks``: the case-pass rule of DESIGN §6 and the names of
      the checks that failed it (empty when passed).
    * ``reasons``: metric name → one plain-language sentence.
    * ``evidence``: JSON-able detail the reports render without recomputing (expected
      and actual calls, the matching, missing and extra calls, argument differences,
      malformed calls with their class, violations).
    * ``tallies``: raw counts the dataset level pools (calls made, calls on no-tool
      cases, per-tool expected/matched, confusion pairs).
    """

    case_id: str
    sample: int
    passed: bool
    scores: Mapping[str, float | None]
    failed_checks: tuple[str, ...] = ()
    reasons: Mapping[str, str] = field(default_factory=dict)
    evidence: Mapping[str, JsonValue] = field(default_factory=dict)
    tallies: Mapping[str, JsonValue] = field(default_factory=dict)
    hard_failures: tuple[HardFailure, ...] = ()
    error: str | None = None
    latency_ms: float | None = None
    usage: Mapping[str, int] | None = None


# ─── metric names (the contract between scorers, policy, config and reports) ──

METRICS: tuple[str, ...] = (
    "tool_selection_precision",
    "tool_selection_recall",
    "tool_selection_f1",
    "tool_set_iou",
    "call_accuracy",
    "partial_credit_accuracy",
    "schema_validity",
    "parse_failure_rate",
    "required_args_match",
    "order_score",
    "trajectory_match",
    "name_sequence_similarity",
    "unnecessary_call_rate",
    "no_tool_respected",
    "must_not_call_violations",
    "step_budget_exceeded",
    "duplicate_calls",
    "repeated_failing_calls",
    "required_step_missing",
    "tool_error_rate",
    "malformed_call_rate",
    "execution_failure_rate",
    "recovery_rate",
    "composite_clean_rate",
    "risk_weighted_precision",
    "free_text_similarity",
    "case_passed",
)
"""Every deterministic metric, by its name in results.json; all may be gated."""

POOLED_METRICS: frozenset[str] = frozenset({"unnecessary_call_rate"})
"""Metrics computed over the whole dataset (a ratio of sums), never as a mean of cases."""

LOWER_IS_BETTER: frozenset[str] = frozenset(
    {
        "parse_failure_rate",
        "unnecessary_call_rate",
        "must_not_call_violations",
        "step_budget_exceeded",
        "duplicate_calls",
        "repeated_failing_calls",
        "required_step_missing",
        "tool_error_rate",
        "malformed_call_rate",
        "execution_failure_rate",
    }
)
"""Metrics where a rise is a regression (arrows and deltas in reports use this)."""

JUDGE_METRIC_PREFIX = "judge."
"""Judge scores are named ``judge.<rubric>``; they are reported and can never be gated."""
