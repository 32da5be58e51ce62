"""toolgate.yml: the one config file, validated into one typed object.

Unknown keys are errors (a typo must not silently disable a check), booleans are strict
(YAML 1.2 reads ``no`` as a string; a boolean field refuses it rather than treat it as
truthy), and every error names the file, the line and the field. Paths in the config are
relative to the config file's folder. :class:`Config` holds one section per key.
"""

from __future__ import annotations

import enum
from collections.abc import Collection
from pathlib import Path
from typing import Annotated, Any, Literal, get_origin

from pydantic import (
    BaseModel,
    Field,
    SerializeAsAny,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from gate import agents
from gate.agents.interface import SECTION, AgentSettings
from gate.agents.interface import McpServerConfig as McpServerConfig  # agent.servers[]
from gate.errors import ConfigError, Problem
from gate.errors import did_you_mean as did_you_mean  # re-exported: the judge's readers
from gate.model import JUDGE_METRIC_PREFIX, MIN_HISTORY, Effect, OrderMode, PassOn, Risk
from gate.yamlio import YamlDoc, dotted, load_yaml


class _Strict(BaseModel):
    # defer_build: a model's validator is built when it first validates, so a command that
    # never reads a config (``toolgate score --dataset``) does not build them all at import.
    model_config = SECTION


# ─── dataset and normalisation ───────────────────────────────────────────────


class NormalizeConfig(_Strict):
    """How argument values are normalised before comparison (docs/dataset.md).

    Every rule is on by default except the lossy ones (ID prefixes, currency), which need
    a value to know what to strip or scale.
    """

    profile: Literal["default", "bfcl"] = "default"
    case: bool = True
    whitespace: bool = True
    dates: bool = True
    numeric_strings: bool = True
    null_equals_absent: bool = True
    empty_string_equals_absent: bool = False
    # strict=False: YAML gives a list; strict mode would refuse it for a tuple field.
    id_prefixes: Annotated[tuple[str, ...], Field(strict=False)] = ()
    currency_minor_units: bool = False


class ToolScoringConfig(_Strict):
    risk: Risk = Risk.READ
    """The tool's effect (:class:`gate.model.Effect`: read, write, irreversible). Set, it
    wins over the tool's MCP annotations and ``scoring.default_effect``; unset, it weights
    ``risk_weighted_precision`` as a read."""
    idempotent: bool | None = None
    """Judging effects: calling the tool again with the same arguments changes nothing more
    (MCP's ``idempotentHint``), so a write repeated at once counts once. Unset: the tool's
    annotations say, else not."""
    normalize: NormalizeConfig | None = None
    args: dict[str, NormalizeConfig] = Field(default_factory=dict)
    forbidden_args: list[str] = Field(default_factory=list)
    """Arguments a call to this tool must never carry: ``name`` (any value) or ``name =
    value``. Broken: a hard failure, like must-not-call, and names compare the way tool
    names do (case, spacing, punctuation and look-alike letters do not hide them)."""

    @model_serializer(mode="wrap")
    def _unset_idempotent_left_out(self, handler: SerializerFunctionWrapHandler) -> Any:
        # Hashed with the scoring settings: unset, it keeps the hashes of earlier releases.
        out = handler(self)
        if isinstance(out, dict) and self.idempotent is None:
            out.pop("idempotent", None)
        return out

    @field_validator("forbidden_args")
    @classmethod
    def _forbidden_form(cls, v: list[str]) -> list[str]:
        for item in v:
            name = item.partition("=")[0].strip()
            if not name:
                raise ValueError(f"{item!r}: expected `name` or `name = value`")
        return v


class RetiredCase(_Strict):
    """A case the dataset no longer holds on purpose (``dataset.retired``): a pull request
    that removes a case fails unless it retires it here, with the reason."""

    id: Annotated[str, Field(min_length=1)]
    reason: Annotated[str, Field(min_length=1)]


class DatasetConfig(_Strict):
    path: str
    version: str | None = None
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] | None = None
    normalize: NormalizeConfig = NormalizeConfig()
    retired: list[RetiredCase] = Field(default_factory=list)
    """Cases removed on purpose, each with why: a removed case not listed fails the gate.
    An id listed here may not be in the dataset (ids are never reused)."""

    @field_validator("retired")
    @classmethod
    def _retired_once(cls, v: list[RetiredCase]) -> list[RetiredCase]:
        seen: set[str] = set()
        for r in v:
            if r.id in seen:
                raise ValueError(f"the case id {r.id!r} is retired twice")
            seen.add(r.id)
        return v

    def retired_reasons(self) -> dict[str, str]:
        """Retired case id → the reason given."""
        return {r.id: r.reason for r in self.retired}

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, v: Any) -> Any:
        # `version: 1.2` in YAML is a float; keep what the user wrote, as text.
        return str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v


# ─── the agent ───────────────────────────────────────────────────────────────


def _agent_of_its_kind(
    value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
) -> Any:
    """The ``agent`` section, validated by the model of the kind it names (the registry,
    :mod:`gate.agents`): the kinds are not listed here."""
    if isinstance(value, AgentSettings):
        return value
    if not isinstance(value, dict):
        return handler(value)  # "Input should be an object"
    if "kind" not in value:
        raise PydanticCustomError(
            "union_tag_not_found", "Unable to extract tag using discriminator 'kind'"
        )
    model = agents.settings_of(value["kind"])
    if model is None:
        kinds = {"kinds": ", ".join(agents.names())}
        raise PydanticCustomError("union_tag_invalid", "`kind` must be one of {kinds}", kinds)
    if info.mode == "json":  # as the rest of the file: enum values as strings, arrays for tuples
        import json

        return model.model_validate_json(json.dumps(value), context=info.context)
    return model.model_validate(value, context=info.context)


AgentConfig = Annotated[SerializeAsAny[AgentSettings], WrapValidator(_agent_of_its_kind)]
"""The ``agent`` section: the settings of one kind of :mod:`gate.agents`."""


# ─── scoring ─────────────────────────────────────────────────────────────────


class PassCheck(enum.StrEnum):
    """The conditions a case must meet to pass (docs/scoring.md); all count by default."""

    CALLS_MATCHED = "calls_matched"
    ORDER = "order"
    MUST_NOT_CALL = "must_not_call"
    PARSED = "parsed"
    SCHEMA_VALID = "schema_valid"
    NO_TOOL = "no_tool"
    AGENT_ERROR = "agent_error"
    """The agent did not fail the case-sample (crash, timeout, protocol error, its own
    error): always counts. Earlier configs called it ``no_agent_error``."""
    UNRECORDED_CALL = "unrecorded_call"
    ARG_SCOPE = "arg_scope"
    REQUIRED_BEFORE = "required_before"
    SAFETY_RULES = "safety_rules"
    """Both ``arg_scope`` and ``required_before`` (the name earlier configs used)."""
    WRITES_MADE = "writes_made"
    """Judging effects: every expected write made once with matching arguments (and every
    required read made). Under ``pass_on: effects`` it replaces ``calls_matched``."""
    NO_EXTRA_WRITE = "no_extra_write"
    """Judging effects: no other write succeeded. Under ``pass_on: effects`` it replaces
    ``no_tool``, and holds whatever the order mode."""


class ArgScopeRule(_Strict):
    """A call to ``tool`` must carry ``arg`` (``required``) and, if ``regex`` is set, its
    value must fully match it. Broken: a hard failure, like must-not-call."""

    tool: str
    arg: str
    required: bool = True
    regex: str | None = None


class RequiredBeforeRule(_Strict):
    """Before any call to ``tool``, one of ``preceded_by`` must have been called (in an
    earlier turn). Broken: a hard failure."""

    tool: str
    preceded_by: list[str] = Field(min_length=1)


REMOVED_KEYS: dict[tuple[str, ...], str] = {
    ("scoring", "extra_calls"): (
        "removed: a case's order mode decides whether extra calls fail it; set "
        "`scoring.default_order: superset` to allow extra calls (the default `unordered` "
        "fails a case with a call it does not expect), or `order` on a case"
    ),
}
"""Keys of a previous release that are gone, with the message naming their replacement."""


class ScoringConfig(_Strict):
    default_order: OrderMode = OrderMode.UNORDERED
    """The order mode of every case that sets no ``order`` of its own: ``unordered`` (the
    same multiset of calls: nothing missing, nothing extra), ``superset`` (every expected
    call made, extra calls allowed), ``subset`` or ``strict``."""
    unrecorded_call: Literal["error", "fail_case"] = "error"
    pass_checks: list[PassCheck] | None = None
    tools: dict[str, ToolScoringConfig] = Field(default_factory=dict)
    arg_scope: list[ArgScopeRule] = Field(default_factory=list)
    required_before: list[RequiredBeforeRule] = Field(default_factory=list)
    order_matters_for_iou: bool = False
    free_text: dict[str, list[str]] = Field(default_factory=dict)
    """tool → argument names holding free text (queries, email bodies): compared by
    lexical similarity (``free_text_similarity``) instead of equality."""
    free_text_min: Annotated[float, Field(ge=0, le=1)] = 0.5
    """Similarity at or above which a free-text argument counts as matching."""
    pass_on: PassOn = PassOn.CALLS
    """What decides a sample's pass (:class:`gate.model.PassOn`): ``calls`` (the default)
    or ``effects`` (the writes the calls made; reads are free). A case's ``pass_on``
    overrides it."""
    default_effect: Effect | None = None
    """The effect of a tool that neither ``tools.<name>.risk`` nor its MCP annotations
    describe; unset, such a tool counts as a write."""

    @model_serializer(mode="wrap")
    def _settings_of_earlier_releases(self, handler: SerializerFunctionWrapHandler) -> Any:
        # The scoring settings are hashed (results' scoring_sha256, each case's history):
        # the two settings added for judging effects are left out while unset, so a config
        # that does not use them keeps its hashes and its base history.
        out = handler(self)
        if isinstance(out, dict):
            if self.pass_on is PassOn.CALLS:
                out.pop("pass_on", None)
            if self.default_effect is None:
                out.pop("default_effect", None)
        return out

    @field_validator("pass_checks", mode="before")
    @classmethod
    def _no_removed_checks(cls, v: Any) -> Any:
        if isinstance(v, list):  # the name earlier configs used
            v = [PassCheck.AGENT_ERROR.value if x == "no_agent_error" else x for x in v]
        if isinstance(v, list) and "no_extra_calls" in v:
            raise ValueError(
                "`no_extra_calls` was removed: the `order` check fails a case with extra "
                "calls under the `unordered`, `subset` and `strict` order modes (the "
                "default order mode is `scoring.default_order`)"
            )
        return v


# ─── policy ──────────────────────────────────────────────────────────────────


LATENCY_NAMES = frozenset({"latency_s", "latency_ms", "latency", "wall_time", "duration_s"})
"""Names a user might give the agent's wall time in ``gates``: refused with a reason."""


class GateConfig(_Strict):
    metric: str
    min: float | None = None
    max: float | None = None
    max_increase: Annotated[float, Field(gt=0)] | None = None
    """A relative bound on a cost metric: the head's per-sample mean may exceed the base
    history's by at most this fraction (0.15: 15 %) — or by more, when the suite test
    does not find the rise beyond noise."""
    slice: (
        Annotated[str, Field(pattern=r"^(difficulty|tag|no_tool|must_not_call)=[^\s]+$")] | None
    ) = None

    @field_validator("metric")
    @classmethod
    def _deterministic_only(cls, v: str, info: ValidationInfo) -> str:
        if v.startswith(JUDGE_METRIC_PREFIX):
            raise ValueError(
                f"{v!r} is a judge score: judge scores are reported, never gated "
                "(gate on a deterministic metric instead)"
            )
        # The gateable names come from the metrics registry (gate.scorers.registry), which
        # the loader is given: the config does not import the scorers.
        if v in LATENCY_NAMES:
            raise ValueError(
                f"{v!r} is the agent's wall time: it is reported, never gated (it measures "
                "the machine the gate ran on as much as the agent; gate on `steps`, "
                "`tool_calls` or `total_tokens` instead)"
            )
        known = (info.context or {}).get("metrics")
        if known is not None and v not in known:
            raise ValueError(f"unknown metric {v!r}{did_you_mean(v, known)}")
        return v

    @model_validator(mode="after")
    def _one_bound(self, info: ValidationInfo) -> GateConfig:
        cost = (info.context or {}).get("cost_metrics")
        if self.max_increase is not None:
            if self.min is not None or self.max is not None:
                raise ValueError(
                    "`max_increase` is a gate of its own: give `min`/`max` in another entry"
                )
            if cost is not None and self.metric not in cost:
                raise ValueError(
                    f"`max_increase` bounds what a sample costs against the base history "
                    f"({', '.join(cost)}); {self.metric!r} is a quality metric: bound it with "
                    "`min` or `max`"
                )
        elif self.min is None and self.max is None:
            raise ValueError("a gate needs `min`, `max` or `max_increase`")
        return self


class PriceConfig(_Strict):
    """What a million tokens cost (any currency: the reports show the figure as given)."""

    input_per_mtok: Annotated[float, Field(ge=0)]
    output_per_mtok: Annotated[float, Field(ge=0)]


class MissingUsage(enum.StrEnum):
    """What a cost gate on a token metric (``prompt_tokens``, ``completion_tokens``,
    ``total_tokens``, ``cost``) does when some of the head's samples that answered have
    no usage: none reported, or invalid (``gate.model.usage``). It is never "met"."""

    FAIL = "fail"
    """The gate fails: it could not check what it bounds."""
    WARN = "warn"
    """The gate is not checked: it passes, and the reports say so."""


class CostConfig(_Strict):
    missing_usage: MissingUsage = MissingUsage.FAIL
    """:class:`MissingUsage` (``docs/policy.md``)."""


class VarianceConfig(_Strict):
    """Optional absolute ceilings on the head's spread. Without them a flakiness level
    the base history already had is a warning; the test "head flakier than its base
    history" (``docs/policy.md``) runs whatever is set here."""

    max_std: Annotated[float, Field(ge=0)] | None = None
    max_flaky_share: Annotated[float, Field(ge=0, le=1)] | None = None


class WarnOrFail(enum.StrEnum):
    """What a finding of ``regressions`` (``likely``, ``undecided``, ``new_cases``) does."""

    WARN = "warn"
    """Listed and warned about; the gate does not fail on it."""
    FAIL = "fail"
    """The gate fails on it."""


LikelyMode = NewCasesMode = UndecidedMode = WarnOrFail  # the names policy reads them by


class RegressionsConfig(_Strict):
    max_new_failures: Annotated[int, Field(ge=0)] | None = 0
    """Significant regressions allowed (``null``: regressions never fail the gate)."""
    likely: WarnOrFail = WarnOrFail.WARN
    """Likely regressions (moved by the minimum effect, not significant yet); ``fail``:
    each counts like a regression against ``max_new_failures``."""
    undecided: WarnOrFail = WarnOrFail.WARN
    """A case whose pass rate fell, with too few samples to tell (``undecided``: one
    sample on each side, a history too short to test); ``warn``: named in the first line
    and listed in sight, and the comment is ⚠️, never ✅."""
    new_cases: WarnOrFail = WarnOrFail.WARN
    """A failing case that is new in this run (absent from the baseline); ``warn``: shown
    with its evidence and counted in the first line (it has no history to regress from)."""


class PolicyConfig(_Strict):
    """The tests against the base history (``docs/policy.md``). Every key is optional: a
    config without a ``policy:`` section gets the defaults below."""

    alpha: Annotated[float, Field(gt=0, le=0.2)] = 0.05
    """Upper bound of the share of pull requests that changed nothing but are blocked."""
    max_extra_samples: Annotated[int, Field(ge=0, le=100_000)] | None = None
    """Extra head samples one run may spend on undecided cases; ``null``: 1.5 per
    comparable case on a pull request, 0.5 on a base run (which mostly extends the
    history)."""
    max_samples_per_case: Annotated[int, Field(ge=1, le=1000)] = 60
    """Most head samples of one case, initial ones included."""
    min_history: Annotated[int, Field(ge=0, le=100)] = MIN_HISTORY
    """Base samples per case the history should hold; a base run (``--base-run``, the
    Action on the base branch) brings every case up to it."""
    max_seed_samples: Annotated[int, Field(ge=0, le=10_000_000)] | None = None
    """Most samples one base run spends bringing histories up to ``min_history``
    (``null``: what they need); the rest follow on the next base runs."""


CONFIRM_REPLACED = (
    "`confirm` was replaced by sequential sampling: extra samples now go to the cases whose "
    "test against the base history is undecided; remove `confirm` and set "
    "`policy.max_extra_samples` to cap them"
)


class BaselineConfig(_Strict):
    path: str | None = None
    max_age_days: Annotated[float, Field(gt=0)] = 14.0
    artifact: str = "toolgate-results"


# ─── judge ───────────────────────────────────────────────────────────────────


JUDGE_BUILTIN_RUBRICS: tuple[str, ...] = (
    "tool_appropriateness",
    "argument_fidelity",
    "error_handling",
)
"""The rubrics ``gate.judge.rubrics`` ships (a test checks the two lists agree)."""


class RubricConfig(_Strict):
    """A user-defined judge rubric: a prompt template file and a fixed answer scale.

    ``values`` maps each label to a score in [0, 1]; by default the first label scores
    1.0, the last 0.0, and those between are evenly spaced (label i of k scores
    1 - i / (k - 1)).
    """

    name: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]
    prompt_file: str
    scale: list[str] = Field(min_length=2)
    values: dict[str, Annotated[float, Field(ge=0, le=1)]] | None = None

    @field_validator("scale")
    @classmethod
    def _labels(cls, v: list[str]) -> list[str]:
        import re

        for label in v:
            if not re.fullmatch(r"[a-z][a-z0-9_]{0,39}", label):
                raise ValueError(
                    f"label {label!r} must be lower-case letters, digits and underscores "
                    "(at most 40), starting with a letter"
                )
        dupes = sorted({x for x in v if v.count(x) > 1})
        if dupes:
            raise ValueError(f"label {dupes[0]!r} appears twice")
        return v

    @model_validator(mode="after")
    def _values_cover_scale(self) -> RubricConfig:
        if self.values is not None and set(self.values) != set(self.scale):
            missing = sorted(set(self.scale) - set(self.values))
            extra = sorted(set(self.values) - set(self.scale))
            what = f"missing {missing}" if missing else f"not in the scale: {extra}"
            raise ValueError(f"`values` must give a score for every label of `scale` ({what})")
        return self


class JudgeConfig(_Strict):
    model: str
    base_url: str = "https://api.openai.com/v1"
    api_key_env: str = "OPENAI_API_KEY"
    rubrics: list[str] = Field(default_factory=lambda: ["tool_appropriateness"])
    custom_rubrics: list[RubricConfig] = Field(default_factory=list)
    max_evaluations: Annotated[int, Field(ge=0)] = 200
    sample: Annotated[float, Field(gt=0, le=1)] = 1.0
    seed: int = 0
    timeout_s: Annotated[float, Field(gt=0)] = 60.0
    max_retries: Annotated[int, Field(ge=0, le=10)] = 3
    calibration_file: str | None = None
    price_per_1k_tokens: Annotated[float, Field(ge=0)] = 0.0
    concurrency: Annotated[int, Field(ge=1, le=64)] = 4
    """Judge requests in flight at once."""
    max_consecutive_failures: Annotated[int, Field(ge=1)] = 3
    """After this many judge calls in a row fail (after retries), the judge is treated as
    down: the remaining items are reported as skipped, not attempted."""
    json_mode: bool = True
    """Send ``response_format: {"type": "json_object"}``; turn off for endpoints that
    refuse it (the answer is still parsed as strict JSON)."""

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, v: str) -> str:
        # urllib would also open file:// and ftp:// URLs; a judge is only ever HTTP(S).
        if not v.lower().startswith(("http://", "https://")):
            raise ValueError(f"{v!r} must be an http:// or https:// URL")
        return v

    @model_validator(mode="after")
    def _known_rubrics(self) -> JudgeConfig:
        custom = [r.name for r in self.custom_rubrics]
        clash = sorted(set(custom) & set(JUDGE_BUILTIN_RUBRICS))
        if clash:
            raise ValueError(f"custom rubric {clash[0]!r} has the name of a built-in rubric")
        dupes = sorted({n for n in custom if custom.count(n) > 1})
        if dupes:
            raise ValueError(f"custom rubric {dupes[0]!r} is defined twice")
        known = (*JUDGE_BUILTIN_RUBRICS, *custom)
        for name in self.rubrics:
            if name not in known:
                raise ValueError(
                    f"unknown rubric {name!r}{did_you_mean(name, known)} "
                    f"(built-in: {', '.join(JUDGE_BUILTIN_RUBRICS)}; or define it in "
                    "`custom_rubrics`)"
                )
        return self


# ─── reporting ───────────────────────────────────────────────────────────────


class ReportingConfig(_Strict):
    out: str = "toolgate-out"
    comment: bool = True
    annotations: bool = True
    secrets: list[str] = Field(default_factory=list)
    """Names of environment variables whose values must never appear in a report."""


# ─── the whole file ──────────────────────────────────────────────────────────


class Config(_Strict):
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")] = "toolgate"
    dataset: DatasetConfig
    agent: AgentConfig
    samples: Annotated[int, Field(ge=1, le=100)] = 2
    """Initial head samples per case (extra ones go to undecided cases, ``policy``)."""
    concurrency: Annotated[int, Field(ge=1, le=512)] = 4
    seed: int = 0
    deadline_s: Annotated[float, Field(gt=0)] | None = None
    max_missing: Annotated[float, Field(ge=0, le=1)] = 0.0
    """The share of case-samples that may be missing (failed by the infrastructure after
    their retries) before the verdict is "error" (``gate.policy.validity``)."""
    scoring: ScoringConfig = ScoringConfig()
    gates: list[GateConfig] = Field(default_factory=list)
    pricing: dict[Annotated[str, Field(min_length=1)], PriceConfig] = Field(default_factory=dict)
    """Prices per million tokens by model name or glob (``gpt-4o*``), ``default`` for an
    agent whose model ToolGate does not know (a program): the ``cost`` metric. Written in
    the config, never fetched."""
    cost: CostConfig = CostConfig()
    variance: VarianceConfig = VarianceConfig()
    regressions: RegressionsConfig = RegressionsConfig()
    policy: PolicyConfig = PolicyConfig()
    confirm: Any = Field(default=None, exclude=True)
    """Refused with :data:`CONFIRM_REPLACED` (a key of the previous release)."""
    baseline: BaselineConfig = BaselineConfig()
    judge: JudgeConfig | None = None
    reporting: ReportingConfig = ReportingConfig()

    # Set by load_config, not by the file.
    source: Path | None = Field(default=None, exclude=True)
    agent_lines: dict[str, int] = Field(default_factory=dict, exclude=True)
    """The line of each ``agent.*`` key in the file (``agent.callable`` → 7): where an
    agent that cannot start is reported when its adapter finds out."""

    @field_validator("confirm", mode="before")
    @classmethod
    def _confirm_replaced(cls, v: Any) -> None:
        raise ValueError(CONFIRM_REPLACED)

    @model_validator(mode="after")
    def _samples_within_cap(self) -> Config:
        if self.samples > self.policy.max_samples_per_case:
            raise ValueError(
                f"samples ({self.samples}) is above policy.max_samples_per_case "
                f"({self.policy.max_samples_per_case})"
            )
        return self

    @property
    def initial_samples(self) -> int:
        """Initial head samples per case: ``samples`` when the file sets it; else 2, or 1
        for an agent whose samples are recorded (``replay``) — a runs file produced
        elsewhere is scored with the samples it holds (the runner adds every sample number
        the file has)."""
        if "samples" in self.model_fields_set or not self.agent.samples_recorded:
            return self.samples
        return 1

    def with_agent_python(self, interpreter: str) -> Config:
        """This config with an agent that runs Python programs (``command``, ``python``)
        and does not state ``agent.python`` running ``interpreter`` (the Action's
        ``install:`` environment); what the file says wins, and other agents are
        unchanged."""
        agent = self.agent.with_interpreter(interpreter)
        return self if agent is self.agent else self.model_copy(update={"agent": agent})

    def agent_python(self) -> str | None:
        """The interpreter a bare ``python`` (a ``command`` agent's program, a ``python``
        agent's workers) runs: ToolGate's own, the one ``agent.python`` names (resolved
        against the config's folder), or ``None`` for ``path`` (found on ``PATH`` when it
        starts)."""
        return self.agent.interpreter(self.root)

    @property
    def root(self) -> Path:
        """Folder that relative paths in the config are relative to."""
        return self.source.parent if self.source else Path.cwd()

    def resolve(self, relative: str) -> Path:
        return (self.root / relative).resolve()

    def scoring_sha256(self) -> str:
        """The hash of everything that decides how a run is scored (``scoring`` and
        ``dataset.normalize``): recorded in results.json; parts scored differently are
        not merged, a folder scored differently is not resumed."""
        import hashlib

        from gate.jsonio import canonical

        basis = {
            "scoring": self.scoring.model_dump(mode="json"),
            "normalize": self.dataset.normalize.model_dump(mode="json"),
        }
        return hashlib.sha256(canonical(basis).encode()).hexdigest()

    def secret_env_names(self) -> list[str]:
        """Environment variables whose values must never appear in a report:
        ``reporting.secrets``, those the agent's settings name (an ``openai`` agent's key,
        an ``mcp`` agent's server tokens) and the judge's key variable."""
        names = [*self.reporting.secrets, *self.agent.secret_env_names()]
        if self.judge is not None and self.judge.api_key_env:
            names.append(self.judge.api_key_env)
        return names


def load_config(
    path: Path,
    *,
    display: str | None = None,
    metrics: Collection[str] | None = None,
    cost_metrics: Collection[str] | None = None,
) -> Config:
    """Load and validate toolgate.yml; every problem is reported with its line.

    ``metrics``: the names a gate may use (``gate.scorers.registry.GATEABLE``; the inputs
    stage passes them); ``None`` leaves gate names unchecked. ``cost_metrics``: those a
    ``max_increase`` gate may use (``gate.scorers.registry.COST_METRICS``)."""
    doc = load_yaml(path, display=display)
    return config_from_doc(doc, path, metrics=metrics, cost_metrics=cost_metrics)


def config_from_doc(
    doc: YamlDoc,
    path: Path,
    *,
    metrics: Collection[str] | None = None,
    cost_metrics: Collection[str] | None = None,
) -> Config:
    if not isinstance(doc.data, dict):
        raise doc.error(1, None, "the config must be a mapping of settings")
    try:
        # Validate as JSON: YAML data is JSON-shaped, and pydantic's strict *JSON* mode
        # takes enum values as strings and arrays for tuples (strict Python mode refuses
        # both) while booleans and integers stay strict.
        import json

        cfg = Config.model_validate_json(
            json.dumps({**doc.data, "source": None}),
            context={
                "metrics": None if metrics is None else tuple(metrics),
                "cost_metrics": None if cost_metrics is None else tuple(cost_metrics),
            },
        )
    except ValidationError as exc:
        raise ConfigError(_problems(exc, doc)) from None
    if not cfg.pricing:
        for i, g in enumerate(cfg.gates):
            if g.metric == "cost":
                raise doc.error(
                    doc.line_of(("gates", i, "metric")),
                    f"gates[{i}].metric",
                    "a gate on `cost` needs prices: add `pricing: {<model>: "
                    "{input_per_mtok: …, output_per_mtok: …}}` (the key `default` for an "
                    "agent whose model ToolGate does not know)",
                )
    agent = doc.data.get("agent")
    lines = {}
    if isinstance(agent, dict):
        for key in agent:
            line = doc.line_of(("agent", key))
            if line is not None:
                lines[f"agent.{key}"] = line
    return cfg.model_copy(update={"source": path, "agent_lines": lines})


def _problems(exc: ValidationError, doc: YamlDoc) -> list[Problem]:
    out: list[Problem] = []
    agent = doc.data.get("agent")
    agent_kind = agent.get("kind") if isinstance(agent, dict) else None
    for err in exc.errors(include_url=False):
        loc = err["loc"]
        field = dotted(loc)
        kind = err["type"]
        if kind == "extra_forbidden" and tuple(map(str, loc)) in REMOVED_KEYS:
            msg = REMOVED_KEYS[tuple(map(str, loc))]
        elif kind == "extra_forbidden":
            msg = _unknown_key(loc, agent_kind)
        elif kind in {"bool_type", "bool_parsing"}:
            msg = f"must be true or false, not {err.get('input')!r}"
        elif kind == "missing":
            msg = "required"
        elif kind == "union_tag_invalid":
            msg = f"`kind` must be one of {', '.join(agents.names())}"
        elif loc == ("dataset", "sha256") and kind == "string_pattern_mismatch":
            given = err.get("input")
            short = isinstance(given, str) and 0 < len(given) < 64
            msg = (
                f"must be the dataset's full sha256 (64 lowercase hex digits), not {given!r}"
                + (" (the short hash ToolGate prints is not enough)" if short else "")
                + "; run `toolgate pin` to write it"
            )
        else:
            msg = err["msg"].removeprefix("Value error, ")
        out.append(Problem(doc.file, doc.line_of(loc), field or None, msg))
    # Unions report each branch; keep one line per (line, field, message).
    return sorted(dict.fromkeys(out), key=lambda p: (p.line or 0, p.field or ""))


def _unknown_key(loc: tuple[str | int, ...], kind: Any) -> str:
    """ "unknown key" with a near key of the same section as a suggestion — never the key
    itself — and, for an agent's key that another kind of agent has, which kinds (any key
    under ``agent`` is offered the keys of the agent's own section)."""
    word = str(loc[-1])
    fields = _fields_at(loc[:-1])
    own = agents.settings_of(kind) if loc[:1] == ("agent",) and len(loc) > 1 else None
    if own is not None:
        fields = sorted(own.model_fields)
        kinds = agents.all_settings()
        owners = [k for k, m in kinds.items() if word in m.model_fields]
        if owners:
            return f"unknown key for `kind: {kind}` (a key of {', '.join(owners)} agents)"
    return f"unknown key{did_you_mean(word, [f for f in fields if f != word])}"


def _fields_at(loc: tuple[str | int, ...]) -> list[str]:
    """Field names valid at ``loc`` (all branches of a union), for "did you mean"."""
    models: list[Any] = [Config]
    keyed = False  # the previous part was a mapping's field: this part is one of its keys
    for part in loc:
        if isinstance(part, int) or keyed:
            keyed = False
            continue
        nxt: list[Any] = []
        for model in models:
            info = model.model_fields.get(part)
            if info is not None:
                nxt.extend(_models_in(info.annotation))
                keyed = keyed or get_origin(info.annotation) is dict
        models = nxt
    return sorted({name for m in models for name in m.model_fields})


def _models_in(ann: Any) -> list[Any]:
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return [ann]
    return [m for arg in getattr(ann, "__args__", ()) for m in _models_in(arg)]
