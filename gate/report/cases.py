"""The report view's sections about cases (:mod:`gate.report.view`): what broke first —
hard failures, regressions, new cases that fail, cases that got worse with too few
samples to tell — then the rest: failing as before, fixed, flaky, within noise, new and
passing, the tests against the base history, every case; and in the full report every
failing sample's evidence and every failing conversation turn by turn.

Words only here, as :mod:`gate.report.parts`; escaping and layout are the renderers'.
A case is listed once in sight: a case that broke a hard rule is listed under the hard
failures and counted, not repeated, in the sections after them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from gate.model import CaseOutcome, Comparability, FlipKind
from gate.report import fmt
from gate.report.escape import calls_repr
from gate.report.lookup import (
    case_index,
    case_part,
    checks,
    comparable,
    drop,
    fail_as_before,
    first_failing,
    flips,
    hard_kinds,
    hard_samples,
    ids,
    join,
    new_failing_flips,
    not_run,
    plural,
    rates,
    regressions,
    samples_of,
    undecided,
)
from gate.report.parts import (
    Box,
    Cell,
    Fixed,
    Item,
    Key,
    Lazy,
    Para,
    Placement,
    Row,
    Section,
    Table,
)
from gate.report.sentences import (
    Code,
    Sentence,
    check_sentences,
    elided_calls,
    ordered_checks,
)
from gate.results import CaseResult, Flip, HardFailureResult, Results, SampleResult, sampled

GROUP_SHOWN = 6
"""Cases named in a grouped hard-failure row before the rest are folded."""
SHOW_FAILING = 5
"""Failing cases in sight in a report without a comparison (the rest folded)."""
SHOW_IDS = 30
"""Case ids named in a one-line list."""

FOLDED = Placement.FOLDED
FULL = Placement.FULL

EVIDENCE = ("Failing checks", "Expected", "Actual", "Why")


def _folded(key: Key, title: str, table: Table) -> list[Section]:
    return [Section(key, [title], FOLDED, table=table)]


def _kinds(found: Sequence[Flip], kind: FlipKind) -> str:
    """``2 significant, 1 likely``: of flips of ``kind`` and its likely form."""
    n = sum(1 for f in found if FlipKind(f.kind) is kind)
    said = [f"{n} significant" if n else "", f"{len(found) - n} likely" if len(found) > n else ""]
    return ", ".join(x for x in said if x)


def _flip_case(f: Flip, case: CaseResult | None) -> Sentence:
    return case_part(f.case_id, f.line or (case.line if case else None))


# ─── a run that is not valid; missing and not-run samples ────────────────────


def not_valid(results: Results) -> Section:
    """Why a run decided nothing (its verdict is "error"), its missing samples, the
    first errors."""
    err = results.run_error
    assert err is not None
    said = ["This run is not valid: it says nothing about the agent. ", err.reason, "."]
    intro = [Para([*said, " Fix the cause and run it again."]), *_missing_paras(results)]
    items = [Item([Code(e)]) for e in err.first_errors]
    title = ["The run is not valid"]
    return Section(Key.NOT_VALID, title, intro=tuple(intro), items=items, what="errors")


def _missing_paras(results: Results) -> list[Para]:
    gone = results.missing
    if gone is None:
        return []
    out: list[Para] = []
    failed = {k: n for k, n in gone.by_reason.items() if k != "not_run"}
    if failed:
        n = sum(failed.values())
        why = ", ".join(f"{k} {c}" for k, c in failed.items())
        said = f"Missing case-samples: {n} of {gone.planned} ({why})."
        out.append(Para([said, " The infrastructure failed them: neither failures nor passes."]))
    skipped, short = not_run(results), not_run(results, whole=False)
    part = plural(sum(gone.not_run[c] for c in short), "sample")
    for found, some, lacks in ((skipped, "", "has none"), (short, f"{part} of ", "lacks some")):
        if found:
            text: Sentence = [f"Not run: {some}{plural(len(found), 'case')} ("]
            text += [*ids(found, SHOW_IDS), f"). The runs file {lacks} of their runs; "]
            text.append("agent.missing: skip gates on the runs it has. ")
            text.append("Not run is neither a failure nor a pass.")
            out.append(Para(text, Box.WARNING))
    unsampled = [
        c.id
        for c in results.cases
        if c.samples and gone.per_case.get(c.id) == len(c.samples) and c.id not in skipped
    ]
    if unsampled:
        lost: Sentence = [
            f"Not sampled: {plural(len(unsampled), 'case')} (",
            *ids(unsampled, SHOW_IDS),
        ]
        out.append(Para([*lost, ") lost every sample. Neither passed nor failed."]))
    return out


def missing(results: Results) -> list[Section]:
    paras = _missing_paras(results)
    return [Section(Key.MISSING, [], intro=tuple(paras))] if paras else []


# ─── hard failures ────────────────────────────────────────────────────────────


def hard_failures(results: Results) -> list[Section]:
    """Cases that broke a hard rule, grouped: the cases that broke the same rule with the
    same tool for the same reason share one row, each named once with its counts (base
    history → head for a regression)."""
    if not results.hard_failures:
        return []
    by_case: dict[str, list[HardFailureResult]] = defaultdict(list)
    for hf in results.hard_failures:
        by_case[hf.case_id].append(hf)
    rank = {k: i for i, k in enumerate(hard_kinds(results))}

    def first_of(items: list[HardFailureResult]) -> HardFailureResult:
        kind = min((rank[h.kind], h.kind) for h in items)[1]
        return min((h for h in items if h.kind == kind), key=lambda h: h.sample)

    ordered = sorted(by_case.items(), key=lambda kv: ((rank[first_of(kv[1]).kind]), kv[0]))
    cases = case_index(results)
    listed = {f.case_id: f for f in flips(results, FlipKind.REGRESSION, FlipKind.LIKELY_REGRESSION)}
    significant = sum(
        1 for c in by_case if c in listed and FlipKind(listed[c].kind) is FlipKind.REGRESSION
    )
    likely = sum(1 for c in by_case if c in listed) - significant
    of_them = "".join(
        f", {n} of them {'a ' + word if n == 1 else word + 's'}"
        for n, word in ((significant, "regression"), (likely, "likely regression"))
        if n
    )
    groups: dict[tuple[str, str, str], list[str]] = {}
    for case_id, items in ordered:
        first = first_of(items)
        key = (first.kind, str(first.call.get("name", "")), first.message)
        groups.setdefault(key, []).append(case_id)

    def row(item: tuple[tuple[str, str, str], list[str]]) -> Row:
        (kind, name, message), cids = item
        first = first_of(by_case[cids[0]])
        named = [_case_counts(c, cases.get(c), listed.get(c)) for c in cids]
        shown: Sentence = [f"{plural(len(cids), 'case')}: ", *join(named[:GROUP_SHOWN], ", ")]
        rest = join(named[GROUP_SHOWN:], ", ")
        call = calls_repr(first.call) if len(cids) == 1 and first.call else name or "—"
        more = plural(len(named) - GROUP_SHOWN, "more case") if rest else ""
        return Row(
            ([Code(kind)], [Code(call)], [message], Cell((shown,), (rest,) if rest else (), more))
        )

    title = (
        f"🛑 Hard failures ({samples_of(len(by_case), hard_samples(results))}{of_them}) — these "
        "fail the gate whatever the averages"
    )
    table = Table(
        ("Rule", "Call", "Why", "Cases"),
        Lazy(list(groups.items()), row),
        keep=10,
        cut=7,
        what="hard failure groups",
    )
    return [Section(Key.HARD, [title], table=table)]


def _case_counts(case_id: str, case: CaseResult | None, flip: Flip | None) -> Sentence:
    """``refund-damaged`` 40/40 → 0/3: a case with its counts."""
    if flip is not None:
        return [Code(case_id), Fixed(f" {rates(flip, p=False)}")]
    if case is None:
        return [Code(case_id)]
    head = fmt.rate_fraction(case.pass_rate, len(case.samples))
    t = case.test
    if t is not None and t.base_samples:
        return [Code(case_id), f" {t.base_passes}/{t.base_samples} → {head}"]
    return [Code(case_id), f" {head}"]


# ─── regressions, new failing cases, undecided changes ───────────────────────


def evidence_cells(
    sample: SampleResult | None, failed: Sequence[str]
) -> tuple[Cell | Sentence, ...]:
    """``failing checks | expected | actual | why`` of one case's first failing sample:
    matched calls elided on both sides, a sentence per failing check, strongest first."""
    ev = sample.evidence if sample else {}
    exp, act = elided_calls(ev)
    found = [sn for _, sn in check_sentences(sample)] if sample else []
    why = Cell(tuple(found[:1]), tuple(found[1:]), plural(len(found) - 1, "more reason"))
    return (
        checks(ordered_checks(failed)),
        [Code(exp)] if exp is not None else ["—"],
        [Code(act)] if act is not None else ["—"],
        why if found else ["—"],
    )


def _flip_evidence(f: Flip, case: CaseResult | None) -> tuple[Cell | Sentence, ...]:
    sample = first_failing(case)
    failed = f.failed_checks or (list(sample.failed_checks) if sample else [])
    if sample is None and f.reason:
        return (checks(failed), ["—"], ["—"], [f.reason])
    return evidence_cells(sample, failed)


def _drift_of(results: Results) -> dict[str, list[str]]:
    """Case id → the tools it uses whose definition changed."""
    out: dict[str, list[str]] = defaultdict(list)
    cmp = results.comparison
    if cmp is None:
        return out
    drifted = {d.tool for d in cmp.tool_drift}
    for d in cmp.tool_drift:
        for cid in d.flipped_cases:
            out[cid].append(d.tool)
    for f in cmp.flips:
        out[f.case_id] += [t for t in f.drifted_tools if t not in out[f.case_id]]
    for c in results.cases:
        out[c.id] += [t for t in c.tools if t in drifted and t not in out[c.id]]
    return out


def regressions_section(results: Results) -> list[Section]:
    """Regressions, significant then likely, worst first — those that broke a hard rule
    are under the hard failures (each case is listed once), counted in the title."""
    found = regressions(results)
    hard = {h.case_id for h in results.hard_failures}
    shown = [f for f in found if f.case_id not in hard]
    if not shown:
        return []
    cases = case_index(results)
    drift = _drift_of(results)

    def row(f: Flip) -> Row:
        case = cases.get(f.case_id)
        counts: list[Sentence] = [[Fixed(rates(f))]]
        if FlipKind(f.kind) is FlipKind.LIKELY_REGRESSION:
            counts.append([f"likely: {f.because or 'not significant yet'}"])
        cells = list(_flip_evidence(f, case))
        if drift.get(f.case_id):
            why = cells[-1] if isinstance(cells[-1], Cell) else Cell((cells[-1],))
            tools: Sentence = ["🔧 tool definition changed: ", *ids(drift[f.case_id], 8)]
            cells[-1] = Cell((*why.lines, tools), why.more, why.more_label)
        return Row((_flip_case(f, case), Cell(tuple(counts)), *cells))

    counts = _kinds(shown, FlipKind.REGRESSION)
    above = len(found) - len(shown)
    more = f"; {above} more under Hard failures" if above else ""
    table = Table(
        ("Case", "Passing samples (base history → head)", *EVIDENCE),
        Lazy(shown, row),
        keep=10,
        cut=6,
        what="regressions",
    )
    return [
        Section(
            Key.REGRESSIONS,
            [f"🔻 Regressions ({counts}{more}) — worse than the base history"],
            table=table,
        )
    ]


def new_failing(results: Results) -> list[Section]:
    """Cases this change added that fail, with their evidence: no history to regress
    from, shown as plainly as a regression."""
    fresh = new_failing_flips(results)
    if not fresh:
        return []
    hard = {h.case_id for h in results.hard_failures}
    shown = [f for f in fresh if f.case_id not in hard]
    v = results.verdict
    rule = (
        "they fail the gate (regressions.new_cases: fail)"
        if v is not None and v.new_fail
        else "a warning: set regressions.new_cases: fail to block on them"
    )
    above = len(fresh) - len(shown)
    more = f"; {above} more under Hard failures" if above else ""
    title = (
        f"🆕 New cases that fail ({len(shown)}{more}) — added by this change, no history to "
        f"compare with; {rule}"
    )
    if not shown:
        return [Section(Key.NEW_FAILING, [title])]
    cases = case_index(results)

    def row(f: Flip) -> Row:
        case = cases.get(f.case_id)
        head: Sentence = [Fixed(fmt.rate_fraction(f.head_pass_rate, f.head_samples))]
        return Row((_flip_case(f, case), head, *_flip_evidence(f, case)))

    table = Table(
        ("Case", "Passing samples", *EVIDENCE),
        Lazy(shown, row),
        keep=10,
        cut=6,
        what="new failing cases",
    )
    return [Section(Key.NEW_FAILING, [title], table=table)]


def undecided_sections(results: Results) -> list[Section]:
    """The cases whose pass rate moved by the minimum effect with too few samples to
    tell: those that got worse in sight, with their counts, their evidence and what would
    decide them; those that got better folded. Never "flaky" (no side disagreed within
    itself), never "within noise" (no test could have told)."""
    out: list[Section] = []
    cases = case_index(results)
    v = results.verdict
    for worse in (True, False):
        found = undecided(results, worse=worse)
        if not found:
            continue
        same = {f.because for f in found}
        shared = next(iter(same)) if len(same) == 1 else None

        def row(f: Flip, shared: str | None = shared, worse: bool = worse) -> Row:
            case = cases.get(f.case_id)
            counts: list[Sentence] = [[Fixed(rates(f, p=False))]]
            if shared is None and f.because:
                counts.append([f.because])
            evidence = _flip_evidence(f, case) if worse else (checks(f.failed_checks),)
            return Row((_flip_case(f, case), Cell(tuple(counts)), *evidence))

        intro: list[Para] = []
        if shared:
            intro.append(Para([shared[0].upper() + shared[1:] + "."]))
        if worse:
            rule = (
                "They fail the gate (regressions.undecided: fail)."
                if v is not None and v.undecided_fail
                else "A warning: set regressions.undecided: fail to block on them."
            )
            intro.append(Para([rule]))
            columns: tuple[str, ...] = ("Case", "Passing samples (base → head)", *EVIDENCE)
            title = f"⚠️ Undecided: {plural(len(found), 'case')} got worse, too few samples to tell"
        else:
            columns = ("Case", "Passing samples (base → head)", "Failing checks on base")
            title = f"Undecided: {plural(len(found), 'case')} got better, too few samples to tell"
        table = Table(
            columns, Lazy(found, row), keep=10 if worse else 0, cut=6 if worse else 3, what="cases"
        )
        out.append(
            Section(
                Key.UNDECIDED if worse else Key.UNDECIDED_RISES,
                [title],
                Placement.VISIBLE if worse else FOLDED,
                intro=tuple(intro),
                table=table,
            )
        )
    return out


# ─── cases without an answer; failing cases without a comparison ─────────────


def no_answer(results: Results) -> list[Section]:
    """The cases the agent failed on every sample before answering, apart from the cases
    it answered wrongly (those another section lists are left there)."""
    from gate.results import failed_by_agent

    listed = {f.case_id for f in (results.comparison.flips if results.comparison else [])}
    cids = [c for c in failed_by_agent(results) if c not in listed]
    if not cids:
        return []
    cases = case_index(results)

    def row(cid: str) -> Row:
        c = cases[cid]
        error = (c.samples[0].error or "").strip().splitlines()
        return Row(
            (case_part(c.id, c.line), [str(len(c.samples))], [Code(error[0] if error else "")])
        )

    title = f"⚠️ No answer ({plural(len(cids), 'case')}) — every sample failed before an answer"
    table = Table(
        ("Case", "Samples", "Error"), Lazy(cids, row), right=(1,), keep=20, cut=5, what="cases"
    )
    return [Section(Key.NO_ANSWER, [title], table=table)]


def failing(results: Results) -> list[Section]:
    """With no comparable baseline there are no flips: the cases that fail on every
    sample instead (flaky ones apart), with their evidence — the first few in sight,
    the rest folded."""
    if comparable(results):
        return []
    from gate.results import failed_by_agent

    hard = {h.case_id for h in results.hard_failures}
    apart = set(failed_by_agent(results)) | set(not_run(results))
    found = sorted(
        (
            c
            for c in results.cases
            if not c.passed and not c.flaky and c.id not in hard and c.id not in apart
        ),
        key=lambda c: (c.pass_rate, c.id),
    )
    if not found:
        return []

    def row(c: CaseResult) -> Row:
        sample = first_failing(c)
        rate: Sentence = [Fixed(fmt.rate_fraction(c.pass_rate, sampled(results, c)))]
        cells = evidence_cells(sample, list(sample.failed_checks) if sample else [])
        return Row((case_part(c.id, c.line), rate, *cells))

    n = sum(len(c.samples) for c in found)
    passed = results.verdict is not None and results.verdict.passed
    title = (
        f"Known failures ({samples_of(len(found), n)}) — fail on every sample; the gate passes "
        "with them"
        if passed
        else f"❌ Failing cases ({samples_of(len(found), n)}) — fail on every sample"
    )
    columns = ("Case", "Passing samples", *EVIDENCE)
    shown = Lazy(found[:SHOW_FAILING], row)
    table = Table(columns, shown, keep=SHOW_FAILING, cut=6, what="failing cases")
    out = [Section(Key.FAILING, [title], table=table)]
    rest = found[SHOW_FAILING:]
    if rest:
        table = Table(columns, Lazy(rest, row), cut=2, what="failing cases")
        out += _folded(Key.FAILING, plural(len(rest), "more failing case"), table)
    return out


# ─── the rest: as before, fixed, flaky, noise, new and passing ───────────────


def known(results: Results) -> list[Section]:
    """The cases that failed on the base too (and broke no hard rule): what this change
    did not do, in one line."""
    hard = {h.case_id for h in results.hard_failures}
    found = [c.id for c in fail_as_before(results) if c.id not in hard]
    if not found:
        return []
    text: Sentence = [
        f"Failing as before: {plural(len(found), 'case')} failed on the base too: ",
        *ids(found, SHOW_IDS),
        ".",
    ]
    return [Section(Key.KNOWN, [], intro=(Para(text, Box.NOTE),))]


def fixed(results: Results) -> list[Section]:
    found = sorted(
        flips(results, FlipKind.FIX, FlipKind.LIKELY_FIX),
        key=lambda f: (FlipKind(f.kind) is not FlipKind.FIX, drop(f), f.case_id),
    )
    if not found:
        return []

    def row(f: Flip) -> Row:
        said = rates(f) + (
            f" — likely: {f.because or 'not significant yet'}"
            if FlipKind(f.kind) is FlipKind.LIKELY_FIX
            else ""
        )
        return Row((case_part(f.case_id, f.line), [Fixed(said)]))

    columns = ("Case", "Passing samples (base history → head)")
    table = Table(columns, Lazy(found, row), cut=3, what="fixed cases")
    title = f"✅ Fixed ({_kinds(found, FlipKind.FIX)}) — better than the base history"
    return [Section(Key.FIXED, [title], table=table)]


def flaky(results: Results) -> list[Section]:
    """Cases whose samples disagree within one side (flaky), and cases whose change a
    test could have told and did not (within noise): folded, each case once."""
    noise = {f.case_id: f for f in flips(results, FlipKind.NOISE)}
    elsewhere = {
        f.case_id
        for f in (results.comparison.flips if results.comparison is not None else [])
        if FlipKind(f.kind) is not FlipKind.NOISE
    } | {h.case_id for h in results.hard_failures}
    out: list[Section] = []
    within = [c for c in results.cases if c.id in noise and c.id not in elsewhere]
    shaky = [c for c in results.cases if c.flaky and c.id not in noise and c.id not in elsewhere]

    def row(c: CaseResult) -> Row:
        failed = sorted({x for s in c.samples if not s.passed for x in s.failed_checks})
        f = noise.get(c.id)
        change = rates(f) if f else fmt.rate_fraction(c.pass_rate, sampled(results, c))
        return Row((case_part(c.id, c.line), [Fixed(change)], checks(failed)))

    def rows(found: list[CaseResult]) -> Lazy[Row]:
        return Lazy(sorted(found, key=lambda c: (c.pass_rate, c.id)), row)

    if shaky:
        title = f"🎲 Flaky ({len(shaky)}) — their samples disagree: some pass, some fail"
        columns = ("Case", "Passing samples", "Checks failing on some samples")
        out += _folded(Key.FLAKY, title, Table(columns, rows(shaky), cut=3, what="flaky cases"))
    if within:
        title = f"Within noise ({len(within)}) — changed; a test could have told, and did not"
        columns = ("Case", "Passing samples (base history → head)", "Checks failing")
        out += _folded(Key.NOISE, title, Table(columns, rows(within), cut=3, what="cases"))
    return out


def new_passing(results: Results) -> list[Section]:
    """New cases that pass, and removed cases of a file without ``changes`` (an earlier
    release's): listed once each."""
    fresh = {f.case_id for f in new_failing_flips(results)}
    new = [f for f in flips(results, FlipKind.NEW) if f.case_id not in fresh]
    cmp = results.comparison
    counted = {r.case_id for r in cmp.changes.removed} if cmp is not None else set()
    removed = [f for f in flips(results, FlipKind.REMOVED) if f.case_id not in counted]
    if not new and not removed:
        return []
    rows = [
        Row(
            (
                case_part(f.case_id, f.line),
                ["new"],
                [Fixed(fmt.rate_fraction(f.head_pass_rate, f.head_samples))],
            )
        )
        for f in sorted(new, key=lambda f: f.case_id)
    ]
    rows += [
        Row(([Code(f.case_id)], ["removed"], ["—"]))
        for f in sorted(removed, key=lambda f: f.case_id)
    ]
    title = (
        f"New and removed cases ({len(new)} new that pass, {len(removed)} removed)"
        if removed
        else f"New cases that pass ({len(new)})"
    )
    columns = ("Case", "Change", "Passing samples (head)")
    return _folded(Key.NEW_PASSING, title, Table(columns, rows, cut=3, what="new or removed cases"))


def history(results: Results) -> list[Section]:
    """The tests against the base history: what this run could detect and spent, in
    words; then, folded, the cases the sampling cap left undecided and the cases not
    comparable (changed since their history)."""
    from gate.report.compared import not_compared

    pol = results.policy
    if pol is None or results.comparison is None or not_compared(results) is not None:
        return []
    listed = {f.case_id for f in results.comparison.flips} | {
        h.case_id for h in results.hard_failures
    }
    tests = [(c, c.test) for c in results.cases if c.test is not None]
    capped = [c for c, t in tests if t.outcome == CaseOutcome.UNDECIDED and c.id not in listed]
    changed = [
        c
        for c, t in tests
        if t.outcome == CaseOutcome.NOT_COMPARABLE and t.comparability == Comparability.CHANGED
    ]
    intro = tuple(Para([s]) for s in pol.detect)
    out = [Section(Key.HISTORY, ["🧪 Tests against the base history"], intro=intro)]

    def counts(c: CaseResult) -> Row:
        t = c.test
        assert t is not None
        base = "—" if t.base_samples is None else f"{t.base_passes}/{t.base_samples}"
        p = "" if t.p_worse is None else f" (p = {t.p_worse:.2g})"
        said = f"{base} → {t.head_passes}/{t.head_samples}{p}"
        return Row(
            (case_part(c.id, c.line), [Fixed(said if c.id in capped_ids else said.split(" → ")[1])])
        )

    capped_ids = {c.id for c in capped}
    if capped:
        title = (
            f"Undecided ({len(capped)}) — the sampling cap stopped them before a test could tell"
        )
        columns = ("Case", "Passing samples (base history → head)")
        out += _folded(
            Key.HISTORY, title, Table(columns, Lazy(capped, counts), cut=3, what="undecided cases")
        )
    if changed:
        title = f"Not comparable ({len(changed)}) — changed since its history, which starts again"
        table = Table(
            ("Case", "Passing samples (head)"),
            Lazy(changed, counts),
            cut=3,
            what="not comparable cases",
        )
        out += _folded(Key.NOT_COMPARABLE, title, table)
    return out


# ─── the full report: every failing sample, every failing conversation ───────


def group_samples(
    case: CaseResult, describe: Callable[[SampleResult], list[str]]
) -> list[tuple[list[int], list[str]]]:
    """Failing samples with identical descriptions grouped (sample numbers ascending),
    groups in order of their first sample: three identical failures read as one."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for s in sorted(case.samples, key=lambda s: s.sample):
        if not s.passed:
            groups.setdefault(tuple(describe(s)), []).append(s.sample)
    return [(numbers, list(lines)) for lines, numbers in groups.items()]


def numbers(samples: Sequence[int], initial: int) -> str:
    """Sample numbers, runs collapsed (``0–10``), the extra ones said so."""
    nums = sorted(set(samples))

    def runs(ns: Sequence[int]) -> str:
        parts: list[str] = []
        i = 0
        while i < len(ns):
            j = i
            while j + 1 < len(ns) and ns[j + 1] == ns[j] + 1:
                j += 1
            parts.append(str(ns[i]) if j == i else f"{ns[i]}–{ns[j]}")
            i = j + 1
        return ", ".join(parts)

    first = runs([n for n in nums if n < initial])
    extra = [n for n in nums if n >= initial]
    return first + (("; " if first else "") + f"{runs(extra)} extra" if extra else "")


def _sample_lines(s: SampleResult) -> list[Sentence]:
    ev = s.evidence
    out: list[Sentence] = [checks(s.failed_checks)]
    out += [[f"{k} ", Code(calls_repr(ev[k]))] for k in ("expected", "actual") if k in ev]
    out += [sn for _, sn in check_sentences(s)]
    return out


def evidence(results: Results) -> list[Section]:
    """Every failing case with the evidence of its failing samples (the full report)."""
    found = [c for c in results.cases if not c.passed]
    if not found:
        return []

    def item(c: CaseResult) -> Item:
        subs = []
        for nums, _ in group_samples(c, lambda s: ["".join(map(str, x)) for x in _sample_lines(s)]):
            s = next(x for x in c.samples if x.sample == nums[0])
            said = _sample_lines(s)
            label = "sample" if len(nums) == 1 else "samples"
            more = tuple(Item(x) for x in said[1:])
            subs.append(Item([f"{label} {', '.join(map(str, nums))}: ", *said[0]], more))
        head: Sentence = [
            *case_part(c.id, c.line),
            f" — {fmt.rate_fraction(c.pass_rate, len(c.samples))} samples pass",
        ]
        return Item(head, tuple(subs))

    return [
        Section(
            Key.EVIDENCE,
            [f"Failing cases ({len(found)}), with evidence"],
            FULL,
            items=Lazy(found, item),
            keep=20,
            cut=2,
            what="failing cases",
        )
    ]


def conversations(results: Results) -> list[Section]:
    """Every failing conversation turn by turn (the full report): what the user said in
    each turn, what the agent called, whether the turn passed."""
    found = [c for c in results.cases if not c.passed and any(s.turns for s in c.samples)]
    if not found:
        return []

    def table(s: SampleResult) -> Table:
        said = check_sentences(s, where=False)
        rows = []
        for i, t in enumerate(s.turns or (), start=1):
            called = ids(list(t.called), 20) if t.called else ["—"]
            if not t.ran:
                result: Sentence = ["not reached"]
            elif t.passed:
                result = ["✅ passed"]
            else:
                result = ["❌ ", *checks(ordered_checks(t.failed_checks))]
                if i == s.first_failing_turn and said:
                    result += [" — ", *said[0][1]]
            rows.append(Row(([str(i)], [t.user or ""], called, result)))
        return Table(("Turn", "The user", "The agent called", "Result"), rows, right=(0,))

    def item(c: CaseResult) -> list[Item]:
        out = []
        for nums, _ in group_samples(c, lambda s: [repr(table(s).rows)]):
            first = next(s for s in c.samples if s.sample == nums[0])
            at = first.first_failing_turn
            where = f" failed at turn {at} of {len(first.turns or ())}" if at else " failed"
            label = "sample" if len(nums) == 1 else "samples"
            out.append(
                Item(
                    [
                        *case_part(c.id, c.line),
                        f" — {label} {numbers(nums, results.samples)}{where}",
                    ],
                    table=table(first),
                    table_label="turn by turn",
                )
            )
        return out

    items = [x for c in found for x in item(c)]
    return [
        Section(
            Key.CONVERSATIONS,
            [f"Failing conversations, turn by turn ({len(found)})"],
            FULL,
            items=items,
            keep=10,
            cut=2,
            what="failing conversations",
        )
    ]


def all_cases(results: Results) -> list[Section]:
    if not results.cases:
        return []

    def row(c: CaseResult) -> Row:
        failed = sorted({x for s in c.samples if not s.passed for x in s.failed_checks})
        rate: Sentence = [Fixed(fmt.rate_fraction(c.pass_rate, sampled(results, c)))]
        mark: Sentence = ["✅" if c.passed else "❌"]
        shaky: Sentence = ["🎲" if c.flaky else ""]
        return Row(([Code(c.id)], mark, rate, shaky, checks(failed), [str(c.line or "")]))

    n_pass = sum(1 for c in results.cases if c.passed)
    title = (
        f"All cases ({len(results.cases):,}: {n_pass:,} pass, {len(results.cases) - n_pass:,} fail)"
    )
    columns = ("Case", "Result", "Passing samples", "Flaky", "Failing checks", "Line")
    return _folded(
        Key.ALL_CASES,
        title,
        Table(columns, Lazy(results.cases, row), right=(5,), cut=1, what="cases"),
    )
