"""The data model, continued from :mod:`gate.model`: the verdict, what a run will spend,
and the tests against the base history."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import field

from gate.model import NotCompared, value

# ─── the verdict ──────────────────────────────────────────────────────────────


def gate_label(metric: str, slice_: str | None) -> str:
    """How a gate names itself in its reason and its test name: ``call_accuracy`` or
    ``call_accuracy [tag=refund]``."""
    return metric if slice_ is None else f"{metric} [{slice_}]"


class GateOp(enum.StrEnum):
    MIN = "min"
    MAX = "max"
    MAX_INCREASE = "max_increase"
    """A cost metric's per-sample rise over the base history, as a fraction."""


@value
class GateOutcome:
    """One bound of one ``gates:`` entry: the value it saw and whether it held
    (``no_data``: the metric is n/a everywhere or the slice is empty — such a gate fails)."""

    metric: str
    op: GateOp
    threshold: float
    value: float | None
    passed: bool
    reason: str
    slice: str | None = None
    failing_cases: tuple[str, ...] = ()
    no_data: bool = False
    not_checked: bool = False
    """A ``max_increase`` gate without a comparable base history: it passes, and the
    reports say it was not checked (as regressions without a baseline)."""
    undecided: bool = False
    """A ``max_increase`` gate whose figures are above its bound but whose test cannot
    tell a rise that large from noise: it passes, and the reports say why and what
    would decide it (``reason``)."""


@value
class VarianceOutcome:
    """The variance guards (``gate.policy.guards``)."""

    max_std: float | None = None
    observed_max_std: float | None = None
    worst_metric: str | None = None
    stds: Mapping[str, float | None] = field(default_factory=dict)
    max_flaky_share: float | None = None
    flaky_share: float = 0.0
    flaky_cases: tuple[str, ...] = ()
    passed: bool = True
    reasons: tuple[str, ...] = ()
    not_computed: tuple[str, ...] = ()
    """Configured guards whose figure does not exist for this run (fewer than 2 samples
    per case), each with why: shown as not computed, never ✅, never a failure."""


@value
class Verdict:
    """The gate's decision (``gate.policy.decide``) and why, with the notices it adds."""

    passed: bool
    summary: str
    reasons: tuple[str, ...] = ()
    gates: tuple[GateOutcome, ...] = ()
    variance: VarianceOutcome = field(default_factory=VarianceOutcome)
    hard_failures: int = 0
    regressions: int = 0
    notices: tuple[str, ...] = field(default=(), metadata={"written": False})
    """Added to the run's own notices (not written in the verdict of results.json)."""
    likely_regressions: int = 0
    likely_fail: bool = False
    """``regressions.likely: fail``: likely regressions count against the allowance."""
    suite_drops: tuple[str, ...] = ()
    """The suite tests that failed (``case_passed`` for the pass rate)."""
    new_failing: int = 0
    """Cases new in this run (absent from the baseline) that fail."""
    new_fail: bool = False
    """``regressions.new_cases: fail``: those cases fail the gate."""
    not_compared: NotCompared | None = None
    """Set when the run was compared with nothing: why. It passes unless
    ``require_baseline`` is set."""
    require_baseline: bool = False
    """``--require-baseline`` (the Action's ``require-baseline``): a run compared with
    nothing fails."""
    removed: int = 0
    """Cases the baseline holds and this run's dataset does not, not retired in
    ``dataset.retired``: each fails the gate."""
    undecided: int = 0
    """Cases whose pass rate fell with too few samples to tell (``undecided`` flips)."""
    undecided_fail: bool = False
    """``regressions.undecided: fail``: those cases fail the gate."""


# ─── what a run will spend ────────────────────────────────────────────────────


@value
class RunBill:
    """What a run will spend on the agent, stated before it starts (``toolgate check``
    prints it first): ``initial`` agent runs (``cases`` × ``samples``), the ``seeding``
    samples a base run brings the histories of ``seeded_cases`` cases up to
    ``min_history`` with (within ``max_seed``, ``policy.max_seed_samples``), and at most
    ``extra_cap`` extra samples for undecided cases. With ``pricing``: the estimated cost
    of one agent run (``cost_per_run``, from the base history's recorded token usage) or,
    in ``cost_basis``, why it cannot be estimated yet."""

    cases: int
    samples: int
    initial: int
    seeding: int
    seeded_cases: int
    extra_cap: int
    min_history: int
    max_seed: int | None
    base_run: bool
    cost_per_run: float | None = None
    cost_basis: str | None = None
    """How the cost was estimated, or why it was not (``None``: no ``pricing``)."""

    @property
    def runs(self) -> int:
        """Agent runs the run makes whatever its samples show."""
        return self.initial + self.seeding

    @property
    def most(self) -> int:
        """Agent runs the run makes at most."""
        return self.runs + self.extra_cap


# ─── the tests against the base history ───────────────────────────────────────


@value
class FlakinessInfo:
    """The variance guard: head significantly flakier than its base history blocks; a
    flakiness level the base already had is a warning; the optional absolute ceiling."""

    cases: int
    """Comparable cases with ≥ 2 samples on both sides (the test's cases)."""
    base_spread: float | None
    head_spread: float | None
    p_value: float
    alpha: float
    flakier: bool
    """The test: head significantly flakier than its base history
    (``gate.policy.flakiness``)."""
    head_flaky: tuple[str, ...] = field(default_factory=tuple)
    already_flaky: tuple[str, ...] = field(default_factory=tuple)
    """Flaky on the head and in the base history: the warning."""
    newly_flaky: tuple[str, ...] = field(default_factory=tuple)
    head_share: float = 0.0
    ceiling: float | None = None
    over_ceiling: bool = False

    @property
    def blocked(self) -> bool:
        return self.flakier or self.over_ceiling
