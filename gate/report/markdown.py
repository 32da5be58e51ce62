"""The Markdown reports: the PR comment and the full report (report.md, step summary).

Both are rendered from a :class:`gate.results.Results` alone — never recomputing a score —
by the same section builders, in the order the comment uses:

1. the verdict and why, in one line (then a note when the baseline is not comparable);
2. hard failures (must-not-call first);
3. the metric table base → head with deltas, arrows and the threshold each gate used;
4. regressed cases (expected vs actual calls, the failing check, pass rates over samples);
5. tool-definition drift (changed tools, a compact diff, the flipped cases using them);
6. fixed cases; flaky cases and changes within noise apart; new and removed cases;
7. per-tool recall with a bar chart;
8. judge scores, "reported, not gating";
9. a collapsible table of every case;
10. run information: dataset version and hash, agent, samples, usage base → head, and (in
    the full report only: it differs on every run) timing.

The full report adds every metric, the gates with their reasons, slices, the confusion
pairs, malformed-call classes, per-sample evidence of every failing case and the notices.
Every data string goes through :class:`gate.report.escape.Escaper`; sizes are kept by
:mod:`gate.report.fit`.
"""

from __future__ import annotations

import enum
import re
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from gate.model import JUDGE_METRIC_PREFIX, gate_label, new_failing, removed_words
from gate.report import evidence, fmt
from gate.report.compared import (
    case_changes_sentence,
    not_compared,
    not_compared_lines,
    removed_blocks,
)
from gate.report.escape import Escaper, calls_repr, json_compact
from gate.report.fit import Block, LazyRows
from gate.report.sentences import (
    HARD_KINDS,
    Code,
    Sentence,
    check_sentences,
    elided_calls,
    ordered_checks,
)
from gate.results import (
    CaseResult,
    Flip,
    HardFailureResult,
    MetricDelta,
    Results,
    SampleResult,
    failed_by_agent,
    not_sampled,
    pass_hat_k,
    sampled,
)
from gate.scorers.registry import COST_METRICS, HEADLINE_METRICS, METRICS

__all__ = ["HEADLINE_METRICS", "Style", "build", "status"]


class Style(enum.Enum):
    COMMENT = "comment"
    FULL = "full"


def status(results: Results) -> tuple[str, str]:
    """(emoji, word) of the verdict. A run that passed without comparing (no baseline, one
    of another dataset or gate), with a guard it could not compute or a cost gate it could
    not check is ⚠️, never ✅: nothing compared is never green."""
    if results.run_error is not None:
        return "⛔", "error"
    v = results.verdict
    if v is None:
        return "⚪", "not gated"
    if not v.passed:
        return "❌", "failed"
    if (
        not_compared(results) is not None
        or v.variance.not_computed
        or any(g.not_checked for g in v.gates)
    ):
        return "⚠️", "passed"
    return "✅", "passed"


def build(
    results: Results, style: Style, esc: Escaper, *, heading: Sequence[str] | None = None
) -> list[Block]:
    """Every block of the report, in order (the caller fits them into a size).

    ``heading`` replaces the verdict line (already Markdown, written by trusted code): the
    ``workflow_run`` comment takes its verdict from the triggering run's conclusion, not
    from the results file (:func:`gate.report.comment.render_relayed_comment`)."""
    full = style is Style.FULL
    blocks: list[Block] = [_verdict(results, style, esc, heading)]
    if results.run_error is not None:  # nothing was decided: no regressions to list
        # (tool-definition drift is about the dataset's tools, not the run: still shown)
        return [
            *blocks,
            run_not_valid(results, esc),
            *_drift(results, esc, full),
            *_run_info(results, esc, full),
        ]
    blocks += _missing(results, esc)
    blocks += _failed_by_agent(results, esc)
    blocks += _hard_failures(results, esc, full)
    blocks += _metrics(results, esc, full)
    if full:
        blocks += _gates(results, esc)
    blocks += _regressions(results, esc, full)
    blocks += _new_failures(results, esc, full)
    blocks += removed_blocks(results, esc)
    blocks += _known_failures(results, esc)
    if not full:
        blocks += _failing_without_baseline(results, esc)
    blocks += _drift(results, esc, full)
    blocks += _fixed(results, esc, full)
    blocks += _flaky(results, esc, full)
    blocks += _new_removed(results, esc, full)
    blocks += history_tests(results, esc, full)
    blocks += _per_tool(results, esc, full)
    if full:
        blocks += _slices(results, esc)
        blocks += _confusion(results, esc)
        blocks += _failing_cases(results, esc)
        blocks += _conversations(results, esc)
    blocks += _judge(results, esc)
    blocks += _all_cases(results, esc, full)
    blocks += _run_info(results, esc, full)
    return blocks


# ─── 1. verdict ───────────────────────────────────────────────────────────────


def _verdict(
    results: Results, style: Style, esc: Escaper, heading: Sequence[str] | None = None
) -> Block:
    if heading is not None:
        lines = [*heading, ""]
    else:
        emoji, word = status(results)
        name = esc.code(results.gate_name, 64, table=False)
        level = "##" if style is Style.COMMENT else "#"
        lines = [f"{level} {emoji} ToolGate {name} {word} — {verdict_why(results, esc)}", ""]
    return Block(head=lines + context_lines(results, esc))


def context_lines(results: Results, esc: Escaper) -> list[str]:
    """What this run was compared with, in the report's first lines: the baseline and
    its history's depth, what the pull request changed of the setup under test, and a
    warning when the history is too short to catch what the policy is built for."""
    cmp = results.comparison
    if not_compared(results) is not None:
        return not_compared_lines(results, esc)
    if cmp is None:
        return ["_No baseline: showing this run only._", ""]
    src = esc.text(cmp.source, 200)
    if not cmp.comparable:
        note = f" — {esc.text(cmp.note, 300)}" if cmp.note else ""
        return [f"> ⚠️ The baseline ({src}) is not comparable with this run{note}.", ""]
    hist = results.policy.history if results.policy is not None else None
    depth = (
        f": a base history of {plural(hist.median_samples, 'sample')} per case"
        if hist is not None and hist.median_samples is not None
        else ""
    )
    lines = [f"_Compared with {src}{depth}._"]
    if cmp.note:
        lines += ["", f"_Note: {esc.text(cmp.note, 400)}._"]
    changes = case_changes_sentence(results)
    if changes:
        lines += ["", f"_{render_sentence(changes, esc, 200, table=False)}_"]
    changed = setup_sentence(results)
    if changed:
        lines += ["", render_sentence(changed, esc, 200, table=False)]
    warning = short_history_warning(results)
    if warning:
        lines += ["", f"> ⚠️ {render_sentence(warning, esc, 600, table=False)}"]
    return [*lines, ""]


_SETUP_WORDS = {
    "model": "the model",
    "base_url": "the endpoint",
    "temperature": "the temperature",
    "params": "the sampling parameters",
    "system_prompt_sha256": "the system prompt",
    "command": "the agent's command",
    "callable": "the agent's callable",
    "path": "the agent's import path",
    "kind": "the agent kind",
}


def setup_sentence(results: Results) -> Sentence:
    """ "This run changes the model `a` → `b` and the definition of 2 tools …": what
    changed of the setup under test, which every case was compared across."""
    cmp = results.comparison
    if cmp is None:
        return []
    parts: list[Sentence] = []
    for c in cmp.setup_changes:
        what = _SETUP_WORDS.get(c.key, c.key)
        if c.key == "env":
            parts += _env_changes(c.base, c.head)
        elif c.key in ("system_prompt_sha256", "params"):
            parts.append([what])
        elif c.base is None:
            parts.append([f"{what}, set to ", Code(_setup_value(c.head))])
        elif c.head is None:
            parts.append([f"{what}, unset (was ", Code(_setup_value(c.base)), ")"])
        else:
            parts.append(
                [f"{what} ", Code(_setup_value(c.base)), " → ", Code(_setup_value(c.head))]
            )
    by_change: dict[str, list[str]] = defaultdict(list)
    for d in cmp.tool_drift:
        by_change[d.change].append(d.tool)
    one = {
        "changed": "the definition of the tool ",
        "added": "adds the tool ",
        "removed": "removes the tool ",
    }
    many = {
        "changed": "the definitions of {n} tools (",
        "added": "adds {n} tools (",
        "removed": "removes {n} tools (",
    }
    for change in ("changed", "added", "removed"):
        tools = by_change.get(change)
        if not tools:
            continue
        if len(tools) == 1:
            parts.append([one[change], Code(tools[0])])
            continue
        part: Sentence = [many[change].format(n=len(tools))]
        for i, t in enumerate(tools[:4]):
            part += [", " if i else "", Code(t)]
        part.append(f", … (+{len(tools) - 4}))" if len(tools) > 4 else ")")
        parts.append(part)
    if not parts:
        return []
    out: Sentence = ["This run changes "]
    for i, p in enumerate(parts):
        if i:
            out.append(" and " if i == len(parts) - 1 else ", ")
        out += p
    out.append(
        " against the baseline: every case is compared across the change, which is what it tests."
    )
    return out


SHOW_ENV = 4
"""Environment variables named in "This run changes …" (the rest are counted)."""


def _env_changes(base: Any, head: Any) -> list[Sentence]:
    """``agent.env`` ``MODEL_NAME`` `gpt-4o` → `gpt-4.1`, one part per variable added,
    removed or changed (values as the config gives them; secrets are redacted from every
    report)."""
    b = base if isinstance(base, dict) else {}
    h = head if isinstance(head, dict) else {}
    names = sorted(k for k in set(b) | set(h) if b.get(k) != h.get(k))
    parts: list[Sentence] = []
    for name in names[:SHOW_ENV]:
        part: Sentence = [Code("agent.env"), " ", Code(str(name)), " "]
        if name not in b:
            part += ["set to ", Code(_setup_value(h[name]))]
        elif name not in h:
            part += ["unset (was ", Code(_setup_value(b[name])), ")"]
        else:
            part += [Code(_setup_value(b[name])), " → ", Code(_setup_value(h[name]))]
        parts.append(part)
    if len(names) > SHOW_ENV:
        parts.append([f"{len(names) - SHOW_ENV} more variables of ", Code("agent.env")])
    return parts


def _setup_value(value: Any) -> str:
    return value if isinstance(value, str) else json_compact(value)


def short_history_warning(results: Results) -> Sentence:
    """The warning for a base history shorter than ``policy.min_history``: how short,
    what this run could and could not catch with it, and how to seed it."""
    pol = results.policy
    hist = pol.history if pol is not None else None
    if hist is None or not hist.short or pol is None or pol.base_run:
        return []
    n = hist.median_samples or 0
    few = (
        f"{plural(n, 'sample')} per case"
        if hist.short == hist.comparable
        else f"{hist.short:,} of {hist.comparable:,} cases have fewer samples"
    )
    out: Sentence = [
        f"The base history is short: {few}, below ",
        Code("policy.min_history"),
        f" ({hist.min_history}).",
    ]
    broken, half = hist.caught_broken, hist.caught_half
    if broken is not None and broken <= 1e-12:
        out.append(
            " With it no regression can be significant: not even a case that always passed "
            "and now fails every sample; a broken case is listed as a likely regression."
        )
    elif broken is not None:
        if half is None:
            rates = f"is caught with {pct(broken)} probability when it now always fails"
        elif half <= 1e-12:
            rates = (
                f"is caught with {pct(broken)} probability when it now always fails, and "
                "never when it fails half the time"
            )
        else:
            rates = (
                f"is caught with {pct(broken)} probability when it now always fails, and "
                f"with {pct(half)} when it fails half the time"
            )
        out.append(
            f" With it, a case that always passed {rates}; a broken case it cannot decide "
            "is listed as a likely regression."
        )
    out += [
        " Seed it once with a run on the base branch: ",
        Code("toolgate check --base-run"),
        " (the Action does it on a push to the base branch, a schedule or a manual run).",
    ]
    return out


def pct(p: float | None) -> str:
    """A probability in words (:func:`gate.policy.power.pct`)."""
    from gate.policy.power import pct as words

    return "—" if p is None else words(p)


def verdict_why(results: Results, esc: Escaper) -> str:
    """The verdict's reason as inert prose (:func:`headline`, escaped)."""
    return render_sentence(headline(results), esc, 400, table=False) or status(results)[1]


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def samples_of(n_cases: int, n_samples: int, word: str = "case") -> str:
    """``4 cases [12 samples]``: cases counted, samples in brackets."""
    return f"{plural(n_cases, word)} [{plural(n_samples, 'sample')}]"


def headline(results: Results) -> Sentence:
    """Why the gate passed or failed, in one line: cases counted (samples in brackets),
    each failure kind by the one name it has in the config and ``failed_checks``."""
    if results.run_error is not None:  # nothing was measured: what happened, alone
        return [results.run_error.first_line]
    v = results.verdict
    if v is None:
        return ["scored only; no thresholds were evaluated"]
    cmp = results.comparison
    comparable = cmp is not None and cmp.comparable
    parts: list[Sentence] = []
    likely = _flips(results, "likely_regression") if comparable else []
    removed = cmp.changes.removed if cmp is not None and comparable else ()
    nc = not_compared(results)
    missing: Sentence = (
        [f"not compared: {nc.detail}"] + ([" (require-baseline)"] if v.require_baseline else [])
        if nc is not None
        else []
    )
    if v.passed:
        open_ = sum(1 for g in v.gates if g.undecided)
        unchecked = sum(1 for g in v.gates if g.not_checked)
        met = len(v.gates) - open_ - unchecked
        if not v.gates:
            parts.append(["no gates configured"])
        else:
            words = [f"{plural(met, 'gate')} met"]
            words += [f"{open_:,} not decided"] if open_ else []
            words += [f"{unchecked:,} not checked"] if unchecked else []
            parts.append([", ".join(words)])
        parts.append(["no hard failures"])
        if comparable:
            assert cmp is not None
            parts.append(["no case regressed against ", cmp.source])
        if likely:
            parts.append([f"{plural(len(likely), 'likely regression')} (not significant yet)"])
        fresh = _new_failing(results)
        if fresh:
            parts.append([_new_words(len(fresh), v.new_fail)])
        retired = [r for r in removed if r.retired is not None]
        if retired:
            parts.append([f"{plural(len(retired), 'case')} retired (dataset.retired)"])
        if v.variance.not_computed:
            parts.append(["variance guard not computed (one sample per case)"])
        moved = {f.case_id for f in likely} | {f.case_id for f in _flips(results, "new")}
        known = [c for c in results.cases if not c.passed and c.id not in moved]
        if known:
            n = len(known)
            parts.append(
                [
                    f"{plural(n, 'case')} {'fails' if n == 1 else 'fail'} as before"
                    if comparable
                    else f"{plural(n, 'known failing case')}"
                ]
            )
        if missing:
            return [*missing, "; ", *_join(parts, ", ")]
        return _join(parts, ", ")
    if results.hard_failures:
        # each case under its strongest rule, as the hard-failure table groups it, so the
        # counts here are the table's and add up to its title's
        strongest = strongest_rules(results)
        samples: dict[str, set[int]] = defaultdict(set)
        for h in results.hard_failures:
            samples[h.case_id].add(h.sample)
        by_kind = []
        for kind in _hard_kinds(results):
            ids = [cid for cid, k in strongest.items() if k == kind]
            if ids:
                n = sum(len(samples[cid]) for cid in ids)
                by_kind.append(f"{kind}: {samples_of(len(ids), n)}")
        parts.append([f"{plural(len(strongest), 'case')} broke a hard rule ({'; '.join(by_kind)})"])
    unretired = [r for r in removed if r.retired is None]
    if unretired:
        parts.append([removed_words(unretired)])
    regressions = _flips(results, "regression")
    if comparable and regressions:
        assert cmp is not None
        n = sum(f.head_samples for f in regressions)
        parts.append([f"{samples_of(len(regressions), n)} regressed against ", cmp.source])
    if likely and v.likely_fail:
        parts.append([f"{plural(len(likely), 'likely regression')} (regressions.likely: fail)"])
    fresh = _new_failing(results)
    if fresh:
        parts.append([_new_words(len(fresh), v.new_fail)])
    if v.suite_drops:
        drops = ", ".join("the pass rate" if d == "case_passed" else d for d in v.suite_drops)
        parts.append([f"suite-level drop of {drops}"])
    missed = [g for g in v.gates if not g.passed]
    if missed:
        g = missed[0]
        where = f" on {g.slice}" if g.slice else ""
        more = f" and {len(missed) - 1} more" if len(missed) > 1 else ""
        parts.append(
            [
                f"{plural(len(missed), 'gate')} missed: ",
                Code(g.metric),
                f"{where} {_missed_words(g)}{more}",
            ]
        )
    if not v.variance.passed:
        why = "; ".join(r.split(" — ")[0] for r in v.variance.reasons)
        parts.append([f"variance guard: {why}"])
    if missing:
        # first when it is why the gate failed (require-baseline), else last
        parts.insert(0, missing) if v.require_baseline else parts.append(missing)
    if not parts:
        parts.append([_strip_word(v.summary)])
    return _join(parts, "; ")


def _new_failing(results: Results) -> list[Flip]:
    """The cases new in this run that fail (``regressions.new_cases`` decides on them)."""
    return new_failing(results.comparison.flips) if results.comparison is not None else []


def _new_words(n: int, fail: bool) -> str:
    """``1 new case fails`` (``(regressions.new_cases: fail)`` when it fails the gate)."""
    words = f"{plural(n, 'new case')} {'fails' if n == 1 else 'fail'}"
    return words + (" (regressions.new_cases: fail)" if fail else "")


def _join(parts: Sequence[Sentence], sep: str) -> Sentence:
    out: Sentence = []
    for i, p in enumerate(parts):
        if i:
            out.append(sep)
        out += p
    return out


def render_sentence(parts: Sentence, esc: Escaper, lim: int, *, table: bool = True) -> str:
    """A sentence in Markdown: words escaped as text, :class:`Code` parts as code spans."""
    return "".join(
        esc.code(p, lim, table=table) if isinstance(p, Code) else esc.text(p, lim) for p in parts
    )


def hard_samples(results: Results) -> int:
    """The samples that broke a hard rule (one may break it more than once)."""
    return len({(h.case_id, h.sample) for h in results.hard_failures})


def _hard_kinds(results: Results) -> list[str]:
    kinds = {h.kind for h in results.hard_failures}
    return sorted(kinds, key=lambda k: (HARD_KINDS.index(k) if k in HARD_KINDS else 9, k))


def strongest_rules(results: Results) -> dict[str, str]:
    """Case id → the strongest hard rule it broke (must-not-call first): the rule its
    hard-failure row is listed under, in the order the cases first broke one."""
    rank = {k: i for i, k in enumerate(_hard_kinds(results))}
    out: dict[str, str] = {}
    for h in results.hard_failures:
        held = out.get(h.case_id)
        if held is None or rank[h.kind] < rank[held]:
            out[h.case_id] = h.kind
    return out


def run_not_valid(results: Results, esc: Escaper) -> Block:
    """The fixed section of a run whose verdict is "error": why, the missing samples, the
    first error lines."""
    err = results.run_error
    assert err is not None
    lines = [
        "**This run is not valid: it says nothing about the agent.** "
        f"{esc.text(err.reason, 400)}. Fix the cause and run it again.",
        "",
    ]
    if err.hint:
        lines += [f"**What to do:** {esc.text(err.hint, 400)}", ""]
    lines += _missing_lines(results, esc)
    if err.first_errors:
        lines += ["First errors:", ""]
        lines += [f"- {esc.code(e, 300, table=False)}" for e in err.first_errors]
        lines += [""]
    return Block(head=lines)


def _missing_lines(results: Results, esc: Escaper) -> list[str]:
    gone = results.missing
    if gone is None:
        return []
    why = ", ".join(f"`{k}` {n}" for k, n in gone.by_reason.items())
    lines = [
        f"Missing case-samples: {gone.count} of {gone.planned} ({why}) — failed by the "
        "infrastructure after their retries; not counted as failures or passes.",
        "",
    ]
    unsampled = not_sampled(results)
    if unsampled:
        shown = ", ".join(esc.code(cid, 80, table=False) for cid in unsampled[:20])
        more = f" and {len(unsampled) - 20} more" if len(unsampled) > 20 else ""
        lines += [
            f"Not sampled (every sample missing): {shown}{more} — neither passed nor failed.",
            "",
        ]
    return lines


def _missing(results: Results, esc: Escaper) -> list[Block]:
    lines = _missing_lines(results, esc)
    return [Block(head=lines)] if lines else []


def _failed_by_agent(results: Results, esc: Escaper) -> list[Block]:
    """The cases the agent failed on every sample before answering, apart from the cases
    it answered wrongly: there was no answer to score."""
    ids = failed_by_agent(results)
    if not ids:
        return []
    cases = {c.id: c for c in results.cases}
    lines = [
        f"### ⚠️ No answer ({plural(len(ids), 'case')}) — the agent failed every sample "
        "before answering",
        "",
        "| Case | Samples | Error |",
        "|---|--:|---|",
    ]
    for cid in ids[:20]:
        c = cases[cid]
        error = (c.samples[0].error or "").strip().splitlines()
        lines.append(
            f"| {_case_cell(c.id, c.line, esc)} | {len(c.samples)} "
            f"| {esc.code(error[0] if error else '', 200)} |"
        )
    if len(ids) > 20:
        lines.append(f"| … {len(ids) - 20} more in report.md | | |")
    return [Block(head=[*lines, ""])]


_VERDICT_WORD = re.compile(r"^\s*(?:pass(?:ed)?|fail(?:ed)?|error)\s*(?:—|-|:)\s*", re.IGNORECASE)


def _strip_word(summary: str) -> str:
    """ "FAIL — x" → "x": the heading already says passed or failed."""
    return _VERDICT_WORD.sub("", summary, count=1)


# ─── 2. hard failures ────────────────────────────────────────────────────────


def _hard_failures(results: Results, esc: Escaper, full: bool) -> list[Block]:
    """One row per case in the full report, its strongest rule first; the case's other
    broken rules and failing checks follow in the same row. In the comment, the cases
    that broke the same rule with the same tool for the same reason share one row, each
    case named once with its counts (base history → head for a regression)."""
    if not results.hard_failures:
        return []
    by_case: dict[str, list[HardFailureResult]] = defaultdict(list)
    for hf in results.hard_failures:
        by_case[hf.case_id].append(hf)
    rank = {k: i for i, k in enumerate(_hard_kinds(results))}

    def strongest(items: list[HardFailureResult]) -> tuple[int, str]:
        return min((rank[h.kind], h.kind) for h in items)

    def first_of(items: list[HardFailureResult]) -> HardFailureResult:
        kind = strongest(items)[1]
        return min((h for h in items if h.kind == kind), key=lambda h: h.sample)

    ordered = sorted(by_case.items(), key=lambda kv: (strongest(kv[1]), kv[0]))
    lim = 300 if full else 160
    cases = _case_index(results)
    flips = {f.case_id: f for f in _flips(results, "regression", "likely_regression")}
    significant = sum(1 for cid in by_case if cid in flips and flips[cid].kind == "regression")
    likely = sum(1 for cid in by_case if cid in flips) - significant
    of_them = "".join(
        x
        for x in (
            f", {significant} of them {'a regression' if significant == 1 else 'regressions'}"
            if significant
            else "",
            f", {likely} of them {'a likely regression' if likely == 1 else 'likely regressions'}"
            if likely
            else "",
        )
    )
    title = (
        f"### 🛑 Hard failures ({samples_of(len(by_case), hard_samples(results))}"
        f"{of_them}) — these fail the gate whatever the averages"
    )

    if not full:
        groups: dict[tuple[str, str, str], list[str]] = {}
        for case_id, items in ordered:
            first = first_of(items)
            key = (first.kind, str(first.call.get("name", "")), first.message)
            groups.setdefault(key, []).append(case_id)

        def group_row(item: tuple[tuple[str, str, str], list[str]]) -> str:
            (kind, name, message), ids = item
            first = first_of(by_case[ids[0]])
            named = [_case_counts(cid, cases.get(cid), flips.get(cid), esc) for cid in ids]
            shown = ", ".join(named[:GROUP_SHOWN])
            if len(named) > GROUP_SHOWN:
                rest = ", ".join(named[GROUP_SHOWN:])
                shown += (
                    f"<details><summary>{plural(len(named) - GROUP_SHOWN, 'more case')}"
                    f"</summary>{rest}</details>"
                )
            call = (
                esc.code(_call_of(first.call), lim) if len(ids) == 1 else esc.code(name or "—", 80)
            )
            return (
                f"| {esc.code(kind, 40)} | {call} | {esc.text(message, lim)} "
                f"| {plural(len(ids), 'case')}: {shown} |"
            )

        rows = LazyRows(list(groups.items()), group_row)
        head = [title, "", "| Rule | Call | Why | Cases |", "|---|---|---|---|"]
        return [Block(head, rows, [""], keep=10, cut=7, what="hard failure groups")]

    def row(group: tuple[str, list[HardFailureResult]]) -> str:
        case_id, items = group
        kind = strongest(items)[1]
        first = first_of(items)
        samples = sorted({h.sample for h in items if h.kind == kind})
        lead = [esc.text(first.message, lim)]
        for other in sorted({h.kind for h in items} - {kind}, key=lambda k: rank[k]):
            hs = sorted((h for h in items if h.kind == other), key=lambda h: h.sample)
            lead.append(
                f"also {esc.code(other, 40)} on "
                f"{_sample_list((h.sample for h in hs), results.samples)}: "
                f"{esc.text(hs[0].message, lim)}"
            )
        case = cases.get(case_id)
        if case_id in flips:
            lead.append(f"{_kind_words(flips[case_id])} {_rates(flips[case_id])}")
        elif case is not None and case.test is not None and case.test.base_samples:
            t = case.test
            lead.append(
                f"{t.base_passes}/{t.base_samples} in the base history → "
                f"{t.head_passes}/{t.head_samples} on head"
            )
        sample = _first_failing(case)
        done = {kind, *(h.kind for h in items)}
        rest = [
            render_sentence(sn, esc, lim)
            for check, sn in (check_sentences(sample) if sample else [])
            if check not in done and check != "safety_rules"
        ]
        return (
            f"| {_case_cell(case_id, first.line, esc)} | {esc.code(kind, 40)} "
            f"| {_numbers(samples, results.samples)} | {esc.code(_call_of(first.call), lim)} "
            f"| {_cell(lead, rest, full)} |"
        )

    rows = LazyRows(ordered, row)
    head = [title, "", "| Case | Rule | Samples | Call | Why |", "|---|---|---|---|---|"]
    return [Block(head, rows, [""], keep=10, cut=7, what="hard failures")]


GROUP_SHOWN = 6
"""Cases named in a grouped hard-failure row before the rest are collapsed."""


def _case_counts(case_id: str, case: CaseResult | None, flip: Flip | None, esc: Escaper) -> str:
    """``refund-damaged`` 40/40 → 0/3: a case with its counts (the flip's, else the
    head's passing samples)."""
    if flip is not None:
        return f"{esc.code(case_id, 80)} {_rates(flip, p=False)}"
    if case is None:
        return esc.code(case_id, 80)
    head = fmt.rate_fraction(case.pass_rate, len(case.samples))
    t = case.test
    if t is not None and t.base_samples:
        return f"{esc.code(case_id, 80)} {t.base_passes}/{t.base_samples} → {head}"
    return f"{esc.code(case_id, 80)} {head}"


def _numbers(samples: Sequence[int], initial: int) -> str:
    """Sample numbers, runs collapsed (``0–10``), the extra ones said so: a run of
    ``samples: 3`` numbers its initial samples 0–2 and the extra ones from 3 on."""
    nums = sorted(set(samples))
    first = [n for n in nums if n < initial]
    extra = [n for n in nums if n >= initial]
    out = _runs_of(first)
    if extra:
        out += ("; " if out else "") + f"{_runs_of(extra)} extra"
    return out


def _runs_of(nums: Sequence[int]) -> str:
    parts: list[str] = []
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        parts.append(str(nums[i]) if j == i else f"{nums[i]}–{nums[j]}")
        i = j + 1
    return ", ".join(parts)


def _sample_list(samples: Iterable[int], initial: int) -> str:
    nums = sorted(set(samples))
    return ("sample " if len(nums) == 1 else "samples ") + _numbers(nums, initial)


def _cell(lead: Sequence[str], rest: Sequence[str], full: bool) -> str:
    """A table cell: the strongest reasons, then the rest (collapsed in the comment)."""
    if not rest:
        return "<br>".join(lead) or "—"
    if full:
        return "<br>".join([*lead, *rest])
    more = plural(len(rest), "more reason")
    return "<br>".join(lead) + f"<details><summary>{more}</summary>{'<br>'.join(rest)}</details>"


def _call_of(call: Mapping[str, Any]) -> str:
    return calls_repr(call) if call else "—"


# ─── 3. metrics ──────────────────────────────────────────────────────────────


def beyond_noise(md: MetricDelta | None) -> bool:
    """The comparison's word on a metric's change (``MetricDelta.beyond_noise``: a suite
    test found it significant, a flipped case moved it, or the base value lies outside
    the head's interval)."""
    return md is not None and md.beyond_noise


def _metrics(results: Results, esc: Escaper, full: bool) -> list[Block]:
    """The metric table. The comment shows the gated metrics and the changes beyond their
    noise, the rest collapsed under it; the full report shows every metric with its
    interval. A change within noise has no colour, and is never called so beside a gate
    that failed. Under the table, each missed gate names its worst cases."""
    cmp = results.comparison
    deltas: Mapping[str, MetricDelta] = cmp.metrics if cmp is not None and cmp.comparable else {}
    gates = results.verdict.gates if results.verdict else []
    gate_of: dict[str, list[Any]] = defaultdict(list)
    for g in gates:
        if g.slice is None:
            gate_of[g.metric].append(g)
    names: list[str] = []

    def add(metric: str) -> None:
        if (
            metric not in names
            and not metric.startswith(JUDGE_METRIC_PREFIX)
            and metric not in COST_METRICS  # the Cost group, below the quality metrics
        ):
            names.append(metric)

    for g in gates:
        if g.slice is None:
            add(g.metric)
    shown_gated = list(names)
    for m in METRICS:
        if m in results.metrics:
            add(m)
    for m in sorted(results.metrics):
        add(m)
    # A comment compared with nothing stays short: its gated metrics in sight, the rest
    # (nothing to compare them with) collapsed.
    quiet = not full and not_compared(results) is not None
    if full:
        top, rest = names, []
    else:
        moved = [m for m in names if m not in shown_gated and beyond_noise(deltas.get(m))]
        top = shown_gated + moved
        if not deltas and not quiet:
            top += [m for m in HEADLINE_METRICS if m in results.metrics and m not in top]
        rest = [m for m in names if m not in top and results.metrics[m].mean is not None]
    has_base = bool(deltas)
    if has_base:
        head = ["| Metric | Base | Head | Δ | Gate |", "|---|--:|--:|--:|---|"]
    else:
        head = ["| Metric | Value | Gate |", "|---|--:|---|"]

    def delta_cell(m: str, md: MetricDelta | None, failed: bool) -> str:
        if md is None:
            return "—"
        if md.beyond_noise:
            return fmt.delta(m, md.delta)
        moved = md.delta is not None and abs(md.delta) >= fmt.EPS
        noise = " (within noise)" if moved and not failed else ""
        return fmt.delta(m, md.delta, plain=True) + noise

    def metric_row(m: str) -> str:
        stat = results.metrics.get(m)
        value = stat.mean if stat else None
        own = gate_of.get(m, [])
        gate_cell = " ".join(_gate_cell(g) for g in own) or ""
        label = esc.code(m, 80)
        if full and stat is not None and stat.ci_low is not None and stat.ci_high is not None:
            value_cell = f"{fmt.num(value)} [{fmt.num(stat.ci_low)}, {fmt.num(stat.ci_high)}]"
        else:
            value_cell = fmt.num(value)
        if has_base:
            md = deltas.get(m)
            base = fmt.num(md.base) if md else "—"
            failed = any(not g.passed for g in own)
            return (
                f"| {label} | {base} | {value_cell} | {delta_cell(m, md, failed)} | {gate_cell} |"
            )
        return f"| {label} | {value_cell} | {gate_cell} |"

    rows = [metric_row(m) for m in top]
    for g in gates:
        if g.slice is not None:
            label = f"{esc.code(g.metric, 80)} on {esc.code(g.slice, 60)}"
            if has_base:
                assert cmp is not None
                md = cmp.slice_metrics.get(g.slice, {}).get(g.metric)
                base = fmt.num(md.base) if md else "—"
                rows.append(
                    f"| {label} | {base} | {fmt.num(g.value)} "
                    f"| {delta_cell(g.metric, md, not g.passed)} | {_gate_cell(g)} |"
                )
            else:
                rows.append(f"| {label} | {fmt.num(g.value)} | {_gate_cell(g)} |")
    costs = cost_rows(results, esc, has_base)
    cost_gated = any(g.metric in COST_METRICS for g in gates)
    folded_costs = costs if quiet and not cost_gated else []
    if not folded_costs:
        rows += costs
    if not rows and not rest and not folded_costs:
        return []
    title = "### Metrics" + (" (base → head)" if has_base else "")
    if full and has_base is False and cmp is not None and not cmp.comparable:
        title += " — baseline not comparable"
    shown_elsewhere: set[str] = (
        set()
        if full
        else {h.case_id for h in results.hard_failures}
        | {f.case_id for f in _flips(results, "regression", "likely_regression")}
    )
    missed = [_missed_gate_line(g, esc, shown_elsewhere) for g in gates if not g.passed]
    missed += [_undecided_gate_line(g, esc) for g in gates if g.undecided]
    missed += [_unchecked_gate_line(g, esc) for g in gates if g.not_checked and g.passed]
    missed += _invalid_usage_line(results, esc)
    tail = ["", *missed, ""] if missed else [""]
    if full or has_conversations(results):
        tail += [pass_hat_line(results), ""]
    blocks = [Block([title, "", *head], rows, tail)]
    if rest or folded_costs:
        what = "unchanged beyond noise" if has_base else "not gated"
        extra = ", and what a sample cost" if folded_costs else ""
        blocks.append(
            Block(
                [
                    "<details>",
                    f"<summary>{plural(len(rest), 'other metric')}, {what}{extra}</summary>",
                    "",
                    *head,
                ],
                [*(metric_row(m) for m in rest), *folded_costs],
                ["", "</details>", ""],
                keep=0,
                cut=1,
                what="metrics",
                drop_whole=True,
            )
        )
    return blocks


def has_conversations(results: Results) -> bool:
    """Whether any case of the run is a conversation (its samples carry turns)."""
    return any(s.turns for c in results.cases for s in c.samples[:1])


def pass_hat_line(results: Results) -> str:
    """``pass^3 — every one of 3 samples of a case passes: 0.833 (the mean over 6 cases)``."""
    ph = pass_hat_k(results)
    known = sum(1 for v in ph.cases.values() if v is not None)
    return (
        f"pass^{ph.k} — every one of {plural(ph.k, 'sample')} of a case passes: "
        f"{fmt.num(ph.dataset)} (the mean over {plural(known, 'case')})"
    )


def cost_rows(results: Results, esc: Escaper, has_base: bool) -> list[str]:
    """The metric table's Cost group: what a sample cost, per sample — against the base
    history when the run has one (its comparable cases, the clustered paired test's
    figures: ``comparison.cost``), else this run's values; the cost gates beside them."""
    cmp = results.comparison
    deltas = {d.metric: d for d in cmp.cost} if cmp is not None and cmp.comparable else {}
    gates: dict[str, list[Any]] = defaultdict(list)
    for g in results.verdict.gates if results.verdict else []:
        if g.slice is None and g.metric in COST_METRICS:
            gates[g.metric].append(g)
    rows: list[str] = []
    for m in COST_METRICS:
        stat = results.metrics.get(m)
        if stat is None or stat.mean is None:
            continue
        gate_cell = " ".join(_gate_cell(g) for g in gates.get(m, []))
        label = esc.code(m, 80)
        if has_base:
            d = deltas.get(m)
            if d is None:
                rows.append(f"| {label} | — | {fmt.cost(m, stat.mean)} | — | {gate_cell} |")
                continue
            rows.append(
                f"| {label} | {fmt.cost(m, d.base)} | {fmt.cost(m, d.head)} "
                f"| {fmt.cost_change(m, d.change, d.relative, d.beyond_noise)} | {gate_cell} |"
            )
        else:
            rows.append(f"| {label} | {fmt.cost(m, stat.mean)} | {gate_cell} |")
    if not rows:
        return []
    if has_base:
        n = max((d.cases for d in deltas.values()), default=0)
        where = f", {plural(n, 'case')} against their base history" if n else ""
        return [f"| **Cost** per sample{where} | | | | |", *rows]
    return ["| **Cost** per sample | | |", *rows]


SHOW_GATE_CASES = 5
"""Worst cases named under the metric table for a missed gate."""


def _missed_gate_line(g: Any, esc: Escaper, listed: Collection[str] = ()) -> str:
    """``❌ call_accuracy on tag=refund 0.423 < 0.800 — 13 cases below, worst first: …``.
    In the comment (``listed``: the cases it shows elsewhere) the cases shown elsewhere
    are named under a collapsed summary, so that each case is visible once."""
    where = f" on {esc.code(g.slice, 60, table=False)}" if g.slice else ""
    label = f"{esc.code(g.metric, 80, table=False)}{where}"
    if g.no_data:
        return f"- ❌ {label}: {esc.text(g.reason, 300)}"
    if g.op == "max_increase" or getattr(g, "not_checked", False):
        # The reason opens with the metric (and its slice): shown as the others show it.
        rest = g.reason.removeprefix(gate_label(g.metric, g.slice)).lstrip(": ")
        return f"- ❌ {label} {esc.text(rest, 400)}"
    line = f"- ❌ {label} {fmt.missed(g.op, g.value, g.threshold, g.metric)}"
    if not g.failing_cases:
        return line
    side = "below" if g.op == "min" else "above"
    worst = list(g.failing_cases)

    def names(ids: Sequence[str]) -> str:
        shown = ", ".join(esc.code(c, 80, table=False) for c in ids[:SHOW_GATE_CASES])
        return shown + (", …" if len(ids) > SHOW_GATE_CASES else "")

    line += f" — {plural(len(worst), 'case')} {side}"
    fresh = [c for c in worst if c not in listed]
    if fresh:
        line += f", worst first: {names(fresh)}"
        if len(fresh) < len(worst):
            line += f" (and {len(worst) - len(fresh)} more listed in this comment)"
        return line
    return (
        f"{line}, all listed in this comment<details><summary>worst first</summary>"
        f"{names(worst)}"
        "</details>"
    )


def _gate_cell(g: Any) -> str:
    """``✅ ≥ 0.850``; a ``max_increase`` gate names the figure it compares with its bound:
    ``❌ ≤ +15.0 % (typical case +31.2 %)``, ``⚪ ≤ +15.0 % (not decided: typical case
    +18.0 %)``."""
    bound = fmt.bound(g.op, g.threshold, g.metric)
    if getattr(g, "not_checked", False):
        return f"⚪ {bound} (not checked)"
    typical = (
        f"typical case {fmt.percent(g.value)}"
        if g.op == "max_increase" and g.value is not None
        else ""
    )
    if getattr(g, "undecided", False):
        return f"⚪ {bound} (not decided{': ' + typical if typical else ''})"
    return f"{'✅' if g.passed else '❌'} {bound}" + (f" ({typical})" if typical else "")


def _invalid_usage_line(results: Results, esc: Escaper) -> list[str]:
    """``⚠️ Invalid token usage on 2 samples, left out of the token figures: …`` (the
    first sample, and why: ``gate.usage``); nothing when every usage was valid."""
    bad = [(c.id, s) for c in results.cases for s in c.samples if s.usage_error]
    if not bad:
        return []
    case_id, s = bad[0]
    first = (
        f"{esc.code(case_id, 80, table=False)} sample {s.sample}: {esc.text(s.usage_error, 300)}"
    )
    return [
        f"- ⚠️ Invalid token usage on {plural(len(bad), 'sample')}, left out of the token "
        f"figures (a cost gate counts them as samples without usage); first: {first}"
    ]


def _missed_words(g: Any) -> str:
    """``n/a > +15.0 %``-style words for a missed gate in the first line; a gate that
    could not check says why (``not checked: the head reported no usage on …``)."""
    if getattr(g, "not_checked", False):
        return "not checked: " + str(g.reason).split(" — ", 1)[-1].split(";")[0]
    return fmt.missed(g.op, g.value, g.threshold, g.metric)


def _unchecked_gate_line(g: Any, esc: Escaper) -> str:
    """``⚪ total_tokens max_increase 15% not checked — the head reported no usage on 6 of
    6 samples``: a gate that passed without checking, never shown as met."""
    where = f" on {esc.code(g.slice, 60, table=False)}" if g.slice else ""
    rest = g.reason.removeprefix(gate_label(g.metric, g.slice)).lstrip(": ")
    return f"- ⚪ {esc.code(g.metric, 80, table=False)}{where} {esc.text(rest, 500)}"


def _undecided_gate_line(g: Any, esc: Escaper) -> str:
    """``⚪ total_tokens 3,742 → 4,311 per sample (+15.2 %), the typical case … — not
    decided; 6 samples per case would decide it``: why, and what would decide it."""
    where = f" on {esc.code(g.slice, 60, table=False)}" if g.slice else ""
    rest = g.reason.removeprefix(gate_label(g.metric, g.slice)).lstrip()
    return f"- ⚪ {esc.code(g.metric, 80, table=False)}{where} {esc.text(rest, 500)}"


def _gates(results: Results, esc: Escaper) -> list[Block]:
    v = results.verdict
    if v is None:
        return []
    blocks: list[Block] = []
    if v.gates:
        rows = []
        for g in v.gates:
            where = f" on {esc.code(g.slice, 60)}" if g.slice else ""
            failing = ", ".join(esc.code(c, 60) for c in g.failing_cases[:20])
            if len(g.failing_cases) > 20:
                failing += f" … (+{len(g.failing_cases) - 20})"
            value = (
                fmt.percent(g.value)
                if g.op == "max_increase" and g.value is not None
                else fmt.cost(g.metric, g.value)
                if g.metric in COST_METRICS
                else fmt.num(g.value)
            )
            rows.append(
                f"| {esc.code(g.metric, 80)}{where} | {_gate_cell(g)} | {value} "
                f"| {esc.text(g.reason, 300)} | {failing} |"
            )
        head = [
            "### Gates",
            "",
            "| Gate | Threshold | Value | Reason | Failing cases |",
            "|---|---|--:|---|---|",
        ]
        blocks.append(Block(head, rows, [""]))
    var = v.variance
    lines = ["### Variance guard", ""]
    if not var.passed:
        bits = ["- ❌ too noisy"]
    elif var.not_computed:
        bits = ["- ⚪ not computed: a guard needs at least 2 samples per case"]
    else:
        bits = ["- ✅ within limits"]
    if var.observed_max_std is not None:
        worst = f" ({esc.code(var.worst_metric, 80, table=False)})" if var.worst_metric else ""
        limit = f" (limit {fmt.num(var.max_std)})" if var.max_std is not None else ""
        bits.append(f"- largest std over samples: {fmt.num(var.observed_max_std)}{worst}{limit}")
    limit = f" (limit {fmt.num(var.max_flaky_share)})" if var.max_flaky_share is not None else ""
    if not var.not_computed:  # one sample per case: no case can be seen to be flaky
        bits.append(f"- flaky share: {fmt.num(var.flaky_share)}{limit}")
    bits += [f"- {esc.text(r, 300)}" for r in (*var.reasons, *var.not_computed)]
    if v.reasons:
        bits += ["", "**Reasons**", ""] + [f"- {esc.text(r, 400)}" for r in v.reasons]
    blocks.append(Block([*lines, *bits, ""]))
    return blocks


# ─── 4. regressions (with evidence) ──────────────────────────────────────────


def _flips(results: Results, *kinds: str) -> list[Flip]:
    if results.comparison is None:
        return []
    return [f for f in results.comparison.flips if f.kind in kinds]


def _kind_words(f: Flip) -> str:
    return {
        "regression": "regressed",
        "likely_regression": "likely regressed",
        "fix": "fixed",
        "likely_fix": "likely fixed",
        "noise": "within noise",
    }.get(f.kind, f.kind)


def _drop(f: Flip) -> float:
    return (f.base_pass_rate or 0.0) - (f.head_pass_rate or 0.0)


def _case_index(results: Results) -> dict[str, CaseResult]:
    return {c.id: c for c in results.cases}


def _drift_by_case(results: Results) -> dict[str, list[str]]:
    """Case id → drifted tools it uses (from the drift record, or the case's tool list)."""
    out: dict[str, list[str]] = defaultdict(list)
    if results.comparison is None:
        return out
    drifted = {d.tool for d in results.comparison.tool_drift}
    for d in results.comparison.tool_drift:
        for cid in d.flipped_cases:
            if d.tool not in out[cid]:
                out[cid].append(d.tool)
    for f in results.comparison.flips:
        for t in f.drifted_tools:
            if t not in out[f.case_id]:
                out[f.case_id].append(t)
    for c in results.cases:
        for t in c.tools:
            if t in drifted and t not in out[c.id]:
                out[c.id].append(t)
    return out


def _first_failing(case: CaseResult | None) -> SampleResult | None:
    if case is None:
        return None
    # a missing sample failed no check: it is not a failing one
    failing = [s for s in case.samples if not s.passed and s.failed_checks]
    return min(failing, key=lambda s: s.sample) if failing else None


def _evidence_cells(
    sample: SampleResult | None, checks: Sequence[str], esc: Escaper, lim: int, full: bool
) -> str:
    """``failing checks | expected | actual | why`` of one case's first failing sample:
    matched calls elided on both sides, a sentence per failing check, strongest first."""
    ev = sample.evidence if sample else {}
    exp, act = elided_calls(ev)
    found = check_sentences(sample) if sample else []
    sentences = [render_sentence(sn, esc, lim) for _, sn in found]
    return (
        f"{_checks(ordered_checks(checks), esc)} "
        f"| {esc.code(exp, 2 * lim) if exp is not None else '—'} "
        f"| {esc.code(act, 2 * lim) if act is not None else '—'} "
        f"| {_cell(sentences[:1], sentences[1:], full)}"
    )


_EVIDENCE_HEAD = (
    "| Case | Passing samples | Failing checks | Expected | Actual | Why |",
    "|---|---|---|---|---|---|",
)
"""The header of a table of failing cases with their evidence (failing, new failing)."""


def _flip_evidence(f: Flip, case: CaseResult | None, esc: Escaper, lim: int, full: bool) -> str:
    """``failing checks | expected | actual | why`` of a flipped case: its first failing
    sample's evidence, else the flip's reason."""
    sample = _first_failing(case)
    checks = f.failed_checks or (list(sample.failed_checks) if sample else [])
    if sample is None and f.reason:
        return f"{_checks(checks, esc)} | — | — | {esc.text(f.reason, lim)}"
    return _evidence_cells(sample, checks, esc, lim, full)


def _regressions(results: Results, esc: Escaper, full: bool) -> list[Block]:
    """Regressions, significant then likely, worst first — those that broke a hard rule
    are in the hard failures already (each case is listed once), counted in the title."""
    flips = sorted(
        _flips(results, "regression", "likely_regression"),
        key=lambda f: (f.kind != "regression", -_drop(f), f.case_id),
    )
    if not flips:
        return []
    hard = {h.case_id for h in results.hard_failures}
    shown = [f for f in flips if f.case_id not in hard]
    if not shown:
        return []
    cases = _case_index(results)
    drift = _drift_by_case(results)
    lim = 240 if full else 160

    def row(f: Flip) -> str:
        case = cases.get(f.case_id)
        cells = _flip_evidence(f, case, esc, lim, full)
        if drift.get(f.case_id):
            tools = ", ".join(esc.code(t, 60) for t in drift[f.case_id])
            cells += f"<br>🔧 tool definition changed: {tools}"
        rates = _rates(f)
        if f.kind == "likely_regression":
            rates += f"<br>likely: {esc.text(f.because or 'not significant yet', 120)}"
        return (
            f"| {_case_cell(f.case_id, f.line or (case.line if case else None), esc)} "
            f"| {rates} | {cells} |"
        )

    significant = sum(1 for f in shown if f.kind == "regression")
    likely = len(shown) - significant
    counts = ", ".join(
        x
        for x in (
            f"{significant} significant" if significant else "",
            f"{likely} likely" if likely else "",
        )
        if x
    )
    above = len(flips) - len(shown)
    more = f"; {above} more under Hard failures" if above else ""
    head = [
        f"### 🔻 Regressions ({counts}{more}) — worse than the base history",
        "",
        "| Case | Passing samples (base history → head) | Failing checks | Expected | Actual "
        "| Why |",
        "|---|---|---|---|---|---|",
    ]
    return [Block(head, LazyRows(shown, row), [""], keep=10, cut=6, what="regressions")]


def _known_failures(results: Results, esc: Escaper) -> list[Block]:
    """Cases that fail every head sample and failed every sample of their base history
    too: known, unchanged, not what this change did."""
    cmp = results.comparison
    if cmp is None or not cmp.comparable:
        return []
    listed = {f.case_id for f in cmp.flips}
    hard = {h.case_id for h in results.hard_failures}
    known = [
        c
        for c in results.cases
        if c.samples
        and c.pass_rate == 0.0
        and c.id not in listed
        and c.id not in hard
        and c.test is not None
        and c.test.comparability == "comparable"
        and c.test.base_passes == 0
    ]
    if not known:
        return []
    ids = ", ".join(esc.code(c.id, 80, table=False) for c in known[:30])
    more = f" and {len(known) - 30:,} more" if len(known) > 30 else ""
    return [
        Block(
            [
                f"_Known failures, unchanged: {plural(len(known), 'case')} failed every sample "
                f"of the base history and of this run: {ids}{more}._",
                "",
            ]
        )
    ]


def _failing_without_baseline(results: Results, esc: Escaper) -> list[Block]:
    """With no comparable baseline there are no flips: list the cases that fail on every
    sample instead (flaky ones are listed apart), with the same evidence as regressions.
    When the gate passed anyway they are framed as known failures."""
    cmp = results.comparison
    if cmp is not None and cmp.comparable:
        return []
    hard = {h.case_id for h in results.hard_failures}
    apart = set(failed_by_agent(results))  # listed apart: the agent gave no answer
    # Flaky cases have their own section ("flaky cases apart").
    failing = sorted(
        (
            c
            for c in results.cases
            if not c.passed and not c.flaky and c.id not in hard and c.id not in apart
        ),
        key=lambda c: (c.pass_rate, c.id),
    )
    if not failing:
        return []
    lim = 160

    def row(c: CaseResult) -> str:
        sample = _first_failing(c)
        checks = list(sample.failed_checks) if sample else []
        return (
            f"| {_case_cell(c.id, c.line, esc)} "
            f"| {fmt.rate_fraction(c.pass_rate, sampled(results, c))} "
            f"| {_evidence_cells(sample, checks, esc, lim, False)} |"
        )

    n = sum(len(c.samples) for c in failing)
    passed = results.verdict is not None and results.verdict.passed
    title = (
        f"### Known failures ({samples_of(len(failing), n)}) — fail on every sample; "
        "the gate passes with them"
        if passed
        else f"### ❌ Failing cases ({samples_of(len(failing), n)}) — fail on every sample"
    )
    head = [title, "", *_EVIDENCE_HEAD]
    shown, more = failing[:SHOW_FAILING], failing[SHOW_FAILING:]
    blocks = [
        Block(head, LazyRows(shown, row), [""], keep=SHOW_FAILING, cut=6, what="failing cases")
    ]
    if more:
        blocks.append(
            Block(
                ["<details>", f"<summary>{plural(len(more), 'more failing case')}</summary>", "",
                 *_EVIDENCE_HEAD],
                LazyRows(more, row),
                ["", "</details>", ""],
                keep=0,
                cut=2,
                what="failing cases",
                drop_whole=True,
            )
        )  # fmt: skip
    return blocks


SHOW_FAILING = 5
"""Failing cases in sight in a comment without a comparison (the rest collapsed)."""


def _case_cell(case_id: str, line: int | None, esc: Escaper) -> str:
    where = f" <sub>line {line}</sub>" if line else ""
    return f"{esc.code(case_id, 80)}{where}"


def _rates(f: Flip, *, p: bool = True) -> str:
    base = fmt.rate_fraction(f.base_pass_rate, f.base_samples)
    head = fmt.rate_fraction(f.head_pass_rate, f.head_samples)
    shown = "" if f.p_value is None or not p else f" (p = {f.p_value:.2g})"
    return f"{base} → {head}{shown}"


def _checks(checks: Iterable[str], esc: Escaper) -> str:
    return ", ".join(esc.code(c, 60) for c in checks) or "—"


def _why(
    ev: Mapping[str, Any],
    sample: SampleResult | None,
    checks: Sequence[str],
    esc: Escaper,
    lim: int,
) -> list[str]:
    """Short rendered reasons from a sample's evidence (``gate.report.evidence``)."""
    out: list[str] = []
    for label, value, prose in evidence.items(ev, sample.error if sample else None):
        # A label is ours, except a violation's unknown rule name: escaped like data.
        parts = [esc.text(label, 60)] if label else []
        if value is not None:
            parts.append(esc.code(value, lim))
        if prose:
            parts.append(("— " if value is not None else "") + esc.text(prose, lim))
        out.append(" ".join(parts))
    if not out and sample is not None:
        for c in checks:
            reason = sample.reasons.get(c)
            if reason:
                out.append(esc.text(reason, lim))
    return out


# ─── 5. tool-definition drift ────────────────────────────────────────────────


def _drift(results: Results, esc: Escaper, full: bool) -> list[Block]:
    base = results.comparison.tool_drift if results.comparison is not None else []
    served = results.mcp_tool_drift
    if not base and not served:
        return []
    max_lines = 200 if full else 30
    rows = []
    for d in sorted(base, key=lambda d: d.tool):
        flipped = ", ".join(esc.code(c, 60) for c in d.flipped_cases[:20]) or "none"
        if len(d.flipped_cases) > 20:
            flipped += f" … (+{len(d.flipped_cases) - 20})"
        parts = [f"**{esc.code(d.tool, 80, table=False)}** {d.change} · flipped cases: {flipped}"]
        rows.append(_drift_row(parts, d.diff, esc, max_lines))
    for d in sorted(served, key=lambda d: d.tool):
        tool = esc.code(d.tool, 80, table=False)
        if d.server:
            line = f"**{tool}** {d.change} on MCP server {esc.code(d.server, 60, table=False)}"
        else:
            line = f"**{tool}** {d.change}: no MCP server advertises it"
        rows.append(_drift_row([line + " (pinned → advertised)"], d.diff, esc, max_lines))
    head = [f"### 🔧 Tool-definition drift ({len(rows)})", ""]
    if base:
        head += [
            "The model saw different tool definitions on base and head; a one-word change "
            "to a description can change which tool it picks.",
            "",
        ]
    if served:
        head += [
            "The MCP servers of `agent.servers` advertise tools that differ from the pinned "
            "ones: refresh the tools file with `toolgate import mcp-tools` and re-pin, or "
            "fix the server.",
            "",
        ]
    if full:
        return [Block(head, rows, [""], keep=5, cut=4, what="changed tools")]
    if not_compared(results) is not None:
        # nothing was compared across the drift: the whole section folded, one line
        summary = f"🔧 Tool-definition drift ({len(rows)}): the tools differ from the baseline's"
        return [
            Block(
                ["<details>", f"<summary>{summary}</summary>", "", *head[2:]],
                rows,
                ["</details>", ""],
                keep=0,
                cut=4,
                what="changed tools",
            )
        ]
    # In the comment the diffs are folded: the tools are named, one line
    names = [esc.text(d.tool, 60) for d in sorted(base, key=lambda d: d.tool)]
    names += [esc.text(d.tool, 60) for d in sorted(served, key=lambda d: d.tool)]
    shown = ", ".join(names[:8]) + (f", … (+{len(names) - 8})" if len(names) > 8 else "")
    head += ["<details>", f"<summary>The definitions, base → head: {shown}</summary>", ""]
    return [Block(head, rows, ["</details>", ""], keep=0, cut=4, what="changed tools")]


def _drift_row(parts: list[str], diff: Sequence[str], esc: Escaper, max_lines: int) -> str:
    if diff:
        parts.append(_fenced(diff[:max_lines], esc, "diff"))
        if len(diff) > max_lines:
            parts.append(f"_… {len(diff) - max_lines} more diff lines in the full report._")
    return "\n".join(parts) + "\n"


def _fenced(lines: Sequence[str], esc: Escaper, lang: str) -> str:
    """A fenced block of data lines: each line made visible and truncated, and a fence
    longer than any backtick run inside, so the data cannot close it."""
    body = [esc.console(line, 300) for line in lines]
    longest = max((len(r) for line in body for r in _runs(line, "`")), default=0)
    fence = "`" * max(3, longest + 1)
    return "\n".join([f"{fence}{lang}", *body, fence])


def _runs(s: str, ch: str) -> list[str]:
    out, cur = [], ""
    for c in s:
        if c == ch:
            cur += c
        elif cur:
            out.append(cur)
            cur = ""
    if cur:
        out.append(cur)
    return out


# ─── 6. fixed, flaky, new/removed ────────────────────────────────────────────


def _listing(
    title: str,
    intro: Sequence[str],
    table: Sequence[str],
    rows: Sequence[str],
    *,
    full: bool,
    what: str,
    collapse: bool = True,
) -> Block:
    """A titled table: a section of the full report; in the comment, collapsed under its
    title (``collapse``) so that a case appears once outside collapsed blocks."""
    if full or not collapse:
        head = [f"### {title}", "", *intro, *table]
        return Block(head, rows, [""], keep=0, cut=3, what=what)
    head = ["<details>", f"<summary>{title}</summary>", "", *intro, *table]
    return Block(head, rows, ["", "</details>", ""], keep=0, cut=3, what=what, drop_whole=True)


def _fixed(results: Results, esc: Escaper, full: bool) -> list[Block]:
    flips = sorted(
        _flips(results, "fix", "likely_fix"),
        key=lambda f: (f.kind != "fix", _drop(f), f.case_id),
    )
    if not flips:
        return []

    def row(f: Flip) -> str:
        rates = _rates(f)
        if f.kind == "likely_fix":
            rates += f" — likely: {esc.text(f.because or 'not significant yet', 120)}"
        return f"| {_case_cell(f.case_id, f.line, esc)} | {rates} |"

    significant = sum(1 for f in flips if f.kind == "fix")
    counts = ", ".join(
        x
        for x in (
            f"{significant} significant" if significant else "",
            f"{len(flips) - significant} likely" if len(flips) > significant else "",
        )
        if x
    )
    return [
        _listing(
            f"✅ Fixed ({counts}) — better than the base history",
            [],
            ["| Case | Passing samples (base history → head) |", "|---|---|"],
            LazyRows(flips, row),
            full=full,
            what="fixed cases",
            collapse=False,
        )
    ]


def _flaky(results: Results, esc: Escaper, full: bool) -> list[Block]:
    """Cases whose change is within noise, and cases flaky on head that no other section
    lists (collapsed in the comment)."""
    noise = {f.case_id: f for f in _flips(results, "noise")}
    elsewhere = {
        f.case_id
        for f in (results.comparison.flips if results.comparison is not None else [])
        if f.kind != "noise"
    } | {h.case_id for h in results.hard_failures}
    flaky = [c for c in results.cases if (c.flaky or c.id in noise) and c.id not in elsewhere]
    if not flaky:
        return []

    def row(c: CaseResult) -> str:
        checks = sorted({x for s in c.samples if not s.passed for x in s.failed_checks})
        f = noise.get(c.id)
        change = _rates(f) if f else fmt.rate_fraction(c.pass_rate, len(c.samples))
        return f"| {_case_cell(c.id, c.line, esc)} | {change} | {_checks(checks, esc)} |"

    rows = LazyRows(sorted(flaky, key=lambda c: (c.pass_rate, c.id)), row)
    return [
        _listing(
            f"🎲 Flaky or within noise ({len(rows)}) — not counted as flips",
            [
                "Cases that pass on some samples and fail on others, or whose change from "
                "the base history is within noise.",
                "",
            ],
            ["| Case | Passing samples | Checks failing on some samples |", "|---|---|---|"],
            rows,
            full=full,
            what="flaky cases",
        )
    ]


def _rule(results: Results) -> str:
    return results.comparison.rule if results.comparison is not None else ""


def _new_failures(results: Results, esc: Escaper, full: bool) -> list[Block]:
    """Cases this change added that fail, with their evidence: they have no history to
    regress from, and are shown as plainly as a regression (those that broke a hard rule
    are in the hard failures, counted in the title)."""
    fresh = _new_failing(results)
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
        f"### 🆕 New cases that fail ({len(shown)}{more}) — added by this change, no "
        f"history to compare with; {rule}"
    )
    if not shown:
        return [Block([title, ""])]
    cases = _case_index(results)
    lim = 240 if full else 160

    def row(f: Flip) -> str:
        case = cases.get(f.case_id)
        return (
            f"| {_case_cell(f.case_id, f.line or (case.line if case else None), esc)} "
            f"| {fmt.rate_fraction(f.head_pass_rate, f.head_samples)} "
            f"| {_flip_evidence(f, case, esc, lim, full)} |"
        )

    head = [title, "", *_EVIDENCE_HEAD]
    return [Block(head, LazyRows(shown, row), [""], keep=10, cut=6, what="new failing cases")]


def _new_removed(results: Results, esc: Escaper, full: bool) -> list[Block]:
    """New cases that pass, and removed cases of a file without ``changes`` (an earlier
    release's): listed once each (a new case that fails is shown above, a removed one
    that ``changes`` counts in its own section)."""
    failing = {f.case_id for f in _new_failing(results)}
    new = [f for f in _flips(results, "new") if f.case_id not in failing]
    cmp = results.comparison
    counted = {r.case_id for r in cmp.changes.removed} if cmp is not None else set()
    removed = [f for f in _flips(results, "removed") if f.case_id not in counted]
    if not new and not removed:
        return []
    rows = [
        f"| {_case_cell(f.case_id, f.line, esc)} | new | "
        f"{fmt.rate_fraction(f.head_pass_rate, f.head_samples)} |"
        for f in sorted(new, key=lambda f: f.case_id)
    ]
    rows += [
        f"| {esc.code(f.case_id, 80)} | removed | — |"
        for f in sorted(removed, key=lambda f: f.case_id)
    ]
    title = (
        f"New and removed cases ({len(new)} new that pass, {len(removed)} removed)"
        if removed
        else f"New cases that pass ({len(new)})"
    )
    return [
        _listing(
            title,
            [],
            ["| Case | Change | Passing samples (head) |", "|---|---|---|"],
            rows,
            full=full,
            what="new or removed cases",
        )
    ]


def history_tests(results: Results, esc: Escaper, full: bool = True) -> list[Block]:
    """The tests against the base history: what this run could detect and spent, in
    words, then the cases listed apart from the flips — undecided (the sampling cap
    stopped them) and not comparable (changed since their history) — collapsed in the
    comment."""
    pol = results.policy
    if pol is None or results.comparison is None:
        return []
    if not full and not_compared(results) is not None:
        return []  # nothing was tested against a history: nothing to say in the comment
    listed = {f.case_id for f in results.comparison.flips} | {
        h.case_id for h in results.hard_failures
    }
    undecided = [
        c
        for c in results.cases
        if c.test is not None and c.test.outcome == "undecided" and c.id not in listed
    ]
    changed = [
        c
        for c in results.cases
        if c.test is not None
        and c.test.outcome == "not_comparable"
        and c.test.comparability == "changed"
    ]
    lines = ["### 🧪 Tests against the base history", ""]
    lines += [esc.text(s, 400) for s in pol.detect]
    lines.append("")

    def counts(c: CaseResult) -> str:
        t = c.test
        assert t is not None
        base = "—" if t.base_samples is None else f"{t.base_passes}/{t.base_samples}"
        p = "" if t.p_worse is None else f" (p = {t.p_worse:.2g})"
        return f"| {_case_cell(c.id, c.line, esc)} | {base} → {t.head_passes}/{t.head_samples}{p} |"

    blocks = [Block(lines)]
    if undecided:
        blocks.append(
            _listing(
                f"Undecided ({len(undecided)}) — the sampling cap stopped them before the "
                "test could tell; not counted as flips",
                [],
                ["| Case | Passing samples (base history → head) |", "|---|---|"],
                LazyRows(undecided, counts),
                full=full,
                what="undecided cases",
            )
        )
    if changed:
        rows = LazyRows(
            changed,
            lambda c: (
                f"| {_case_cell(c.id, c.line, esc)} | "
                f"{c.test.head_passes if c.test else 0}/{c.test.head_samples if c.test else 0} |"
            ),
        )
        blocks.append(
            _listing(
                f"Not comparable ({len(changed)}) — the case or the scoring changed since its "
                "history, which starts again; never a flip",
                [],
                ["| Case | Passing samples (head) |", "|---|---|"],
                rows,
                full=full,
                what="not comparable cases",
            )
        )
    return blocks


# ─── 7. per-tool recall ──────────────────────────────────────────────────────


def _per_tool(results: Results, esc: Escaper, full: bool) -> list[Block]:
    if not results.per_tool:
        return []
    items = sorted(
        results.per_tool.items(),
        key=lambda kv: (kv[1].recall if kv[1].recall is not None else 2.0, kv[0]),
    )
    rows = LazyRows(
        items,
        lambda kv: (
            f"| {esc.code(kv[0], 80)} | `{fmt.bar(kv[1].recall)}` {fmt.num(kv[1].recall)} "
            f"| {kv[1].matched}/{kv[1].expected} | {kv[1].called} |"
        ),
    )
    low = sum(1 for _, t in items if t.recall is not None and t.recall < 1.0)
    title = "Per-tool recall" + (f" ({low} below 1.000)" if low and not full else "")
    block = _listing(
        title,
        [],
        ["| Tool | Recall | Matched / expected | Called |", "|---|---|--:|--:|"],
        rows,
        full=full,
        what="tools",
    )
    block.cut = 2
    return [block]


# ─── full report only: slices, confusion, failing cases ─────────────────────


def _slices(results: Results, esc: Escaper) -> list[Block]:
    if not results.slices:
        return []
    shown = ["tool_selection_f1", "call_accuracy", "schema_validity", "must_not_call_violations"]
    head = [
        "### Slices",
        "",
        "| Slice | Cases | Pass rate | " + " | ".join(shown) + " |",
        "|---|--:|--:|" + "--:|" * len(shown),
    ]
    rows = []
    for name in sorted(results.slices):
        s = results.slices[name]
        vals = " | ".join(fmt.num(s.metrics[m].mean) if m in s.metrics else "—" for m in shown)
        rows.append(f"| {esc.code(name, 80)} | {s.cases} | {fmt.num(s.pass_rate)} | {vals} |")
    return [Block(head, rows, [""], keep=0, cut=2, what="slices")]


def _confusion(results: Results, esc: Escaper) -> list[Block]:
    blocks: list[Block] = []
    pairs = [
        (n, exp, act)
        for exp, row in results.confusion.items()
        for act, n in row.items()
        if exp != act and n
    ]
    if pairs:
        pairs.sort(key=lambda p: (-p[0], p[1], p[2]))
        rows = [f"| {esc.code(e, 80)} | {esc.code(a, 80)} | {n} |" for n, e, a in pairs]
        head = [
            "### Tool confusion (single-tool cases)",
            "",
            "| Expected | Called instead | Times |",
            "|---|---|--:|",
        ]
        blocks.append(Block(head, rows, [""], keep=10, cut=2, what="confusion pairs"))
    if results.malformed:
        rows = [
            f"| {esc.code(k, 80)} | {n} |"
            for k, n in sorted(results.malformed.items(), key=lambda kv: (-kv[1], kv[0]))
        ]
        head = ["### Malformed calls", "", "| Class | Calls |", "|---|--:|"]
        blocks.append(Block(head, rows, [""]))
    return blocks


def _failing_cases(results: Results, esc: Escaper) -> list[Block]:
    failing = [c for c in results.cases if not c.passed]
    if not failing:
        return []

    def row(c: CaseResult) -> str:
        parts = [
            f"- {_case_cell(c.id, c.line, esc)} — "
            f"{fmt.rate_fraction(c.pass_rate, len(c.samples))} samples pass"
        ]
        for numbers, lines in group_samples(c, lambda s: _sample_lines(s, esc)):
            label = "sample" if len(numbers) == 1 else "samples"
            parts.append(f"  - {label} {', '.join(map(str, numbers))}: {lines[0]}")
            parts += [f"    - {line}" for line in lines[1:]]
        return "\n".join(parts)

    rows = LazyRows(failing, row)
    head = [f"### Failing cases ({len(failing)}), with evidence", ""]
    # Cut after the all-cases table (rank 1): evidence says more than a list of ids.
    return [Block(head, rows, [""], keep=20, cut=2, what="failing cases")]


def _sample_lines(s: SampleResult, esc: Escaper) -> list[str]:
    ev = s.evidence
    lines = [_checks(s.failed_checks, esc)]
    if "expected" in ev:
        lines.append(f"expected {esc.code(calls_repr(ev['expected']), 300, table=False)}")
    if "actual" in ev:
        lines.append(f"actual {esc.code(calls_repr(ev['actual']), 300, table=False)}")
    lines += _why(ev, s, s.failed_checks, esc, 300)
    return lines


def _conversations(results: Results, esc: Escaper) -> list[Block]:
    """Every failing conversation case turn by turn, collapsed: what the user said in each
    turn, what the agent called, and whether the turn passed (samples that failed the
    same way share one table)."""
    failing = [c for c in results.cases if not c.passed and any(s.turns for s in c.samples)]
    if not failing:
        return []

    def table(s: SampleResult) -> list[str]:
        lines = ["| Turn | The user | The agent called | Result |", "|--:|---|---|---|"]
        found = check_sentences(s, where=False)
        why = render_sentence(found[0][1], esc, 240) if found else ""
        for i, t in enumerate(s.turns or (), start=1):
            called = ", ".join(esc.code(n, 60) for n in t.called) or "—"
            if not t.ran:
                result = "not reached"
            elif t.passed:
                result = "✅ passed"
            else:
                result = f"❌ {_checks(ordered_checks(t.failed_checks), esc)}"
                if i == s.first_failing_turn and why:
                    result += f" — {why}"
            lines.append(f"| {i} | {esc.text(t.user or '', 160)} | {called} | {result} |")
        return lines

    def row(c: CaseResult) -> str:
        parts = []
        for numbers, lines in group_samples(c, table):
            first = next(s for s in c.samples if s.sample == numbers[0])
            label = "sample" if len(numbers) == 1 else "samples"
            at = first.first_failing_turn
            where = f" failed at turn {at} of {len(first.turns or ())}" if at else " failed"
            parts += [
                f"- {_case_cell(c.id, c.line, esc)} — {label} "
                f"{_numbers(numbers, results.samples)}{where}",
                "",
                "<details><summary>turn by turn</summary>",
                "",
                *lines,
                "",
                "</details>",
                "",
            ]
        return "\n".join(parts).rstrip("\n")

    rows = LazyRows(failing, row)
    head = [f"### Failing conversations, turn by turn ({len(failing)})", ""]
    return [Block(head, rows, [""], keep=10, cut=2, what="failing conversations")]


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


# ─── 8. judge ─────────────────────────────────────────────────────────────────


def _judge(results: Results, esc: Escaper) -> list[Block]:
    names = sorted(m for m in results.metrics if m.startswith(JUDGE_METRIC_PREFIX))
    cmp = results.comparison
    deltas = cmp.metrics if cmp is not None and cmp.comparable else {}
    extras: list[str] = []
    judge = results.judge or {}
    for key in sorted(judge):
        value = judge[key]
        if isinstance(value, bool | int | float | str) or value is None:
            shown = fmt.num(value) if isinstance(value, float) else str(value)
            extras.append(
                f"- {esc.code(key, 60, table=False)}: {esc.code(shown, 120, table=False)}"
            )
    if not names and not extras:
        return []
    rows = []
    for m in names:
        stat = results.metrics[m]
        d = deltas.get(m)
        base = fmt.num(d.base) if d else "—"
        rows.append(
            f"| {esc.code(m[len(JUDGE_METRIC_PREFIX) :], 80)} | {base} | {fmt.num(stat.mean)} "
            f"| {fmt.delta(m, d.delta, plain=True) if d else '—'} | {stat.n} |"
        )
    head = [
        "### ⚖️ Judge scores — reported, not gating",
        "",
        "An LLM judge's scores; they never change the verdict.",
        "",
    ]
    if rows:
        head += ["| Rubric | Base | Head | Δ | Judged |", "|---|--:|--:|--:|--:|"]
    tail = ["", *extras, ""] if extras else [""]
    return [Block(head, rows, tail, keep=0, cut=3, what="rubrics")]


# ─── 9. all cases ─────────────────────────────────────────────────────────────


def _all_cases(results: Results, esc: Escaper, full: bool) -> list[Block]:
    if not results.cases:
        return []

    ph = pass_hat_k(results) if full or has_conversations(results) else None

    def row(c: CaseResult) -> str:
        mark = "✅" if c.passed else "❌"
        flaky = "🎲" if c.flaky else ""
        checks = sorted({x for s in c.samples if not s.passed for x in s.failed_checks})
        hat = f" | {fmt.num(ph.cases.get(c.id))}" if ph is not None else ""
        return (
            f"| {esc.code(c.id, 80)} | {mark} "
            f"| {fmt.rate_fraction(c.pass_rate, sampled(results, c))}{hat} "
            f"| {flaky} | {_checks(checks, esc)} | {c.line or ''} |"
        )

    rows = LazyRows(results.cases, row)
    n_pass = sum(1 for c in results.cases if c.passed)
    hat_head = f" | pass^{ph.k}" if ph is not None else ""
    head = [
        "<details>",
        f"<summary>All cases ({len(results.cases):,}: {n_pass:,} pass, "
        f"{len(results.cases) - n_pass:,} fail)</summary>",
        "",
        f"| Case | Result | Passing samples{hat_head} | Flaky | Failing checks | Line |",
        "|---|---|---|" + ("--:|" if ph is not None else "") + "---|---|--:|",
    ]
    return [Block(head, rows, ["", "</details>", ""], keep=0, cut=1, what="cases", drop_whole=True)]


# ─── 10. run information ─────────────────────────────────────────────────────


def _run_info(results: Results, esc: Escaper, full: bool) -> list[Block]:
    ds = results.dataset
    version = esc.code(ds.version, 60, table=False) if ds.version else "unversioned"
    lines = [
        "<details>",
        "<summary>Run information</summary>",
        "",
        f"- dataset: {esc.code(ds.path, 200, table=False)} {version}, "
        f"sha256 {esc.code(ds.sha256[:16], 16, table=False)}…, {ds.cases:,} cases",
        f"- samples per case: {results.samples}; seed: {results.seed}",
    ]
    if results.shard is not None:
        lines.append(f"- shard: {results.shard.index}/{results.shard.count}")
    if results.policy is not None:
        sp = results.policy.spend
        lines.append(
            f"- extra samples: {sp.extra} on {sp.sampled} undecided case(s), at most "
            f"{sp.cap}, in {sp.rounds} round(s)"
            + (f"; {sp.seed} seeding {sp.seeded} base histories" if sp.seed else "")
        )
    elif results.confirm is not None and results.confirm.extra_samples:
        c = results.confirm
        lines.append(
            f"- confirmation: {c.extra_samples} extra samples on {len(c.cases)} apparent flips "
            f"(at most {c.max_extra_samples})"
        )
    detect = could_detect(results, full) if results.policy is None else None
    if detect:
        lines.append(f"- sensitivity: {esc.text(detect, 400)}")
    if results.agent:
        agent = json_compact(results.agent)
        lines.append(f"- agent: {esc.code(agent, 600 if full else 300, table=False)}")
    lines += _usage_lines(results, esc, full)
    # Wall-clock figures differ between identical runs: never in the comment, whose body
    # would otherwise change (and be edited) on every push.
    for key in sorted(results.timing) if full else []:
        lines.append(
            f"- {esc.code(key, 60, table=False)}: {_timing_value(key, results.timing[key], esc)}"
        )
    if results.notices:
        lines += ["", "**Notices**", ""]
        lines += [f"- {esc.text(n, 400)}" for n in results.notices[: 200 if full else 20]]
        if len(results.notices) > (200 if full else 20):
            lines.append(f"- … {len(results.notices) - (200 if full else 20)} more")
    lines += [
        "",
        f"<sub>ToolGate {esc.text(results.toolgate_version, 40)}</sub>",
        "",
        "</details>",
        "",
    ]
    return [Block(lines)]


def _usage_lines(results: Results, esc: Escaper, full: bool) -> list[str]:
    """The usage the agent reported, in all (the full report; per sample, against the
    base history, it is the metric table's Cost group)."""
    if not full:
        return []
    keys = sorted(k for k in results.usage if not k.endswith(("_per_case", "_per_sample")))
    return [f"- {esc.code(k, 60, table=False)} in all: {fmt.count(results.usage[k])}" for k in keys]


def could_detect(results: Results, full: bool) -> str | None:
    """What this run could and could not detect, in words — or None when the sensitivity
    figures say nothing useful (the comment then leaves the line out)."""
    adv = results.advisor
    if adv is None:
        return None
    return adv.summary if full else None


def _timing_value(key: str, value: Any, esc: Escaper) -> str:
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
                parts.append(f"{esc.text(str(k), 40)} {shown}{unit}")
        if parts:
            return " · ".join(parts)
    return esc.code(json_compact(value) if not isinstance(value, str) else value, 120, table=False)
