"""The data model: one package, read top to bottom (this file, then :mod:`gate.model.verdict`).

Inside ToolGate everything is an immutable, slotted dataclass (:func:`value`): cheap to
build on the hot path (100,000 case-samples are scored per run) and impossible to mutate
by accident — mypy refuses any assignment to a field. The boundaries — the dataset
(``gate.dataset``), the config (``gate.config``), runs.jsonl (``gate.runsfile``) and
results.json (``gate.results``) — validate their input with pydantic or by hand and convert
it into these types; nothing passes raw dicts inward.

Vocabulary (docs/dataset.md, docs/scoring.md):

* a **case** is one dataset row: the user turn, the tools the model saw, what it should
  (and must not) call, and the frozen tool responses;
* a **run** is what the agent did for one case in one **sample** (a case runs ``samples``
  times); its **turns** hold the calls of one assistant message — a parallel batch;
* a **sample score** is every scorer's verdict on one run; the statistics layer reduces
  sample scores over samples and cases.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar, dataclass_transform

from gate.errors import ErrorClass, UsageError, error_class_of
from gate.jsonio import canonical

JsonValue = Any
"""A decoded JSON value (dict / list / str / int / float / bool / None)."""

_T = TypeVar("_T")


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def value(cls: type[_T]) -> type[_T]:
    """An immutable value type: a slotted dataclass whose fields mypy (strict, in CI) keeps
    from being assigned, with the equality and hash of a frozen one.

    It is not frozen at run time: a frozen dataclass's ``__init__`` sets each field through
    ``object.__setattr__``, four times the cost of a plain one (0.46 µs against 0.11 for five
    fields), and the score stage builds several values per case-sample — the run, its turns,
    calls and results, its score and tallies: frozen at run time, they took 8 % of the
    instructions of ``toolgate score`` on ``bench/score_bench.py``'s runs."""
    return dataclass(slots=True, unsafe_hash=True)(cls)


# ─── closed sets ──────────────────────────────────────────────────────────────


class OrderMode(enum.StrEnum):
    """How a case's actual calls are compared with its expected calls as a trajectory.

    With actual calls A and expected calls E matched one to one:

    * ``strict`` — the same calls in the same sequence; calls inside one assistant turn
      (a parallel batch) are compared as a set, never as a sequence;
    * ``unordered`` — the same multiset: nothing missing, nothing extra (the default of
      ``scoring.default_order``);
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
    """The argument matchers of docs/dataset.md. ``equal`` is a plain expected value."""

    EQUAL = "equal"
    IN = "$in"
    REGEX = "$regex"
    APPROX = "$approx"
    ABSENT = "$absent"
    ANY = "$any"


class ArgsMatch(enum.StrEnum):
    """How an expected call's arguments compare with an actual call's (``args_match``).

    * ``subset`` — every expected argument matches; extra actual arguments are allowed
      (the default; ``required_args_only: true`` is its older spelling);
    * ``exact`` — the actual arguments are exactly the expected ones (``$absent`` keys
      aside; ``required_args_only: false``);
    * ``exact_except_defaults`` — as ``exact``, except that an extra top-level argument
      whose value equals its ``default`` in the tool's JSON Schema is allowed (a model
      that adds ``page: 1`` passes; one that adds ``delete_all: true`` does not).
    """

    SUBSET = "subset"
    EXACT = "exact"
    EXACT_EXCEPT_DEFAULTS = "exact_except_defaults"


class BatchingKind(enum.StrEnum):
    """How a run's turns disagree with the batches an expectation lists."""

    SPLIT = "split"
    """Calls expected in one assistant turn were sent over several turns."""
    MERGED = "merged"
    """Calls expected in separate turns were sent together in one turn."""


class Effect(enum.StrEnum):
    """What a call of a tool does to the world (docs/scoring.md, "Judging effects").

    * ``read`` — looks something up and changes nothing;
    * ``write`` — changes something (books, cancels, sends);
    * ``irreversible`` — changes something that cannot be undone (a refund, a deletion).

    :func:`gate.scorers.effects.effect_of` decides a tool's effect from its sources: the
    config's ``scoring.tools.<name>.risk``, then the tool's MCP annotations, then
    ``scoring.default_effect``; a tool nothing describes counts as a write. The same
    value weights unexpected calls in ``risk_weighted_precision``.
    """

    READ = "read"
    WRITE = "write"
    IRREVERSIBLE = "irreversible"

    @property
    def writes(self) -> bool:
        """A ``write`` or an ``irreversible`` call: one that changes the world."""
        return self is not Effect.READ


Risk = Effect
"""The name of :class:`Effect` in the config (``scoring.tools.<name>.risk``) and in
earlier releases."""


class PassOn(enum.StrEnum):
    """What decides whether a sample passes (``scoring.pass_on``, or a case's ``pass_on``).

    * ``calls`` — the calls themselves: the expected calls made, in the case's order mode
      (the case-pass rule of docs/scoring.md; the default);
    * ``effects`` — what the calls did to the world: every expected write made once with
      matching arguments, no other write that succeeded, the order mode over the writes;
      reads are free unless an expected read is ``required``; a call whose response was an
      error made no write.
    """

    CALLS = "calls"
    EFFECTS = "effects"


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


@value
class SourceRef:
    """Where something was read from: a file and its 1-based line (CSV: the row's line)."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@value
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


@value
class ExpectedCall:
    """A call the agent should make.

    ``args_match`` (:class:`ArgsMatch`, default ``subset``): how its arguments compare
    with the actual call's. ``batch``: in an expectation list written with batches
    (``[[a, b], c]``), the index of the element the call belongs to — one assistant turn;
    calls sharing it are expected together. ``None`` in a plain list (``[a, b, c]``),
    which says nothing about batching (the meaning every earlier release gave it).
    ``required``: a read that must be made even when the case is judged by its effects
    (``pass_on: effects``, where reads are otherwise free); it changes nothing when the
    case is judged by its calls, where every expected call is required.
    """

    name: str
    args: Mapping[str, ArgMatcher] = field(default_factory=dict)
    args_match: ArgsMatch = ArgsMatch.SUBSET
    batch: int | None = None
    required: bool = False

    @property
    def required_args_only(self) -> bool:
        """The older spelling of ``args_match``: true for ``subset``."""
        return self.args_match is ArgsMatch.SUBSET

    def to_json(self) -> dict[str, JsonValue]:
        """The call in the dataset's syntax (without its batch: :func:`expectation_json`
        writes a list's batches). ``exact`` is written ``required_args_only: false``, the
        spelling every release reads, so results of datasets that do not use the newer
        mode stay byte for byte what they were."""
        out: dict[str, JsonValue] = {
            "name": self.name,
            "args": {k: m.to_json() for k, m in self.args.items()},
        }
        if self.args_match is ArgsMatch.EXACT:
            out["required_args_only"] = False
        elif self.args_match is ArgsMatch.EXACT_EXCEPT_DEFAULTS:
            out["args_match"] = self.args_match.value
        if self.required:
            out["required"] = True
        return out

    def content(self) -> dict[str, JsonValue]:
        """The call as a case's hash sees it: the fields of the first release (so a case
        that uses neither batches nor ``exact_except_defaults`` keeps its hash, and its
        base history), plus ``args_match`` and ``batch`` only when they say more."""
        out: dict[str, JsonValue] = {
            "name": self.name,
            "args": {k: dataclasses.asdict(m) for k, m in self.args.items()},
        }
        if self.args_match is ArgsMatch.EXACT_EXCEPT_DEFAULTS:
            out["args_match"] = self.args_match.value
        else:
            out["required_args_only"] = self.args_match is ArgsMatch.SUBSET
        if self.batch is not None:
            out["batch"] = self.batch
        if self.required:
            out["required"] = True
        return out


def is_batched(calls: Sequence[ExpectedCall]) -> bool:
    """Whether an expectation list was written with batches (then every element is one
    assistant turn, docs/dataset.md); a plain list says nothing about batching."""
    return bool(calls) and calls[0].batch is not None


@value
class ToolSpec:
    """A tool the model saw: its name, description and JSON Schema for the arguments.

    ``annotations``: MCP's tool annotations, when the definition carries them
    (``readOnlyHint``, ``destructiveHint``, …): one source of the tool's
    :class:`Effect`."""

    name: str
    description: str = ""
    parameters: Mapping[str, JsonValue] = field(default_factory=dict)
    annotations: Mapping[str, JsonValue] | None = None

    def definition(self) -> dict[str, JsonValue]:
        """The definition as the dataset holds it (``annotations`` only when there are:
        a tool without them keeps the hash it always had)."""
        out: dict[str, JsonValue] = {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
        }
        if self.annotations is not None:
            out["annotations"] = self.annotations
        return out

    def definition_hash(self) -> str:
        """sha256 of the canonical definition: any change to name, description or schema
        changes it (tool-definition drift)."""
        return hashlib.sha256(canonical(self.definition()).encode()).hexdigest()


@value
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


@value
class UserTurn:
    """One scripted user turn of a conversation case (docs/dataset.md): the user's
    message, and what the agent should do between it and the next user turn — its
    expected calls (``[]`` with ``expected_no_tool``: none, a clarifying answer), their
    alternatives and order mode, the turn's own frozen responses (tried before the
    case's) and its own must-not-call tools (on top of the case's, which hold in every
    turn)."""

    user: str
    expected_tool_calls: tuple[ExpectedCall, ...] = ()
    expected_no_tool: bool = False
    acceptable_alternatives: tuple[tuple[ExpectedCall, ...], ...] = ()
    order: OrderMode | None = None
    tool_responses: tuple[FrozenResponse, ...] = ()
    must_not_call: tuple[str, ...] = ()


@value
class Case:
    """One dataset row (docs/dataset.md), validated. A conversation case (``conversation``
    not empty) has several user turns, each scored where it happened; its
    ``user_input`` is the first turn's message, its ``expected_tool_calls`` every turn's
    expected calls in order (for the reports' tallies), ``expected_no_tool`` true when no
    turn expects a call."""

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
    order: OrderMode | None = None
    """``None``: the dataset's default order mode (``scoring.default_order``)."""
    tool_responses: tuple[FrozenResponse, ...] = ()
    step_budget: int | None = None
    tags: tuple[str, ...] = ()
    source_trace_id: str | None = None
    notes: str | None = None
    conversation: tuple[UserTurn, ...] = ()
    pass_on: PassOn | None = None
    """``None``: the dataset's default (``scoring.pass_on``)."""

    def tool(self, name: str) -> ToolSpec | None:
        for spec in self.available_tools:
            if spec.name == name:
                return spec
        return None

    def expectation_lists(self) -> tuple[tuple[ExpectedCall, ...], ...]:
        """The canonical expected list first, then every acceptable alternative; a case
        passes when its calls match any one of them. (For a conversation: every turn's
        lists, in turn order.)"""
        if self.conversation:
            return tuple(
                lst
                for t in self.conversation
                for lst in (t.expected_tool_calls, *t.acceptable_alternatives)
            )
        return (self.expected_tool_calls, *self.acceptable_alternatives)

    def turn_case(self, index: int) -> Case:
        """User turn ``index`` of a conversation as a one-turn case: its message, its
        expectations, its order mode (else the case's), its frozen responses before the
        case's, its must-not-call tools with the case's — what that turn is scored
        against."""
        t = self.conversation[index]
        return dataclasses.replace(
            self,
            user_input=t.user,
            message_history=(),
            expected_tool_calls=t.expected_tool_calls,
            expected_no_tool=t.expected_no_tool,
            acceptable_alternatives=t.acceptable_alternatives,
            must_not_call=tuple(dict.fromkeys((*self.must_not_call, *t.must_not_call))),
            order=t.order if t.order is not None else self.order,
            tool_responses=(*t.tool_responses, *self.tool_responses),
            conversation=(),
        )


class DatasetLike(Protocol):
    """What the stages need of a dataset (``gate.dataset.Dataset`` is one): where it was
    read from, its pin, its cases in file order and every tool by name."""

    @property
    def display(self) -> str: ...
    @property
    def path(self) -> Path: ...
    @property
    def sha256(self) -> str: ...
    @property
    def cases_sha256(self) -> str | None: ...
    @property
    def cases(self) -> Sequence[Case]: ...
    @property
    def tools(self) -> Mapping[str, ToolSpec]: ...


@value
class Shard:
    """Shard ``index``/``count`` (1-based ``index``) of a dataset split by case id: it holds
    the cases with ``int(sha256(id), 16) % count == index - 1`` — deterministic, independent
    of order and of the other cases (a GitHub Actions matrix runs one shard per job)."""

    index: int
    count: int

    def holds(self, case_id: str) -> bool:
        return int(hashlib.sha256(case_id.encode()).hexdigest(), 16) % self.count == self.index - 1

    @classmethod
    def parse(cls, text: str, *, option: str = "--shard") -> Shard:
        """``"i/n"`` with ``1 <= i <= n``; anything else is a :class:`UsageError` naming
        ``option``."""
        left, sep, right = text.partition("/")
        try:
            i, n = int(left), int(right)
        except ValueError:
            i = n = 0
        if not sep or n < 1 or not 1 <= i <= n:
            raise UsageError(f"{option} must be i/n with 1 <= i <= n (e.g. 2/4), not {text!r}")
        return cls(i, n)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


# ─── what the agent did ───────────────────────────────────────────────────────


@value
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


@value
class ToolResult:
    """What the runner answered to one call (from the frozen responses).

    ``unrecorded`` is true for the runner's "no frozen response" error: a gap in the
    dataset, not a failure of the tool (the runner sets it; runs.jsonl records it)."""

    id: str | None
    content: JsonValue
    is_error: bool = False
    unrecorded: bool = False


@value
class Turn:
    """One assistant message: its calls form a parallel batch (scored as a set).

    In a conversation, ``user`` is the scripted user message the assistant message
    answers first (set on the first assistant message after each user turn, the first
    included): it splits the run into its user turns. A message without calls is the
    agent's answer to its user turn."""

    calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    content: str | None = None
    user: str | None = None


@value
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
    usage: Mapping[str, int | float] | None = None
    """The token counts the agent reported, summed; a ``gate.model.usage.InvalidUsage`` (no
    counts, and why) when they could not be used."""
    meta: Mapping[str, JsonValue] | None = None

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        """Every call, in turn order."""
        return tuple(c for t in self.turns for c in t.calls)

    @property
    def error_class(self) -> ErrorClass | None:
        """Who failed it (:class:`gate.errors.ErrorClass`, from the kind ``error`` starts
        with); None when it did not fail. runs.jsonl records it next to ``error``."""
        return error_class_of(self.error)

    @property
    def batches(self) -> tuple[tuple[ToolCall, ...], ...]:
        """The calls grouped by turn (empty turns left out)."""
        return tuple(t.calls for t in self.turns if t.calls)


# ─── scores ───────────────────────────────────────────────────────────────────


@value
class HardFailure:
    """A failure that fails the gate whatever the averages: a must-not-call violation,
    an argument-scope rule broken, a required preceding step missing before a risky tool."""

    kind: HardFailureKind
    case_id: str
    sample: int
    call: ToolCall
    message: str
    line: int | None = None
    """The case's line in the dataset (set by the reduction; reports point at it)."""


@value
class MissingSamples:
    """The case-samples of a run that are *missing*: the infrastructure failed them (the
    endpoint, the network, the global deadline, a missing recording, a breaker that had
    opened — :class:`gate.errors.ErrorClass`) and retries did not recover them. A missing
    sample is not sampled: it counts neither as a failure nor as a pass (a hard failure it
    recorded before it failed still counts). Built by :func:`gate.policy.validity.missing`.
    """

    planned: int
    """Every case-sample of the run."""
    per_case: Mapping[str, int] = field(default_factory=dict)
    """Case id → its missing samples (cases with none left out), in dataset order."""
    samples: frozenset[tuple[str, int]] = frozenset()
    """The missing (case id, sample) pairs."""
    by_reason: Mapping[str, int] = field(default_factory=dict)
    """Error kind (``http``, ``deadline``…) → missing samples, sorted by kind."""
    first_errors: tuple[str, ...] = ()
    """The first line of the first few distinct errors, in dataset order."""
    not_run: Mapping[str, int] = field(default_factory=dict)
    """Case id → its samples *not run* on purpose (a ``replay`` agent with
    ``agent.missing: skip`` whose runs file has no run of them): among the missing, but
    not a failure of the infrastructure (``max_missing`` does not count them)."""

    @property
    def count(self) -> int:
        return len(self.samples)

    @property
    def failed(self) -> int:
        """Missing samples the infrastructure failed (those not run on purpose apart)."""
        return self.count - sum(self.not_run.values())

    @property
    def share(self) -> float:
        """The share of the planned samples the infrastructure failed."""
        return self.failed / self.planned if self.planned else 0.0

    def is_missing(self, case_id: str, sample: int) -> bool:
        return (case_id, sample) in self.samples


@value
class RunInvalid:
    """Why the verdict is "error" (exit code 4): the run decided nothing about the agent."""

    reason: str
    missing: MissingSamples
    first_errors: tuple[str, ...] = ()
    """The first lines of the errors that made it so (printed, and in the comment)."""
    headline: str = ""
    """What happened, in one line — the first line of the console, the comment and the
    step summary ("the agent could not start: ModuleNotFoundError: …")."""
    hint: str | None = None
    """What to do about it, when something can be said."""


class MissingWhy(enum.StrEnum):
    """Why an expected call of the chosen expectation list is not matched."""

    NOT_CALLED = "not called"
    UNPARSED = "called, but its arguments did not parse"
    OTHER_ARGS = "called with different arguments"
    FAILED = "called, but its response was an error"
    """Judging effects: the call was made and failed, so it made no write."""


@value
class ActualCall:
    """One call the agent made, as evidence shows it: the call and its turn (0-based)."""

    call: ToolCall
    turn: int


@value
class MissingCall:
    """An expected call (``index`` into ``Evidence.expected``) that no call matched."""

    index: int
    name: str
    why: MissingWhy


@value
class ExtraCall:
    """An actual call (``index`` into ``Evidence.actual``) that matched no expectation."""

    index: int
    name: str


@value
class ArgProblem:
    """One argument that keeps a call from matching its expectation. ``argument`` is a
    dotted path into nested objects (``address.country``), ``None`` when the arguments
    did not parse; ``actual`` is meaningful only when ``present``."""

    argument: str | None
    expected: JsonValue
    why: str
    actual: JsonValue = None
    present: bool = False


@value
class ArgDiff:
    """An expected call answered by a call of the same tool with other arguments."""

    expected_index: int
    actual_index: int
    tool: str
    diffs: tuple[ArgProblem, ...]


@value
class MalformedCall:
    """A structurally broken call (``index`` into ``Evidence.actual``) and why."""

    index: int
    name: str
    kind: MalformedKind
    detail: str


@value
class Violation:
    """A hard-failure rule a call broke (``index`` into ``Evidence.actual``)."""

    rule: HardFailureKind
    index: int
    name: str
    message: str


@value
class BatchProblem:
    """Calls whose turns disagree with the expected batches (``gate.scorers.trajectory``):
    ``split`` — the expected calls ``expected`` (one batch) came in the turns ``turns``;
    ``merged`` — the expected calls ``expected`` (of several batches) came together in
    the one turn ``turns[0]``. ``names`` are their tools, in expected order; indices are
    into ``Evidence.expected``, turns 0-based."""

    kind: BatchingKind
    expected: tuple[int, ...]
    names: tuple[str, ...]
    turns: tuple[int, ...]


@value
class EffectsEvidence:
    """What a sample did to the world, for a case judged by its effects
    (``pass_on: effects``, :mod:`gate.scorers.writes`). Indices are into
    ``Evidence.actual`` (calls) and ``Evidence.expected`` (expectations).

    * ``made``: the writes made — calls of write tools whose response was not an error —
      in run order;
    * ``failed``: calls of write tools whose response was an error: they made nothing
      (they still count for the error metrics);
    * ``matched``: ``(expected index, actual index)`` pairs of the expected writes (and
      required reads) with the calls that made them;
    * ``missing``: expected writes not made (and required reads not made), with why;
    * ``extra``: writes made that no expectation holds;
    * ``arg_diffs``: an expected write answered by a write of the same tool with other
      arguments;
    * ``order``: false when the case's order mode is ``strict`` and the writes came in
      another sequence;
    * ``repeated``: writes of an idempotent tool that repeated the write made just before
      them, with the same arguments: they changed nothing more.
    """

    made: tuple[int, ...] = ()
    failed: tuple[int, ...] = ()
    matched: tuple[tuple[int, int], ...] = ()
    missing: tuple[MissingCall, ...] = ()
    extra: tuple[ExtraCall, ...] = ()
    arg_diffs: tuple[ArgDiff, ...] = ()
    order: bool = True
    repeated: tuple[int, ...] = ()


@value
class Evidence:
    """What the reports show for one sample, computed by the scorers (never recomputed).

    * ``expected``: the expectation list that matched best (``alternative``: its index,
      0 = the canonical list); ``actual``: every call made, in run order;
    * ``matched``: ``(expected index, actual index)`` pairs of the maximum matching;
    * ``missing`` / ``extra``: expected calls not matched, actual calls not matched;
    * ``arg_diffs``: per expected call answered by a same-name call with other arguments,
      the arguments that differ; ``malformed``: broken calls with their class;
    * ``violations``: must-not-call, argument-scope and required-before rules broken;
    * ``summary``: one line (``2 exact, 1 name-only; 3 expected, 4 actual``);
    * ``unrecorded``: indices of calls without a frozen response; ``agent_error``: the
      run's error, if any;
    * ``batching``: where the run's turns disagree with an expectation written with
      batches (:class:`BatchProblem`).
    """

    expected: tuple[ExpectedCall, ...]
    actual: tuple[ActualCall, ...]
    alternative: int
    matched: tuple[tuple[int, int], ...]
    summary: str
    missing: tuple[MissingCall, ...] = ()
    extra: tuple[ExtraCall, ...] = ()
    arg_diffs: tuple[ArgDiff, ...] = ()
    malformed: tuple[MalformedCall, ...] = ()
    violations: tuple[Violation, ...] = ()
    unrecorded: tuple[int, ...] = ()
    agent_error: str | None = None
    batching: tuple[BatchProblem, ...] = ()
    turn: TurnRef | None = None
    """In a conversation: the user turn this evidence is of (the first that failed)."""
    effects: EffectsEvidence | None = None
    """For a case judged by its effects: what the run wrote (:class:`EffectsEvidence`)."""


TURN_USER_SHOWN = 80
"""Most characters of a conversation turn's user message a report quotes."""


@value
class TurnRef:
    """User turn ``index`` (1-based) of ``of`` in a conversation, and what the user said."""

    index: int
    of: int
    user: str

    def label(self) -> str:
        """``turn 2 of 3 (the user: “…”)`` — how every report names where a conversation
        broke (the message on one line, cut at :data:`TURN_USER_SHOWN` characters)."""
        text = " ".join(self.user.split())
        if len(text) > TURN_USER_SHOWN:
            text = text[: TURN_USER_SHOWN - 1].rstrip() + "…"
        return f"turn {self.index} of {self.of} (the user: “{text}”)"


@value
class ToolTally:
    """One tool's counts in one sample: expected calls, matched ones, calls made."""

    expected: int
    matched: int
    called: int


@value
class Tallies:
    """Raw counts of one sample that the dataset level pools (ratios of sums, never means).

    * ``calls``: calls made; ``calls_on_no_tool``: calls made on a no-tool case;
    * ``per_tool``: name → :class:`ToolTally` (the per-tool recall rollup);
    * ``confusion``: for a case with exactly one expected call, ``(expected tool, tool
      called)`` — the expected tool when any call named it, else the first tool called,
      else ``None``;
    * ``malformed``: malformed-call class (``MalformedKind`` value) → count;
    * ``unrecorded``: calls without a frozen response.
    """

    calls: int = 0
    calls_on_no_tool: int = 0
    per_tool: Mapping[str, ToolTally] = field(default_factory=dict)
    confusion: tuple[tuple[str, str | None], ...] = ()
    malformed: Mapping[str, int] = field(default_factory=dict)
    unrecorded: int = 0


@value
class SampleScore:
    """Every deterministic scorer's verdict on one run (one case × sample).

    * ``scores``: metric name → value; ``None`` means not applicable ("n/a", left out of
      means), e.g. ``call_accuracy`` on a no-tool case. Rates are in [0, 1]; counts ≥ 0.
    * ``passed`` / ``failed_checks``: the case-pass rule of docs/scoring.md and the names of
      the checks that failed it (empty when passed).
    * ``reasons``: metric name → one plain-language sentence, for the metrics that failed
      (a value other than the best one) or do not apply (n/a); every metric's when
      scored with ``full=True`` (``gate.scorers.score_sample``).
    * ``evidence``: what the reports render without recomputing (:class:`Evidence`);
      ``None`` for a passing sample unless scored with ``full=True``.
    * ``tallies``: raw counts the dataset level pools (:class:`Tallies`).
    """

    case_id: str
    sample: int
    passed: bool
    scores: Mapping[str, float | None]
    failed_checks: tuple[str, ...] = ()
    reasons: Mapping[str, str] = field(default_factory=dict)
    evidence: Evidence | None = None
    tallies: Tallies = field(default_factory=Tallies)
    hard_failures: tuple[HardFailure, ...] = ()
    error: str | None = None
    latency_ms: float | None = None
    usage: Mapping[str, int | float] | None = None
    turns: tuple[TurnScore, ...] = ()
    """A conversation's user turns, each scored where it happened (empty for a one-turn
    case)."""

    @property
    def turns_passed(self) -> int | None:
        """User turns that passed (``None`` for a one-turn case)."""
        return sum(1 for t in self.turns if t.passed) if self.turns else None

    @property
    def first_failing_turn(self) -> int | None:
        """The 1-based number of the first user turn that failed or was never run
        (``None``: every turn passed, or a one-turn case)."""
        for i, t in enumerate(self.turns, start=1):
            if not t.passed:
                return i
        return None


@value
class TurnScore:
    """One user turn of a conversation sample: whether it passed, its failed checks and
    its scores (metric name → value, ``None``: n/a). ``ran`` is false for a turn the
    conversation never reached (it ended earlier: an error, a step budget, a
    must-not-call): such a turn is not passed and every score of it is n/a."""

    passed: bool
    scores: Mapping[str, float | None]
    failed_checks: tuple[str, ...] = ()
    ran: bool = True
    user: str = ""
    """The scripted user message that started the turn."""
    called: tuple[str, ...] = ()
    """The tools the agent called in the turn, in order."""


# ─── metric names ────────────────────────────────────────────────────────────

# The deterministic metrics are declared once, in gate.scorers.registry (name, function,
# direction, pooled, gateable); only the judge's naming rule lives here.

JUDGE_METRIC_PREFIX = "judge."
"""Judge scores are named ``judge.<rubric>``; they are reported and can never be gated."""

CASE_HASH_VERSION = 2
"""What a case's hash (``gate.policy.history.case_hash``) covers: 2 — the case and the
scoring; 1 (the previous release) — also the tools' definitions and the agent identity."""

MIN_HISTORY = 36
"""The default ``policy.min_history``: base samples per case a history should hold
(docs/policy.md §9.7 measures what it detects: with the other defaults, the smallest
history that catches the changes the policy is built for in at least 80 % of pull
requests)."""


# ─── one run's header ─────────────────────────────────────────────────────────


@value
class DatasetRef:
    """Which dataset a run used: its display path, pinned version and sha256 (of the file
    and every file it references), the cases in scope and in the whole dataset, and the
    sha256 of the dataset file alone (``cases_sha256``: results whose datasets differ only
    in the tool files they reference are still compared — that is tool drift)."""

    path: str
    version: str | None
    sha256: str
    cases: int
    total_cases: int | None = None
    cases_sha256: str | None = None


@value
class ToolRef:
    """A tool definition as a run saw it (``hash``: :meth:`ToolSpec.definition_hash`)."""

    hash: str
    description: str
    parameters: Mapping[str, JsonValue]


@value
class RunHeader:
    """What identifies a run besides its scores: the gate, the dataset, the agent, the
    seed, the shard and the tools (built once per run, by the score stage or the merge)."""

    toolgate_version: str
    gate_name: str
    dataset: DatasetRef
    agent: Mapping[str, JsonValue]
    seed: int
    shard: Shard | None
    tools: Mapping[str, ToolRef]
    scoring_sha256: str | None = None
    """:meth:`gate.config.Config.scoring_sha256` (None: scored without a config)."""


# ─── the suite's statistics (what the reduction returns) ──────────────────────


@value
class MetricStats:
    """A metric over the dataset or a slice: the mean over cases of per-case means
    (``None``: n/a everywhere), the std over sample indices of the dataset-level value
    (``None`` with fewer than 2 samples), ``n`` the cases with a value (calls, for a pooled
    metric), and a seeded bootstrap 95% interval (dataset level only)."""

    mean: float | None
    std: float | None = None
    n: int = 0
    ci_low: float | None = None
    ci_high: float | None = None


@value
class SliceStats:
    cases: int
    pass_rate: float | None
    metrics: Mapping[str, MetricStats]


@value
class ToolRecall:
    """One tool over every sample: expected calls, matched ones, recall (``None`` when
    never expected) and calls made."""

    expected: int
    matched: int
    recall: float | None
    called: int = 0


@value
class CaseStats:
    """One case over its samples (regular and confirmation ones).

    ``scores``: per metric the mean over the samples where it applied (``None``: n/a in
    all); ``std``: the sample std (ddof=1) of the metrics with a value in ≥ 2 samples;
    ``failed_checks``: the checks that failed in any sample, most frequent first."""

    id: str
    line: int | None
    difficulty: str | None
    tags: tuple[str, ...]
    expected_no_tool: bool
    must_not_call: tuple[str, ...]
    tools: tuple[str, ...]
    passed: bool
    pass_rate: float
    flaky: bool
    samples: int
    extra_samples: int
    scores: Mapping[str, float | None]
    std: Mapping[str, float]
    failed_checks: tuple[str, ...]
    initial_pass_rate: float | None = None
    """The pass rate over the case's initial samples alone (``None``: as ``pass_rate``):
    what the flakiness guard counts, a figure extra samples cannot move."""
    initial_samples: int | None = None
    """How many initial samples that rate is over (missing ones left out)."""

    @property
    def initially_flaky(self) -> bool:
        """0 < pass rate < 1 over the initial samples."""
        rate = self.pass_rate if self.initial_pass_rate is None else self.initial_pass_rate
        return 0.0 < rate < 1.0


@value
class Advice:
    """What these samples can and cannot detect (``gate.policy.advisor``)."""

    samples: int
    cases: int
    per_case_min_detectable_drop: float | None
    per_case_samples_for_total_drop: int
    dataset_min_detectable_drop: float | None
    within_case_std: float | None
    rule: str
    summary: str


@value
class ConfirmStats:
    """Adaptive confirmation (``confirm:``): extra samples spent on apparent flips."""

    max_extra_samples: int
    extra_samples: int
    cases: Mapping[str, int] = field(default_factory=dict)


@value
class UsageReported:
    """Which of the head's initial samples that answered reported each usage metric (on
    the whole dataset, or a slice): a cost gate on a metric that some of them lack —
    none reported, or invalid (``gate.model.usage``) — is not checked (``gate.policy.decide``)."""

    answered: int
    """Initial samples with an answer (those that have cost figures)."""
    reported: Mapping[str, int]
    """Usage metric → how many of them have a value of it."""


@value
class SuiteStats:
    """Everything the reduction computes from a run's sample scores (``gate.policy.reduce``):
    the value the baseline comparison and the decision take, and that ``gate.results``
    writes. ``metric_names`` orders the per-case (and per-sample) scores of results.json."""

    header: RunHeader
    samples: int
    """Regular samples per case."""
    metric_names: tuple[str, ...]
    metrics: Mapping[str, MetricStats]
    slices: Mapping[str, SliceStats]
    cases: Sequence[CaseStats]
    per_tool: Mapping[str, ToolRecall]
    confusion: Mapping[str, Mapping[str, int]]
    malformed: Mapping[str, int]
    hard_failures: tuple[HardFailure, ...]
    usage: Mapping[str, float]
    advisor: Advice | None
    confirm: ConfirmStats | None
    notices: tuple[str, ...]
    timing: Mapping[str, JsonValue]
    usage_reported: Mapping[str, UsageReported] = field(default_factory=dict)
    """Slice name (``""``: the whole dataset) → which answered samples reported usage."""
    pass_hat: tuple[float | None, ...] = ()
    """pass^k for k = 1 … ``samples`` (index k − 1): the mean over cases of each case's
    chance that k of its samples all pass, C(c, k) / C(n, k) (``gate.policy.reduce``)."""


# ─── a case's test against its base history ───────────────────────────────────


class Comparability(enum.StrEnum):
    """Whether a head case can be tested against the base history."""

    COMPARABLE = "comparable"
    """Same hash, and the history has samples."""
    NEW = "new"
    """The history has no entry for this case id (a new case, or no history at all)."""
    CHANGED = "changed"
    """The case id is known but its hash differs: the case itself or the scoring
    changed, so the old counts describe another test."""


class CaseOutcome(enum.StrEnum):
    """How one case ended."""

    REGRESSED = "regressed"
    """Significantly worse than its base history (per-PR family control), by at least the
    minimum practical effect. Blocks."""
    IMPROVED = "improved"
    """Significantly better, by at least the minimum practical effect."""
    UNCHANGED = "unchanged"
    """Neither, and sampling stopped because the evidence settled."""
    UNDECIDED = "undecided"
    """Neither, and the case still needed samples when the per-case or per-PR cap
    stopped sampling."""
    NOT_COMPARABLE = "not_comparable"
    """No history for the case's current hash: never a regression or an improvement."""


@dataclass(frozen=True, slots=True)
class Counts:
    """Passed samples of samples run."""

    passes: int
    samples: int

    def __post_init__(self) -> None:
        if not 0 <= self.passes <= self.samples:
            raise ValueError(f"counts need 0 ≤ passes ≤ samples, got {self.passes}/{self.samples}")

    @property
    def failures(self) -> int:
        return self.samples - self.passes

    @property
    def rate(self) -> float | None:
        return self.passes / self.samples if self.samples else None


@value
class CaseTest:
    """One case's test against the base history (``docs/policy.md``): its outcome with the
    evidence for it (:func:`gate.policy.casetest.classify`), results.json's ``test``."""

    outcome: CaseOutcome
    comparability: Comparability
    base_passes: int | None = None
    base_samples: int | None = None
    head_passes: int = field(kw_only=True)
    head_samples: int = field(kw_only=True)
    extra_samples: int = 0
    p_worse: float | None = None
    """Anytime-valid p-value of the regression test, min(1, 1/E)."""
    p_better: float | None = None
    log_e_worse: float | None = None
    log_e_better: float | None = None
    change: float | None = None
    """Head pass rate − base pass rate."""
    below_min_effect: bool = False
    """Significant, but the change is smaller than the minimum practical effect."""

    @property
    def base(self) -> Counts | None:
        """The base history's counts (``None``: none, the case is not comparable)."""
        if self.base_samples is None:
            return None
        return Counts(self.base_passes or 0, self.base_samples)

    @property
    def head(self) -> Counts:
        return Counts(self.head_passes, self.head_samples)


# ─── the baseline comparison ──────────────────────────────────────────────────


class FlipKind(enum.StrEnum):
    """How a comparable case's pass rate moved from its base history to the head
    (:mod:`gate.policy.flips`, the one classification every command and report uses):
    ``regression`` / ``fix`` — moved by at least the minimum effect and significant
    (these count in the verdict); ``likely_regression`` / ``likely_fix`` — moved by at
    least the minimum effect, the evidence points that way, not yet significant;
    ``undecided`` — moved by at least the minimum effect, but no outcome of its samples
    could have made the test significant (too few samples to tell); ``noise`` — any
    other change of pass rate (a test could have told, and did not); ``new`` /
    ``removed`` — only in head / only in the base."""

    REGRESSION = "regression"
    FIX = "fix"
    LIKELY_REGRESSION = "likely_regression"
    LIKELY_FIX = "likely_fix"
    UNDECIDED = "undecided"
    NOISE = "noise"
    NEW = "new"
    REMOVED = "removed"

    @property
    def worse(self) -> bool:
        """A regression, likely or significant."""
        return self in (FlipKind.REGRESSION, FlipKind.LIKELY_REGRESSION)

    @property
    def better(self) -> bool:
        """A fix, likely or significant."""
        return self in (FlipKind.FIX, FlipKind.LIKELY_FIX)


def new_failing(flips: Iterable[Flip]) -> list[Flip]:
    """The flips of cases new in this run — absent from the baseline — that failed a
    sample: what ``regressions.new_cases`` decides on."""
    return [
        f
        for f in flips
        if f.kind == FlipKind.NEW and f.head_samples and (f.head_pass_rate or 0.0) < 1.0
    ]


def dropped(f: Flip) -> bool:
    """The flip's pass rate fell from its base history to the head."""
    return (f.head_pass_rate or 0.0) < (f.base_pass_rate or 0.0)


def undecided_drops(flips: Iterable[Flip]) -> list[Flip]:
    """The undecided flips whose pass rate fell: cases that may be broken, too few
    samples to tell (``regressions.undecided`` decides on them)."""
    return [f for f in flips if f.kind == FlipKind.UNDECIDED and dropped(f)]


@value
class Flip:
    case_id: str
    kind: FlipKind
    base_pass_rate: float | None
    head_pass_rate: float | None
    base_samples: int = 0
    head_samples: int = 0
    head_extra_samples: int = 0
    failed_checks: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    drifted_tools: tuple[str, ...] = ()
    line: int | None = None
    reason: str = ""
    p_value: float | None = None
    """The anytime-valid p-value of the case's test against the base history, in the
    direction of the change."""
    because: str | None = None
    """For a likely regression or fix: why it is not significant yet, in words ("2 base
    samples", "the sampling cap stopped it")."""


@value
class CaseFlip:
    """A comparable case whose pass rate moved from its base history
    (:func:`gate.policy.flips.case_flips`), with the counts it was classified on: the
    history's and the head's."""

    kind: FlipKind
    base_passes: int
    base_samples: int
    head_passes: int
    head_samples: int
    p_value: float | None
    because: str | None = None


@value
class MetricDelta:
    base: float | None
    head: float | None
    delta: float | None
    beyond_noise: bool = False
    """The change is more than noise: a suite test on the metric found it significant,
    a flipped case moved it, or the base value lies outside the head's bootstrap
    interval (:func:`gate.baseline.diff.compare`)."""


@value
class SetupChange:
    """What a pull request changed in the setup under test: one identity key of the agent
    (``model``, ``base_url``, ``temperature``, ``params``, ``system_prompt_sha256``,
    ``kind``), base → head."""

    key: str
    base: JsonValue = None
    head: JsonValue = None


class DriftChange(enum.StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


@value
class ToolDrift:
    """A tool whose definition differs between base and head, with a compact diff and the
    flipped cases that use it."""

    tool: str
    change: DriftChange
    diff: tuple[str, ...] = ()
    flipped_cases: tuple[str, ...] = ()
    server: str | None = None
    """In the pinned tools' drift (``gate.interop.mcp_tools``): the MCP server advertising
    the tool (``None``: removed, or a drift between base and head)."""


class NotComparedWhy(enum.StrEnum):
    """Why a gated run was compared with nothing: the first line of every report says
    "not compared" and why, and never shows the run as ✅."""

    NO_BASELINE = "no_baseline"
    """No baseline was given, or none was found (the first run of a branch, an artifact
    that expired, ``baseline: none``)."""
    OTHER_DATASET = "other_dataset"
    """The baseline shares no case id with this run: it was made from another dataset."""
    OTHER_GATE = "other_gate"
    """The baseline is another gate's (its ``name:``) and no case of it is comparable."""
    NO_COMPARABLE_CASE = "no_comparable_case"
    """Every case this run shares with the baseline changed since its history (its
    content or the scoring config)."""


@value
class NotCompared:
    """A gated run that was compared with nothing, and why in words (``detail``)."""

    why: NotComparedWhy
    detail: str


@value
class RemovedCase:
    """A case the baseline holds and this run's dataset does not: its base counts, and
    the reason ``dataset.retired`` gives for it (``None``: not retired, so it fails the
    gate)."""

    case_id: str
    base_passes: int
    base_samples: int
    retired: str | None = None

    @property
    def passed_on_base(self) -> bool:
        """Every base sample passed."""
        return self.base_samples > 0 and self.base_passes == self.base_samples


@value
class CaseChanges:
    """How this run's dataset differs from the baseline's, case by case (each case
    compared by its own hash): ids ``added`` (not in the baseline), ``changed`` (their
    content or the scoring changed since their history: not comparable) and the
    ``removed`` cases (in the baseline, not in this run's dataset)."""

    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[RemovedCase, ...] = ()

    @property
    def unretired(self) -> tuple[RemovedCase, ...]:
        """The removed cases ``dataset.retired`` does not retire: each fails the gate."""
        return tuple(r for r in self.removed if r.retired is None)

    @property
    def retired(self) -> tuple[RemovedCase, ...]:
        return tuple(r for r in self.removed if r.retired is not None)


@value
class Comparison:
    """This run against the baseline (``gate.baseline.diff.compare``)."""

    source: str
    comparable: bool
    note: str | None = None
    rule: str = ""
    base_dataset_sha256: str | None = None
    base_samples: int = 0
    regressions: int = 0
    """Significant regressions."""
    fixes: int = 0
    noise: int = 0
    metrics: Mapping[str, MetricDelta] = field(default_factory=dict)
    slice_metrics: Mapping[str, Mapping[str, MetricDelta]] = field(default_factory=dict)
    flips: tuple[Flip, ...] = ()
    tool_drift: tuple[ToolDrift, ...] = ()
    base_usage: Mapping[str, float] = field(default_factory=dict)
    likely_regressions: int = 0
    """Likely regressions: moved by the minimum effect, not yet significant."""
    likely_fixes: int = 0
    undecided: int = 0
    """Cases whose pass rate moved by the minimum effect with too few samples to tell."""
    setup_changes: tuple[SetupChange, ...] = ()
    """The agent identity keys that differ between the base and this run."""
    cost: tuple[CostDelta, ...] = ()
    """What a sample cost, against the base history (the reports' Cost group)."""
    changes: CaseChanges = CaseChanges()
    """The cases added, changed and removed against the baseline."""
    not_compared: NotCompared | None = None
    """Set when nothing was compared (``comparable`` false): why."""


@value
class CostDelta:
    """A cost metric (``gate.scorers.usage``) against the base history, per sample: the
    means of per-case means over the comparable cases with a value on both sides, the
    change (and as a fraction of the base), and the cost test's one-sided p-value for a
    rise of the mean; ``beyond_noise``: the mean's test finds the change significant in
    its direction (``gate.policy.suite.SuiteTest.beyond_noise``); ``typical``: the
    typical case's relative change (what a ``max_increase`` gate compares,
    ``gate.policy.cost``)."""

    metric: str
    base: float | None
    head: float | None
    change: float | None
    relative: float | None
    p_value: float
    beyond_noise: bool
    cases: int
    typical: float | None = None


# The verdict, what a run will spend and the tests against the base history: read on in
# gate/model/verdict.py (one file would be over 1,500 lines).
from gate.model import verdict as _verdict  # noqa: E402

FlakinessInfo = _verdict.FlakinessInfo
GateOp = _verdict.GateOp
GateOutcome = _verdict.GateOutcome
RunBill = _verdict.RunBill
VarianceOutcome = _verdict.VarianceOutcome
Verdict = _verdict.Verdict
gate_label = _verdict.gate_label
