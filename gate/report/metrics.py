"""The report view's sections about figures (:mod:`gate.report.view`): the metric table —
in sight only the metrics that gate or moved beyond noise, at most :data:`SHOWN_METRICS`
rows, the rest folded — with each missed gate's worst cases and pass^k for every k; the
gates and the variance guard, slices and tool confusion (the full report); tool drift,
per-tool recall, judge scores and the run's information.

Words only here, as :mod:`gate.report.parts`; the renderers escape and lay them out.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from gate.model import JUDGE_METRIC_PREFIX, GateOp, MetricStats, gate_label
from gate.report import fmt
from gate.report.compared import not_compared
from gate.report.escape import json_compact
from gate.report.lookup import ids, plural, regressions
from gate.report.parts import (
    Fixed,
    Full,
    Item,
    Key,
    Lazy,
    Para,
    Placement,
    Row,
    Section,
    Table,
)
from gate.report.sentences import Code, Sentence
from gate.results import GateResult, MetricDelta, Results
from gate.scorers.registry import COST_METRICS, METRICS

SHOWN_METRICS = 8
"""Rows of the metric table in sight: the gates, then the changes beyond noise."""
SHOW_GATE_CASES = 5
"""Worst cases named under the metric table for a missed gate."""

FOLDED = Placement.FOLDED
FULL = Placement.FULL


# ─── the metric table ─────────────────────────────────────────────────────────


def metrics(results: Results) -> list[Section]:
    """The metric table: in sight the gated metrics (a missed one first) and the changes
    beyond noise, largest first, cost last, at most :data:`SHOWN_METRICS` rows; the rest
    folded under it. A change within noise has no colour, and is never called so beside
    a gate that failed. Under the table, each missed gate names its worst cases, and
    pass^k is given for every k."""
    cmp = results.comparison
    deltas: Mapping[str, MetricDelta] = cmp.metrics if cmp is not None and cmp.comparable else {}
    costs = {d.metric: d for d in cmp.cost} if cmp is not None and cmp.comparable else {}
    gates = list(results.verdict.gates) if results.verdict else []
    has_base = bool(deltas)
    gate_of: dict[str, list[GateResult]] = defaultdict(list)
    for g in gates:
        gate_of[g.metric if g.slice is None else f"{g.metric}@{g.slice}"].append(g)

    names = [m for m in METRICS if m in results.metrics]
    names += sorted(m for m in results.metrics if m not in names)
    names = [
        m
        for m in names
        if not m.startswith(JUDGE_METRIC_PREFIX)
        and m not in COST_METRICS
        and results.metrics[m].mean is not None
    ]
    cost_names = [m for m in COST_METRICS if (s := results.metrics.get(m)) and s.mean is not None]
    slice_gates = [g for g in gates if g.slice is not None]

    def rank(m: str) -> tuple[int, float]:
        own = gate_of.get(m, [])
        if any(not g.passed for g in own):
            return (0, 0.0)
        if own:
            return (1, 0.0)
        if m == "case_passed":
            return (2, 0.0)
        d = deltas.get(m)
        return (3, -abs(d.delta or 0.0) if d else 0.0)

    moved = [m for m in names if gate_of.get(m) or (deltas.get(m) and deltas[m].beyond_noise)]
    moved.sort(key=rank)
    gated_slices = sorted(slice_gates, key=lambda g: g.passed)
    moved_costs = sorted(
        (m for m in cost_names if gate_of.get(m) or (m in costs and costs[m].beyond_noise)),
        key=lambda m: (not gate_of.get(m), -abs(costs[m].relative or 0.0) if m in costs else 0.0),
    )
    # in sight: gates (quality, slices, cost), then moves; at most SHOWN_METRICS rows
    first = [m for m in moved if gate_of.get(m)]
    shown_cost = [m for m in moved_costs if gate_of.get(m)]
    room = (
        SHOWN_METRICS - len(first) - len(gated_slices) - len(shown_cost) - (1 if shown_cost else 0)
    )
    rest_moved = [m for m in moved if not gate_of.get(m)]
    take = rest_moved[: max(0, room)]
    room -= len(take)
    extra_cost = [m for m in moved_costs if m not in shown_cost]
    if extra_cost and room >= 2 - (1 if shown_cost else 0):
        n = room - (0 if shown_cost else 1)
        shown_cost += extra_cost[: max(0, n)]

    def value_row(
        m: str,
        label: Sentence,
        stat_value: float | None,
        md: MetricDelta | None,
        own: Sequence[GateResult],
        stat: MetricStats | None = None,
    ) -> Row:
        gate_cell: Sentence = [Fixed(" ".join(gate_cell_words(g) for g in own))]
        value: Sentence = [Fixed(fmt.num(stat_value))]
        if stat is not None and stat.ci_low is not None and stat.ci_high is not None:
            value.append(Full(f" [{fmt.num(stat.ci_low)}, {fmt.num(stat.ci_high)}]"))
        if not has_base:
            return Row((label, value, gate_cell))
        failed = any(not g.passed for g in own)
        return Row(
            (
                label,
                [Fixed(fmt.num(md.base) if md else "—")],
                value,
                [Fixed(_delta(m, md, failed))],
                gate_cell,
            )
        )

    def metric_row(m: str) -> Row:
        stat = results.metrics[m]
        return value_row(m, [Code(m)], stat.mean, deltas.get(m), gate_of.get(m, []), stat)

    def slice_row(g: GateResult) -> Row:
        md = (
            cmp.slice_metrics.get(g.slice or "", {}).get(g.metric)
            if cmp is not None and has_base
            else None
        )
        return value_row(g.metric, [Code(g.metric), " on ", Code(g.slice or "")], g.value, md, [g])

    def cost_row(m: str) -> Row:
        own = gate_of.get(m, [])
        gate_cell: Sentence = [Fixed(" ".join(gate_cell_words(g) for g in own))]
        stat = results.metrics[m]
        d = costs.get(m)
        if not has_base:
            return Row(([Code(m)], [Fixed(fmt.cost(m, stat.mean))], gate_cell))
        if d is None:
            return Row(([Code(m)], ["—"], [Fixed(fmt.cost(m, stat.mean))], ["—"], gate_cell))
        return Row(
            (
                [Code(m)],
                [Fixed(fmt.cost(m, d.base))],
                [Fixed(fmt.cost(m, d.head))],
                [Fixed(fmt.cost_change(m, d.change, d.relative, d.beyond_noise))],
                gate_cell,
            )
        )

    def cost_group() -> Row:
        n = max((d.cases for d in costs.values()), default=0)
        where = f", {plural(n, 'case')} against their base history" if n and has_base else ""
        blank: Sentence = []
        width = 5 if has_base else 3
        return Row(([f"Cost per sample{where}"], *([blank] * (width - 1))), group=True)

    columns = ("Metric", "Base", "Head", "Δ", "Gate") if has_base else ("Metric", "Value", "Gate")
    right = (1, 2, 3) if has_base else (1,)
    rows = [metric_row(m) for m in [*first, *take]] + [slice_row(g) for g in gated_slices]
    if shown_cost:
        rows += [cost_group(), *(cost_row(m) for m in shown_cost)]
    folded_names = [m for m in names if m not in first and m not in take]
    folded_costs = [m for m in cost_names if m not in shown_cost]
    listed = {h.case_id for h in results.hard_failures} | {f.case_id for f in regressions(results)}
    notes = [missed_line(g, listed) for g in gates if not g.passed]
    notes += [open_line(g, "not decided") for g in gates if g.undecided]
    notes += [open_line(g, "not checked") for g in gates if g.not_checked and g.passed]
    notes += invalid_usage(results)
    outro: list[Para] = []
    hat = pass_hat_sentence(results)
    if hat:
        outro.append(Para(hat))
    out: list[Section] = []
    title = "Metrics" + (" (base → head)" if has_base else "")
    if rows or notes or outro:
        out.append(
            Section(
                Key.METRICS,
                [title],
                table=Table(columns, rows, right=right) if rows else None,
                notes=tuple(notes),
                outro=tuple(outro),
            )
        )
    if folded_names or folded_costs:
        n = len(folded_names)
        moved_too = sum(1 for m in folded_names if (d := deltas.get(m)) and d.beyond_noise)
        label = plural(n, "other metric") if rows else plural(n, "metric")
        if not has_base:
            label += ", not gated"
        elif moved_too:
            label += f", {moved_too} of them beyond noise"
        else:
            label += ", unchanged beyond noise"
        label += ", and what a sample cost" if folded_costs else ""
        body = [metric_row(m) for m in folded_names]
        if folded_costs:
            body += [cost_group(), *(cost_row(m) for m in folded_costs)]
        out.append(
            Section(
                Key.OTHER_METRICS,
                [label],
                FOLDED,
                table=Table(columns, body, right=right, cut=1, what="metrics"),
            )
        )
    return out


def _delta(m: str, md: MetricDelta | None, failed: bool) -> str:
    if md is None:
        return "—"
    if md.beyond_noise:
        return fmt.delta(m, md.delta)
    moved = md.delta is not None and abs(md.delta) >= fmt.EPS
    return fmt.delta(m, md.delta, plain=True) + (" (within noise)" if moved and not failed else "")


def pass_hat_sentence(results: Results) -> Sentence:
    """``pass^k (k samples of a case all pass): k=1 0.935 · k=2 0.902``, the mean over
    the cases."""
    shown = [f"k={k} {fmt.num(v)}" for k, v in enumerate(results.pass_hat, 1) if v is not None]
    return [Fixed("pass^k (k samples of a case all pass): " + " · ".join(shown))] if shown else []


def gate_cell_words(g: GateResult) -> str:
    """``✅ ≥ 0.850``; a ``max_increase`` gate names the figure it compares with its
    bound: ``❌ ≤ +15.0 % (typical case +31.2 %)``, ``⚪ ≤ +15.0 % (not decided: …)``."""
    bound = fmt.bound(g.op, g.threshold, g.metric)
    if g.not_checked:
        return f"⚪ {bound} (not checked)"
    typical = (
        f"typical case {fmt.percent(g.value)}"
        if g.op == GateOp.MAX_INCREASE and g.value is not None
        else ""
    )
    if g.undecided:
        return f"⚪ {bound} (not decided{': ' + typical if typical else ''})"
    return f"{'✅' if g.passed else '❌'} {bound}" + (f" ({typical})" if typical else "")


def _label(g: GateResult) -> Sentence:
    return [Code(g.metric), " on ", Code(g.slice)] if g.slice else [Code(g.metric)]


def missed_line(g: GateResult, listed: Collection[str] = ()) -> Item:
    """``❌ call_accuracy on tag=refund 0.423 < 0.800 — 13 cases below, worst first: …``;
    the cases listed elsewhere in the report are not named again."""
    label = _label(g)
    if g.no_data:
        return Item(["❌ ", *label, ": ", g.reason])
    if g.op == GateOp.MAX_INCREASE or g.not_checked:
        rest = g.reason.removeprefix(gate_label(g.metric, g.slice)).lstrip(": ")
        return Item(["❌ ", *label, f" {rest}"])
    line: Sentence = ["❌ ", *label, Fixed(f" {fmt.missed(g.op, g.value, g.threshold, g.metric)}")]
    if not g.failing_cases:
        return Item(line)
    worst = list(g.failing_cases)
    line.append(f" — {plural(len(worst), 'case')} {'below' if g.op == GateOp.MIN else 'above'}")
    fresh = [c for c in worst if c not in listed]
    if fresh:
        line += [", worst first: ", *ids(fresh, SHOW_GATE_CASES)]
        if len(fresh) < len(worst):
            line.append(f" (and {len(worst) - len(fresh)} more listed in this report)")
    else:
        line.append(", all listed in this report")
    return Item(line)


def open_line(g: GateResult, word: str) -> Item:
    """``⚪ total_tokens … — not decided; 6 samples per case would decide it``, ``⚪ … not
    checked — the head reported no usage on 6 of 6 samples``: a gate that passed without
    deciding or checking, never shown as met."""
    rest = g.reason.removeprefix(gate_label(g.metric, g.slice)).lstrip(": ")
    return Item(["⚪ ", *_label(g), f" {rest}"])


def invalid_usage(results: Results) -> list[Item]:
    """``⚠️ Invalid token usage on 2 samples, left out of the token figures: …``."""
    bad = [(c.id, s) for c in results.cases for s in c.samples if s.usage_error]
    if not bad:
        return []
    case_id, s = bad[0]
    said = f"⚠️ Invalid token usage on {plural(len(bad), 'sample')}, left out of the token figures"
    why = " (a cost gate counts them as samples without usage); first: "
    return [Item([said, why, Code(case_id), f" sample {s.sample}: {s.usage_error}"])]


def missed_words(g: GateResult) -> str:
    """A missed gate in the first line: ``0.423 < 0.800``; one that could not check says
    why (``not checked: the head reported no usage on …``)."""
    if g.not_checked:
        return "not checked: " + str(g.reason).split(" — ", 1)[-1].split(";")[0]
    return fmt.missed(g.op, g.value, g.threshold, g.metric)


_VERDICT_WORD = re.compile(r"^\s*(?:pass(?:ed)?|fail(?:ed)?|error)\s*(?:—|-|:)\s*", re.IGNORECASE)


def strip_word(summary: str) -> str:
    """ "FAIL — x" → "x": the heading already says passed or failed."""
    return _VERDICT_WORD.sub("", summary, count=1)


# ─── the full report: gates, the variance guard, slices, confusion ────────────


def gates(results: Results) -> list[Section]:
    v = results.verdict
    if v is None:
        return []
    out: list[Section] = []
    if v.gates:

        def row(g: GateResult) -> Row:
            value = (
                fmt.percent(g.value)
                if g.op == GateOp.MAX_INCREASE and g.value is not None
                else fmt.cost(g.metric, g.value)
                if g.metric in COST_METRICS
                else fmt.num(g.value)
            )
            worst = ids(list(g.failing_cases), 20) if g.failing_cases else []
            return Row((_label(g), [gate_cell_words(g)], [value], [g.reason], worst))

        columns = ("Gate", "Threshold", "Value", "Reason", "Failing cases")
        table = Table(columns, [row(g) for g in v.gates], right=(2,))
        out.append(Section(Key.GATES, ["Gates"], FULL, table=table))
    var = v.variance
    said = (
        "❌ too noisy"
        if not var.passed
        else "⚪ not computed: a guard needs at least 2 samples per case"
        if var.not_computed
        else "✅ within limits"
    )
    lines = [Item([said])]

    def limit(x: float | None) -> str:
        return f" (limit {fmt.num(x)})" if x is not None else ""

    if var.observed_max_std is not None:
        worst: Sentence = [" (", Code(var.worst_metric), ")"] if var.worst_metric else []
        std = f"largest std over samples: {fmt.num(var.observed_max_std)}"
        lines.append(Item([std, *worst, limit(var.max_std)]))
    if not var.not_computed:
        share = f"flaky share: {fmt.num(var.flaky_share)}{limit(var.max_flaky_share)}"
        lines.append(Item([share]))
    lines += [Item([r]) for r in (*var.reasons, *var.not_computed)]
    out.append(Section(Key.VARIANCE, ["Variance guard"], FULL, items=lines))
    if v.reasons:
        out.append(Section(Key.VARIANCE, ["Reasons"], FULL, items=[Item([r]) for r in v.reasons]))
    return out


def slices(results: Results) -> list[Section]:
    out: list[Section] = []
    if results.slices:
        shown = [
            "tool_selection_f1",
            "call_accuracy",
            "schema_validity",
            "must_not_call_violations",
        ]
        rows = []
        for name in sorted(results.slices):
            s = results.slices[name]
            vals = [[fmt.num(s.metrics[m].mean) if m in s.metrics else "—"] for m in shown]
            rows.append(Row(([Code(name)], [str(s.cases)], [fmt.num(s.pass_rate)], *vals)))
        columns = ("Slice", "Cases", "Pass rate", *shown)
        table = Table(columns, rows, right=(1, 2, 3, 4, 5, 6), cut=2, what="slices")
        out.append(Section(Key.SLICES, ["Slices"], FULL, table=table))
    pairs = sorted(
        ((n, e, a) for e, row in results.confusion.items() for a, n in row.items() if e != a and n),
        key=lambda p: (-p[0], p[1], p[2]),
    )
    if pairs:
        rows = [Row(([Code(e)], [Code(a)], [str(n)])) for n, e, a in pairs]
        columns = ("Expected", "Called instead", "Times")
        table = Table(columns, rows, right=(2,), keep=10, cut=2, what="confusion pairs")
        out.append(
            Section(Key.CONFUSION, ["Tool confusion (single-tool cases)"], FULL, table=table)
        )
    if results.malformed:
        bad = sorted(results.malformed.items(), key=lambda kv: (-kv[1], kv[0]))
        table = Table(("Class", "Calls"), [Row(([Code(k)], [str(n)])) for k, n in bad], right=(1,))
        out.append(Section(Key.CONFUSION, ["Malformed calls"], FULL, table=table))
    return out


# ─── tool drift, per-tool recall, judge, run information ─────────────────────


def drift(results: Results) -> list[Section]:
    """Tool definitions that differ from the baseline's (and MCP servers that advertise
    other tools than the pinned ones): the tools named in sight, the diffs folded."""
    base = sorted(
        results.comparison.tool_drift if results.comparison is not None else [],
        key=lambda d: d.tool,
    )
    served = sorted(results.mcp_tool_drift, key=lambda d: d.tool)
    if not base and not served:
        return []
    items: list[Item] = []
    for d in base:
        flipped: Sentence = ids(list(d.flipped_cases), 20) if d.flipped_cases else ["none"]
        said: Sentence = [Code(d.tool), f" {d.change} · flipped cases: ", *flipped]
        items.append(Item(said, lines=tuple(d.diff), lang="diff"))
    for d in served:
        where: Sentence = (
            [" on MCP server ", Code(d.server)] if d.server else [": no MCP server advertises it"]
        )
        said = [Code(d.tool), f" {d.change}", *where, " (pinned → advertised)"]
        items.append(Item(said, lines=tuple(d.diff), lang="diff"))
    intro: list[Para] = []
    if base:
        said = ["The model saw other tool definitions on base and head."]
        intro.append(Para([*said, " One changed word can change which tool it picks."]))
    if served:
        said = ["The MCP servers of ", Code("agent.servers"), " advertise other tools than the "]
        fix = ["pinned ones. Refresh the tools file with ", Code("toolgate import mcp-tools")]
        intro.append(Para([*said, *fix, " and pin again, or fix the server."]))
    title = f"🔧 Tool-definition drift ({len(items)})"
    names = [d.tool for d in (*base, *served)]
    if not_compared(results) is not None:  # nothing was compared across it: folded whole
        title += ": the tools differ from the baseline's"
        return [
            Section(
                Key.DRIFT, [title], FOLDED, tuple(intro), items=items, cut=4, what="changed tools"
            )
        ]
    listed: Sentence = ["The definitions, base → head: ", *ids(names, 8)]
    return [
        Section(Key.DRIFT, [title], intro=tuple(intro)),
        Section(Key.DRIFT, listed, FOLDED, items=items, cut=4, what="changed tools"),
    ]


def per_tool(results: Results) -> list[Section]:
    if not results.per_tool:
        return []
    found = sorted(
        results.per_tool.items(),
        key=lambda kv: (kv[1].recall if kv[1].recall is not None else 2.0, kv[0]),
    )

    def row(kv: tuple[str, Any]) -> Row:
        name, t = kv
        recall: Sentence = [Code(fmt.bar(t.recall)), f" {fmt.num(t.recall)}"]
        return Row(([Code(name)], recall, [f"{t.matched}/{t.expected}"], [str(t.called)]))

    low = sum(1 for _, t in found if t.recall is not None and t.recall < 1.0)
    title = "Per-tool recall" + (f" ({low} below 1.000)" if low else "")
    columns = ("Tool", "Recall", "Matched / expected", "Called")
    table = Table(columns, Lazy(found, row), right=(2, 3), cut=2, what="tools")
    return [Section(Key.PER_TOOL, [title], FOLDED, table=table)]


def judge(results: Results) -> list[Section]:
    names = sorted(m for m in results.metrics if m.startswith(JUDGE_METRIC_PREFIX))
    cmp = results.comparison
    deltas = cmp.metrics if cmp is not None and cmp.comparable else {}
    extras: list[Item] = []
    for key in sorted(results.judge or {}):
        value = (results.judge or {})[key]
        if isinstance(value, bool | int | float | str) or value is None:
            shown = fmt.num(value) if isinstance(value, float) else str(value)
            extras.append(Item([Code(key), ": ", Code(shown)]))
    if not names and not extras:
        return []
    rows = []
    for m in names:
        stat = results.metrics[m]
        d = deltas.get(m)
        change: Sentence = [Fixed(fmt.delta(m, d.delta, plain=True) if d else "—")]
        name: Sentence = [Code(m[len(JUDGE_METRIC_PREFIX) :])]
        base: Sentence = [fmt.num(d.base) if d else "—"]
        rows.append(Row((name, base, [fmt.num(stat.mean)], change, [str(stat.n)])))
    columns = ("Rubric", "Base", "Head", "Δ", "Judged")
    table = Table(columns, rows, right=(1, 2, 3, 4), cut=3, what="rubrics") if rows else None
    intro = (Para(["An LLM judge's scores; they never change the verdict."]),)
    title = ["⚖️ Judge scores — reported, not gating"]
    return [Section(Key.JUDGE, title, intro=intro, table=table, notes=tuple(extras))]


def run_info(results: Results) -> list[Section]:
    """The dataset, the samples, what the run spent, the agent, usage, timing (the full
    report: it differs on every run) and the notices."""
    ds = results.dataset
    version: Sentence = [Code(ds.version)] if ds.version else ["unversioned"]
    items: list[Item] = [
        Item(["dataset: ", Code(ds.path), " ", *version, ", sha256 ", Code(ds.sha256[:16])]),
        Item([f"samples per case: {results.samples}; seed: {results.seed}"]),
    ]
    items[0] = Item([*items[0].text, f"…, {ds.cases:,} cases"])
    if results.shard is not None:
        items.append(Item([f"shard: {results.shard.index}/{results.shard.count}"]))
    if results.policy is not None:
        sp = results.policy.spend
        seeded = f"; {sp.seed} seeding {sp.seeded} base histories" if sp.seed else ""
        spent = f"extra samples: {sp.extra} on {plural(sp.sampled, 'case')}, at most {sp.cap}"
        items.append(Item([f"{spent}, in {plural(sp.rounds, 'round')}{seeded}"]))
    elif results.confirm is not None and results.confirm.extra_samples:
        c = results.confirm
        said = f"confirmation: {c.extra_samples} extra samples on {len(c.cases)} apparent flips"
        items.append(Item([f"{said} (at most {c.max_extra_samples})"]))
    if results.policy is None and results.advisor is not None:
        items.append(Item(["sensitivity: ", results.advisor.summary]))
    if results.agent:
        items.append(Item(["agent: ", Code(json_compact(results.agent))]))
    notes = tuple(Item([n]) for n in results.notices[:SHOW_NOTICES])
    if len(results.notices) > SHOW_NOTICES:
        notes += (Item([f"… {len(results.notices) - SHOW_NOTICES} more in results.json"]),)
    outro = (Para([f"ToolGate {results.toolgate_version}"]),)
    out = [
        Section(Key.RUN_INFO, ["Run information"], FOLDED, items=items, notes=notes, outro=outro)
    ]
    # totals and wall-clock figures differ between identical runs: never in the comment
    full = [
        Item([Code(k), f" in all: {fmt.count(results.usage[k])}"])
        for k in sorted(results.usage)
        if not k.endswith(("_per_case", "_per_sample"))
    ]
    full += [Item([Code(k), f": {_timing(k, results.timing[k])}"]) for k in sorted(results.timing)]
    if full:
        out.append(Section(Key.RUN_INFO, ["Usage and timing"], FULL, items=full))
    return out


SHOW_NOTICES = 20
"""Notices the report lists (results.json holds them all)."""


def _timing(key: str, value: Any) -> str:
    unit = " ms" if key.endswith("_ms") else " s" if key.endswith("_s") else ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        if isinstance(value, float) and not value.is_integer():
            return f"{value:,.1f}{unit}"
        return f"{int(value):,}{unit}"
    if isinstance(value, Mapping):
        parts = []
        for k in sorted(value):
            v = value[k]
            if isinstance(v, int | float) and not isinstance(v, bool):
                shown = fmt.count(v) if isinstance(v, int) or float(v).is_integer() else f"{v:,.1f}"
                parts.append(f"{k} {shown}{unit}")
        if parts:
            return " · ".join(parts)
    return json_compact(value) if not isinstance(value, str) else value
