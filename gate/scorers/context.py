"""What scoring needs besides (case, run), built once per scoring run.

:class:`ScoringContext` holds the config's scoring rules, the per-tool normalisers and the
schema-validator cache; :meth:`ScoringContext.compile` turns a case into a
:class:`CompiledCase` once (expected values canonicalised, argument matchers compiled,
validators looked up, must-not-call names reduced to skeletons) and caches it, so that the
samples of a case — and the cases sharing a tool schema — pay for that work once.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from gate.config import Config, NormalizeConfig, PassCheck, ScoringConfig
from gate.model import (
    Case,
    Effect,
    ExpectedCall,
    OrderMode,
    PassOn,
    Risk,
    ToolSpec,
    is_batched,
    value,
)
from gate.scorers.argmatch import CompiledArgs, compile_args, match_flags
from gate.scorers.effects import declared_effect, effect_of, idempotent_of
from gate.scorers.normalize import Normalizer
from gate.scorers.pricing import Pricing
from gate.scorers.rules import RISK_WEIGHT, name_skeleton, skeletons
from gate.scorers.schema import ArgsValidator, SchemaCache, StringRule


@value
class ToolEntry:
    """One tool as a case offers it: its schema validator, normaliser, risk weight and
    effect (:func:`gate.scorers.effects.effect_of`)."""

    name: str
    spec: ToolSpec | None
    validator: ArgsValidator | None
    norm: Normalizer
    weight: float
    effect: Effect = Effect.WRITE
    idempotent: bool = False
    """Judging effects: the same call again changes nothing more."""


@value
class CompiledList:
    """One expectation list (the canonical one or an acceptable alternative)."""

    calls: tuple[ExpectedCall, ...]
    names: tuple[str, ...]
    matchers: tuple[CompiledArgs, ...]
    counts: Mapping[str, int]
    rank: Mapping[str, int]
    """Tool name → index of its first expected call (batch order for name sequences)."""
    groups: tuple[int, ...] | None = None
    """Per expected call, the batch (assistant turn) it belongs to, when the list was
    written with batches; ``None`` for a plain list (no batch structure to judge)."""


@value
class EffectsList:
    """One expectation list as a case judged by its effects reads it: its expected writes
    and its required reads, each a sub-list (with the same matchers and batches) and the
    index of each of its calls in the whole list (``write_at``, ``read_at``)."""

    writes: CompiledList
    write_at: tuple[int, ...]
    reads: CompiledList
    read_at: tuple[int, ...]


def compiled_list(
    calls: tuple[ExpectedCall, ...],
    matchers: tuple[CompiledArgs, ...],
    groups: tuple[int, ...] | None,
) -> CompiledList:
    """The list of ``calls`` with their matchers and batches (``None``: a plain list)."""
    names = tuple(e.name for e in calls)
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return CompiledList(
        calls=calls,
        names=names,
        matchers=matchers,
        counts=counts,
        rank={n: i for i, n in reversed(list(enumerate(names)))},
        groups=groups,
    )


def sub_list(lst: CompiledList, at: Sequence[int]) -> CompiledList:
    """The calls of ``lst`` at the indices ``at``, with their matchers and batches."""
    return compiled_list(
        tuple(lst.calls[i] for i in at),
        tuple(lst.matchers[i] for i in at),
        None if lst.groups is None else tuple(lst.groups[i] for i in at),
    )


@value
class ScopeRule:
    tool: str
    skeleton: str
    arg: str
    required: bool
    regex: str | None


@value
class ForbiddenArg:
    """One ``forbidden_args`` entry of a tool: names as skeletons, ``value`` None = any."""

    tool: str
    skeleton: str
    arg: str
    arg_skeleton: str
    value: str | None


@value
class BeforeRule:
    tool: str
    skeleton: str
    preceded_by: tuple[str, ...]
    before: frozenset[str]


@value
class CompiledCase:
    case: Case
    lists: tuple[CompiledList, ...]
    tools: Mapping[str, ToolEntry]
    must_not_call: frozenset[str]
    no_tool: bool
    step_budget: int | None
    order: OrderMode
    """The case's own ``order``, else the dataset's ``scoring.default_order``."""
    pass_on: PassOn = PassOn.CALLS
    """The case's own ``pass_on``, else the dataset's ``scoring.pass_on``."""
    effects: tuple[EffectsList, ...] = ()
    """Judging effects: every expectation list's writes and required reads, in the order
    of ``lists`` (empty when the case is judged by its calls)."""


class Pairing(enum.Enum):
    """How expected calls are paired with actual calls of the same tool."""

    MAXIMUM = "maximum"
    """A maximum bipartite matching (docs/scoring.md): the most expected calls met."""
    FIRST_FIT = "first_fit"
    """BFCL's parallel checker (the ``bfcl`` profile): each expected call in order takes the
    first actual call it accepts that is still free; it can miss a pairing that exists."""


class NormalizerTable:
    """One :class:`Normalizer` per tool, built once per run and shared by every case:
    the dataset's rules, specialised by the tool's schema and the config's per-tool and
    per-argument overrides (the same normalisation the scorers use)."""

    def __init__(
        self,
        normalize: NormalizeConfig | None = None,
        scoring: ScoringConfig | None = None,
    ) -> None:
        scoring = scoring or ScoringConfig()
        self._scoring = scoring
        self.base = Normalizer.from_config(normalize, free_text_min=scoring.free_text_min)
        """The dataset's rules, before any tool's schema or override."""
        # (tool, id(parameters)) → (parameters, normaliser); the parameters object is kept
        # so that its id cannot be reused by another schema while cached.
        self._cache: dict[tuple[str, int], tuple[object, Normalizer]] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, config: Config) -> NormalizerTable:
        return cls(config.dataset.normalize, config.scoring)

    def get(self, name: str, spec: ToolSpec | None) -> Normalizer:
        params = spec.parameters if spec is not None else None
        key = (name, id(params))
        hit = self._cache.get(key)
        if hit is not None:
            return hit[1]
        tool_cfg = self._scoring.tools.get(name)
        norm = self.base.for_tool(
            params,
            override=tool_cfg.normalize if tool_cfg else None,
            args=tool_cfg.args if tool_cfg else None,
            free_text=tuple(self._scoring.free_text.get(name, ())),
        )
        with self._lock:
            self._cache[key] = (params, norm)
        return norm


CASE_CACHE_SIZE = 4096
"""Compiled cases kept by a :class:`ScoringContext` (then the cache starts afresh): a large
dataset's compiled cases would otherwise all stay in memory, in every scoring worker."""


@dataclass(slots=True)
class ScoringContext:
    """Everything :func:`gate.scorers.score_sample` needs besides the case and the run."""

    config: ScoringConfig
    normalize: NormalizeConfig
    tools: Mapping[str, ToolSpec]
    norms: NormalizerTable
    schemas: SchemaCache
    checks: frozenset[PassCheck]
    scope_rules: tuple[ScopeRule, ...]
    before_rules: tuple[BeforeRule, ...]
    forbidden_args: tuple[ForbiddenArg, ...] = ()
    step_budget: int | None = None
    has_free_text: bool = False
    pairing: Pairing = Pairing.MAXIMUM
    pricing: Pricing | None = None
    """The config's prices (the ``cost`` metric); ``None``: no ``pricing``."""
    _cases: dict[int, tuple[Case, CompiledCase]] = field(default_factory=dict)
    _entries: dict[tuple[str, int], tuple[ToolSpec | None, ToolEntry]] = field(default_factory=dict)
    _offered: dict[int, tuple[Sequence[ToolSpec], Mapping[str, ToolEntry]]] = field(
        default_factory=dict
    )
    """A case's offered tools (by the identity of its tuple of specs) → their entries."""
    _every_tool: Mapping[str, ToolEntry] | None = None
    """The entries of every dataset tool: the tools of each case that offers them all
    (built once; never changed after)."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def build(
        cls,
        config: ScoringConfig | None = None,
        normalize: NormalizeConfig | None = None,
        tools: Mapping[str, ToolSpec] | None = None,
        *,
        step_budget: int | None = None,
        norms: NormalizerTable | None = None,
        pricing: Pricing | None = None,
    ) -> ScoringContext:
        """A context for one scoring run; compiles a JSON-Schema validator per distinct
        tool schema up front (more are compiled on demand for cases with their own)."""
        config = config or ScoringConfig()
        normalize = normalize or NormalizeConfig()
        tools = dict(tools or {})
        ctx = cls(
            config=config,
            normalize=normalize,
            tools=tools,
            norms=norms if norms is not None else NormalizerTable(normalize, config),
            schemas=SchemaCache(_PROFILES[normalize.profile][0]),
            checks=enabled_checks(config),
            scope_rules=tuple(
                ScopeRule(r.tool, name_skeleton(r.tool), r.arg, r.required, r.regex)
                for r in config.arg_scope
            ),
            forbidden_args=tuple(
                _forbidden(tool, item)
                for tool, tcfg in sorted(config.tools.items())
                for item in tcfg.forbidden_args
            ),
            before_rules=tuple(
                BeforeRule(
                    r.tool, name_skeleton(r.tool), tuple(r.preceded_by), skeletons(r.preceded_by)
                )
                for r in config.required_before
            ),
            step_budget=step_budget,
            has_free_text=bool(config.free_text),
            pairing=_PROFILES[normalize.profile][1],
            pricing=pricing,
        )
        for spec in tools.values():
            ctx.schemas.get(spec.parameters)
        return ctx

    # ── per tool ───────────────────────────────────────────────────────────────

    def risk(self, name: str, spec: ToolSpec | None = None) -> Risk:
        """The tool's weight class for ``risk_weighted_precision``: its effect where a
        source declares one (:func:`gate.scorers.effects.declared_effect`), else a read —
        the weight that metric has always given a tool the config does not mention."""
        said = declared_effect(name, spec.annotations if spec else None, self.config)
        return Risk.READ if said is None else said

    def effect(self, name: str, spec: ToolSpec | None = None) -> Effect:
        """The tool's effect (:func:`gate.scorers.effects.effect_of`): unknown = write."""
        return effect_of(name, spec.annotations if spec else None, self.config)

    def entry(self, name: str, spec: ToolSpec | None) -> ToolEntry:
        """The tool's scoring entry, built once per (name, spec) — cases that share a tools
        file share its specs, and a run has thousands of cases."""
        key = (name, id(spec))
        hit = self._entries.get(key)
        if hit is not None and hit[0] is spec:
            return hit[1]
        entry = ToolEntry(
            name=name,
            spec=spec,
            validator=self.schemas.get(spec.parameters) if spec is not None else None,
            norm=self.norms.get(name, spec),
            weight=RISK_WEIGHT[self.risk(name, spec)],
            effect=self.effect(name, spec),
            idempotent=idempotent_of(name, spec.annotations if spec else None, self.config),
        )
        self._entries[key] = (spec, entry)
        return entry

    # ── per case ───────────────────────────────────────────────────────────────

    def compile(self, case: Case) -> CompiledCase:
        """The case compiled for scoring (cached by the case object: the user turns of a
        conversation share the case's id, each compiled once)."""
        hit = self._cases.get(id(case))
        if hit is not None and hit[0] is case:
            return hit[1]
        with self._lock:
            compiled = self._compile(case)
            if len(self._cases) >= CASE_CACHE_SIZE:
                self._cases.clear()  # bounded: a run's cases come in order, few at a time
            self._cases[id(case)] = (case, compiled)
        return compiled

    def _tools_of(self, offered: Sequence[ToolSpec]) -> Mapping[str, ToolEntry]:
        # Cases that share a tools file share its tuple of specs: built once for them all.
        hit = self._offered.get(id(offered))
        if hit is not None and hit[0] is offered:
            return hit[1]
        tools: dict[str, ToolEntry] = {}
        for spec in offered:
            if spec.name not in tools:
                tools[spec.name] = self.entry(spec.name, spec)
        if len(self._offered) >= CASE_CACHE_SIZE:
            self._offered.clear()
        self._offered[id(offered)] = (offered, tools)
        return tools

    def _compile(self, case: Case) -> CompiledCase:
        tools: Mapping[str, ToolEntry]
        if case.available_tools:
            tools = self._tools_of(case.available_tools)
        else:
            if self._every_tool is None:
                self._every_tool = self._tools_of(tuple(self.tools.values()))
            tools = self._every_tool
        lists = []
        for calls in case.expectation_lists():
            matchers = []
            for e in calls:
                entry = tools.get(e.name)
                norm = entry.norm if entry is not None else self.norms.get(e.name, None)
                exact, defaults = match_flags(e.args_match)
                matchers.append(
                    compile_args(e.args, exact=exact, norm=norm, except_defaults=defaults)
                )
            groups = tuple(e.batch or 0 for e in calls) if is_batched(calls) else None
            lists.append(compiled_list(calls, tuple(matchers), groups))
        budget = case.step_budget if case.step_budget is not None else self.step_budget
        pass_on = case.pass_on if case.pass_on is not None else self.config.pass_on
        effects: tuple[EffectsList, ...] = ()
        if pass_on is PassOn.EFFECTS:
            effects = tuple(self._effects_list(lst, tools) for lst in lists)
        return CompiledCase(
            case=case,
            lists=tuple(lists),
            tools=tools,
            must_not_call=skeletons(case.must_not_call),
            no_tool=case.expected_no_tool,
            step_budget=budget,
            order=case.order if case.order is not None else self.config.default_order,
            pass_on=pass_on,
            effects=effects,
        )

    def tool_effect(self, name: str, tools: Mapping[str, ToolEntry]) -> Effect:
        """The effect of a call of ``name`` in a case offering ``tools`` (a tool it does
        not offer: from the config alone)."""
        entry = tools.get(name)
        return entry.effect if entry is not None else self.effect(name)

    def tool_idempotent(self, name: str, tools: Mapping[str, ToolEntry]) -> bool:
        """Whether calling ``name`` again with the same arguments changes nothing more."""
        entry = tools.get(name)
        return entry.idempotent if entry is not None else idempotent_of(name, None, self.config)

    def _effects_list(self, lst: CompiledList, tools: Mapping[str, ToolEntry]) -> EffectsList:
        writes: list[int] = []
        reads: list[int] = []
        for i, e in enumerate(lst.calls):
            if self.tool_effect(e.name, tools).writes:
                writes.append(i)
            elif e.required:
                reads.append(i)
        return EffectsList(
            writes=sub_list(lst, writes),
            write_at=tuple(writes),
            reads=sub_list(lst, reads),
            read_at=tuple(reads),
        )


def _forbidden(tool: str, item: str) -> ForbiddenArg:
    name, eq, value = item.partition("=")
    arg = name.strip()
    return ForbiddenArg(
        tool, name_skeleton(tool), arg, name_skeleton(arg), value.strip() if eq else None
    )


_PROFILES: dict[str, tuple[StringRule, Pairing]] = {
    "default": (StringRule.EXACT, Pairing.MAXIMUM),
    "bfcl": (StringRule.BFCL, Pairing.FIRST_FIT),
}
"""Profile → how schema ``enum``/``const`` compare strings and how calls are paired."""


def enabled_checks(config: ScoringConfig) -> frozenset[PassCheck]:
    """The pass checks that count (docs/scoring.md).

    Default: every check except ``unrecorded_call``; ``unrecorded_call: fail_case`` adds
    it whatever ``pass_checks`` says; ``agent_error`` always counts (a crashed or
    timed-out run is never a pass). Extra calls are the ``order`` check's business: the
    case's order mode decides (``superset`` allows them).
    """
    if config.pass_checks is None:
        checks = set(PassCheck) - {PassCheck.UNRECORDED_CALL}
    else:
        checks = set(config.pass_checks)
    if config.unrecorded_call == "fail_case":
        checks.add(PassCheck.UNRECORDED_CALL)
    checks.add(PassCheck.AGENT_ERROR)
    return frozenset(checks)
