"""One view of the report: what every renderer shows, as data (:mod:`gate.report.parts`).

:func:`view` turns a :class:`gate.results.Results` into a :class:`~gate.report.parts.View`
— never recomputing a score — and the comment, report.md, the step summary and the console
each render it (:mod:`gate.report.markdown`, :mod:`gate.report.console`). The order is
the order a reviewer needs (:func:`view` lists the sections): the heading and what the
run was compared with; what broke; the metrics; the rest, and in the full report only
the evidence.

Nothing compared is never green: a run compared with nothing, a guard or a cost gate not
checked, a case that got worse undecided or a case not run make the heading ⚠️.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from gate.model import FlipKind
from gate.policy.decide import removed_words
from gate.report import cases, fmt, metrics
from gate.report.compared import (
    case_changes_sentence,
    not_compared,
    not_compared_paras,
    removed_sections,
)
from gate.report.escape import json_compact
from gate.report.lookup import (
    broken,
    codes,
    comparable,
    fail_as_before,
    flips,
    hard_cases,
    hard_kinds,
    hard_samples_by_case,
    ids,
    join,
    new_failing_flips,
    not_run,
    plural,
    regressions,
    samples_of,
    strongest_rules,
    undecided,
)
from gate.report.parts import Box, Heading, Para, Section, View
from gate.report.sentences import Code, Sentence, spoken
from gate.results import Results

__all__ = ["SHOW_BROKEN", "status", "view"]

SHOW_BROKEN = 3
"""Broken cases the heading names (the rest are counted)."""


def status(results: Results) -> tuple[str, str]:
    """(mark, word) of the verdict. A run that passed is ⚠️, never ✅, when it compared
    nothing, left a guard or a cost gate unchecked, left a case that got worse undecided
    or did not run a case: nothing compared is never green."""
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
        or undecided(results)
        or (results.missing is not None and results.missing.not_run)
    ):
        return "⚠️", "passed"
    return "✅", "passed"


def view(results: Results) -> View:
    """The report of ``results`` as data (module doc)."""
    mark, word = status(results)
    head = Heading(mark, word, results.gate_name, headline(results))
    footer = _footer(results)
    if results.run_error is not None:  # nothing was decided: no case or metric to show
        hint = results.run_error.hint
        return View(
            head,
            (Para(["What to do: ", hint]),) if hint else (),
            (cases.not_valid(results), *metrics.drift(results), *metrics.run_info(results)),
            footer,
        )
    sections: list[Section] = [
        *cases.missing(results),
        *cases.hard_failures(results),
        *cases.regressions_section(results),
        *cases.new_failing(results),
        *cases.undecided_sections(results),
        *removed_sections(results),
        *cases.no_answer(results),
        *cases.failing(results),
        *metrics.metrics(results),
        *metrics.gates(results),
        *cases.known(results),
        *metrics.drift(results),
        *cases.fixed(results),
        *cases.flaky(results),
        *cases.new_passing(results),
        *cases.history(results),
        *metrics.per_tool(results),
        *metrics.slices(results),
        *cases.evidence(results),
        *cases.conversations(results),
        *metrics.judge(results),
        *cases.all_cases(results),
        *metrics.run_info(results),
    ]
    return View(head, context(results), tuple(sections), footer, tuple(broken(results)))


# ─── the heading ──────────────────────────────────────────────────────────────


def headline(results: Results) -> Sentence:
    """Why the gate passed or failed, in one line: the broken cases named (up to
    :data:`SHOW_BROKEN`, each once, in the first clauses that list them), cases counted
    (samples in brackets), each failure kind by the one name it has in the config."""
    if results.run_error is not None:  # nothing was measured: what happened, alone
        return [results.run_error.first_line]
    v, cmp = results.verdict, results.comparison
    named: list[str] = []

    def names(case_ids: Sequence[str]) -> Sentence:
        fresh = [c for c in case_ids if c not in named]
        take = fresh[: SHOW_BROKEN - len(named)]
        named.extend(take)
        return [": ", *ids(fresh, len(take))] if take else []

    def count(n: int, what: str) -> str:
        return f"{plural(n, 'case')} {what}"

    failed = v is not None and not v.passed
    parts: list[Sentence] = []
    if results.hard_failures:
        strongest, samples = strongest_rules(results), hard_samples_by_case(results)
        kinds = []
        for kind in hard_kinds(results):
            cids = [c for c, k in strongest.items() if k == kind]
            if cids:
                kinds.append(f"{kind}: {samples_of(len(cids), sum(len(samples[c]) for c in cids))}")
        what = f"broke a hard rule ({'; '.join(kinds)})"
        parts.append([count(len(strongest), what), *names(hard_cases(results))])
    removed = cmp.changes.removed if cmp is not None and cmp.comparable else ()
    unretired = [r for r in removed if r.retired is None]
    if unretired:
        parts.append([removed_words(unretired)])
    regs, ranked = flips(results, FlipKind.REGRESSION), regressions(results)
    if regs and cmp is not None:
        n = sum(f.head_samples for f in regs)
        worst = [f.case_id for f in ranked if FlipKind(f.kind) is FlipKind.REGRESSION]
        parts.append([f"{samples_of(len(regs), n)} regressed against ", cmp.source, *names(worst)])
    likely = flips(results, FlipKind.LIKELY_REGRESSION)
    if likely:
        rule = (
            "regressions.likely: fail" if v is not None and v.likely_fail else "not significant yet"
        )
        what = f"{plural(len(likely), 'likely regression')} ({rule})"
        parts.append(
            [
                what,
                *names(
                    [f.case_id for f in ranked if FlipKind(f.kind) is FlipKind.LIKELY_REGRESSION]
                ),
            ]
        )
    fresh = new_failing_flips(results)
    if fresh:
        rule = " (regressions.new_cases: fail)" if v is not None and v.new_fail else ""
        what = f"{plural(len(fresh), 'new case')} {'fails' if len(fresh) == 1 else 'fail'}{rule}"
        parts.append([what, *names([f.case_id for f in fresh])])
    worse = undecided(results)
    if worse:
        rule = " (regressions.undecided: fail)" if v is not None and v.undecided_fail else ""
        what = count(len(worse), f"got worse, too few samples to tell{rule}")
        parts.append([what, *names([f.case_id for f in worse])])
    skipped, short = not_run(results), not_run(results, whole=False)
    if skipped:
        parts.append([count(len(skipped), "not run (agent.missing: skip): "), *ids(skipped, 3)])
    if short and results.missing is not None:
        what = f"with {plural(sum(results.missing.not_run[c] for c in short), 'sample')} not run"
        parts.append([count(len(short), f"{what} (agent.missing: skip): "), *ids(short, 3)])
    if v is None:
        return join(
            [*parts, ["scored only; no thresholds were evaluated"], *_as_before(results)], "; "
        )
    parts += _failed(results) if failed else _passed(results)
    nc = not_compared(results)
    if nc is not None:
        said = [
            f"not compared: {nc.detail}",
            *([" (require-baseline)"] if v.require_baseline else []),
        ]
        # first, unless it is not why the gate failed
        parts.insert(len(parts) if failed and not v.require_baseline else 0, said)
    return join(parts or [[metrics.strip_word(v.summary)]], "; ")


def _passed(results: Results) -> list[Sentence]:
    """The clauses of a run that passed: its gates, what did not happen, what stayed as
    it was."""
    v, cmp = results.verdict, results.comparison
    assert v is not None
    met = [
        f"{plural(len(v.gates) - sum(g.undecided or g.not_checked for g in v.gates), 'gate')} met"
    ]
    met += [f"{n:,} not decided" for n in [sum(g.undecided for g in v.gates)] if n]
    met += [f"{n:,} not checked" for n in [sum(g.not_checked for g in v.gates)] if n]
    out: list[Sentence] = [[", ".join(met) if v.gates else "no gates configured"]]
    out.append(["no hard failures"])
    if cmp is not None and cmp.comparable:
        if not flips(results, FlipKind.REGRESSION):
            out.append(["no case regressed against ", cmp.source])
        retired = [r for r in cmp.changes.removed if r.retired is not None]
        if retired:
            out.append([f"{plural(len(retired), 'case')} retired (dataset.retired)"])
    if v.variance.not_computed:
        out.append(["variance guard not computed (one sample per case)"])
    out += _as_before(results)
    failing = [c for c in results.cases if not c.passed and c.samples]
    if not comparable(results) and failing:
        out.append([plural(len(failing), "known failing case")])
    return out


def _as_before(results: Results) -> list[Sentence]:
    """The cases that failed on both sides, and those that got better undecided."""
    out: list[Sentence] = []
    known = fail_as_before(results)
    if known:
        out.append(
            [plural(len(known), "case"), " fails" if len(known) == 1 else " fail", " as before"]
        )
    better = undecided(results, worse=False)
    if better:
        out.append([f"{plural(len(better), 'case')} got better, too few samples to tell"])
    return out


def _failed(results: Results) -> list[Sentence]:
    """The clauses of a run that failed on more than its cases: a suite-level drop, the
    gates it missed, the variance guard."""
    v = results.verdict
    assert v is not None
    out: list[Sentence] = []
    if v.suite_drops:
        drops = ", ".join("the pass rate" if d == "case_passed" else d for d in v.suite_drops)
        out.append([f"suite-level drop of {drops}"])
    missed = [g for g in v.gates if not g.passed]
    if missed:
        g = missed[0]
        where = f" on {g.slice}" if g.slice else ""
        more = f" and {len(missed) - 1} more" if len(missed) > 1 else ""
        said = f"{where} {metrics.missed_words(g)}{more}"
        out.append([f"{plural(len(missed), 'gate')} missed: ", Code(g.metric), said])
    if not v.variance.passed:
        out.append(["variance guard: " + "; ".join(r.split(" — ")[0] for r in v.variance.reasons)])
    return out


# ─── what the run was compared with ───────────────────────────────────────────


def context(results: Results) -> tuple[Para, ...]:
    """What this run was compared with, under the heading: the baseline and its
    history's depth, the dataset's and the setup's changes, and a short history with
    what this run did about it."""
    cmp = results.comparison
    if not_compared(results) is not None:
        return tuple(not_compared_paras(results))
    if cmp is None:
        return (Para(["No baseline: showing this run only."], Box.NOTE),)
    if not cmp.comparable:
        note = f" — {cmp.note}" if cmp.note else ""
        return (
            Para(
                [f"The baseline ({cmp.source}) is not comparable with this run{note}."], Box.WARNING
            ),
        )
    hist = results.policy.history if results.policy is not None else None
    depth = (
        f": a base history of {plural(hist.median_samples, 'sample')} per case"
        if hist is not None and hist.median_samples is not None
        else ""
    )
    out = [Para([f"Compared with {cmp.source}{depth}."], Box.NOTE)]
    if cmp.note:
        out.append(Para([f"Note: {cmp.note}."], Box.NOTE))
    changes = case_changes_sentence(results)
    if changes:
        out.append(Para(changes, Box.NOTE))
    changed = setup_sentence(results)
    if changed:
        out.append(Para(changed))
    warning = short_history(results)
    if warning:
        out.append(Para(warning, Box.WARNING))
    return tuple(out)


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

SHOW_ENV = 4
"""Environment variables named in "This run changes …" (the rest are counted)."""


def setup_sentence(results: Results) -> Sentence:
    """ "This run changes the model `a` → `b`, adds the tool `t` …": what changed of the
    setup under test, which every case was compared across."""
    cmp = results.comparison
    if cmp is None:
        return []
    changed: list[Sentence] = []
    for c in cmp.setup_changes:
        what = _SETUP_WORDS.get(c.key, c.key)
        if c.key == "env":
            changed += _env_changes(c.base, c.head)
        elif c.key in ("system_prompt_sha256", "params"):
            changed.append([what])
        elif c.base is None:
            changed.append([f"{what}, set to ", Code(_value(c.head))])
        elif c.head is None:
            changed.append([f"{what}, unset (was ", Code(_value(c.base)), ")"])
        else:
            changed.append([f"{what} ", Code(_value(c.base)), " → ", Code(_value(c.head))])
    tools: dict[str, list[str]] = defaultdict(list)
    for d in cmp.tool_drift:
        tools[d.change].append(d.tool)
    if tools.get("changed"):
        changed.append(
            _tools("the definition of the tool ", "the definitions of", tools["changed"])
        )
    verbs: list[Sentence] = [["changes ", *spoken(changed)]] if changed else []
    if tools.get("added"):
        verbs.append(_tools("adds the tool ", "adds", tools["added"]))
    if tools.get("removed"):
        verbs.append(_tools("removes the tool ", "removes", tools["removed"]))
    if not verbs:
        return []
    return [
        "This run ",
        *spoken(verbs),
        " against the baseline: every case is compared across the change, which is what it tests.",
    ]


def _tools(one: str, many: str, names: Sequence[str]) -> Sentence:
    if len(names) == 1:
        return [one, Code(names[0])]
    more = f", … (+{len(names) - 4}))" if len(names) > 4 else ")"
    return [f"{many} {len(names)} tools (", *codes(names[:4]), more]


def _env_changes(base: Any, head: Any) -> list[Sentence]:
    """``agent.env`` ``MODEL_NAME`` `gpt-4o` → `gpt-4.1`, one part per variable."""
    b = base if isinstance(base, dict) else {}
    h = head if isinstance(head, dict) else {}
    names = sorted(k for k in set(b) | set(h) if b.get(k) != h.get(k))
    parts: list[Sentence] = []
    for name in names[:SHOW_ENV]:
        part: Sentence = [Code("agent.env"), " ", Code(str(name)), " "]
        if name not in b:
            part += ["set to ", Code(_value(h[name]))]
        elif name not in h:
            part += ["unset (was ", Code(_value(b[name])), ")"]
        else:
            part += [Code(_value(b[name])), " → ", Code(_value(h[name]))]
        parts.append(part)
    if len(names) > SHOW_ENV:
        parts.append([f"{len(names) - SHOW_ENV} more variables of ", Code("agent.env")])
    return parts


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json_compact(value)


def short_history(results: Results) -> Sentence:
    """A base history shorter than ``policy.min_history``: how short, what it can
    catch, what this run did about the cases it could not decide, and how to get a
    longer history — for recorded runs (a ``replay`` agent) as for live ones."""
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
    out: Sentence = [f"The base history is short: {few}, below ", Code("policy.min_history")]
    out.append(f" ({hist.min_history}).")
    broken, half = hist.caught_broken, hist.caught_half
    if broken is not None and broken <= 1e-12:
        out.append(
            " In this run no drop could be significant, not even a case that always passed "
            "and now fails every sample."
        )
    elif broken is not None:
        rates = f"is caught with {pct(broken)} probability when it now always fails"
        if half is not None:
            rates += (
                ", and never when it fails half the time"
                if half <= 1e-12
                else f", and with {pct(half)} when it fails half the time"
            )
        out.append(f" With it, a case that always passed {rates}.")
    worse = undecided(results)
    sp = pol.spend
    spent = (
        "; it spent no extra samples"
        if not sp.extra
        else f"; it spent {plural(sp.extra, 'extra sample')}"
    )
    out.append(
        f" This run listed {plural(len(worse), 'case')} that got worse as undecided{spent}."
        if worse
        else f" No case got worse undecided in this run{spent}."
    )
    if pol.recorded:
        out += [
            " Recorded runs cannot add samples. For a history, score the base branch's "
            "recorded runs, several per case, and pass that results.json as the baseline."
        ]
    else:
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


def _footer(results: Results) -> Sentence:
    """``cases: 77 (56 pass, 21 fail) · samples 3 · pass^k: k=1 0.935 · … · dataset …``."""
    n_pass = sum(1 for c in results.cases if c.passed)
    ds = results.dataset
    version = f"@{ds.version}" if ds.version else ""
    out: Sentence = [
        f"cases: {len(results.cases)} ({n_pass} pass, {len(results.cases) - n_pass} fail) · "
        f"samples {results.samples}"
    ]
    hat = pass_hat_words(results)
    if hat:
        out.append(f" · {hat}")
    return [*out, " · dataset ", Code(f"{ds.path}{version}"), f" sha256 {ds.sha256[:12]}"]


def pass_hat_words(results: Results) -> str:
    """``pass^k: k=1 0.935 · k=2 0.902 · k=3 0.883``: every k the run's samples allow."""
    shown = [
        f"k={k} {fmt.num(v)}" for k, v in enumerate(results.pass_hat, start=1) if v is not None
    ]
    return "pass^k: " + " · ".join(shown) if shown else ""
