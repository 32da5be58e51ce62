"""JUnit XML: one ``<testcase>`` per case, so any test-report tool shows the gate.

Layout::

    <testsuites name="toolgate" tests= failures= errors=>
      <testsuite name="<gate name>">               one testcase per case, dataset order
        <testcase classname="toolgate.<gate>" name="<case id>" file="<dataset>" line="<n>">
          <failure type="<first check>" message="failing checks …">per-sample detail</failure>
          <system-out>pass rate, flakiness</system-out>
        </testcase>
      </testsuite>
      <testsuite name="<gate name>.gates">         one testcase per threshold gate
    </testsuites>

A case fails when the policy says it failed (``CaseResult.passed``); a case the comparison
with the base history classified (a regression, a likely regression, a fix, noise: the
one classification every report uses) says so first in its ``system-out`` and, when it
failed, in its ``<failure>`` message. Its ``<failure>``
carries the failing checks of every failing sample with the evidence (expected and actual
calls, missing/extra, argument differences, malformed calls, violations). When every
failing sample failed because the agent itself errored (crash, timeout, protocol), it is
an ``<error>`` instead. No ``time`` attributes: the file is deterministic (timing lives in
results.json under ``timing``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict

from gate.model import GateOp, gate_label
from gate.report import fmt
from gate.report.cases import group_samples
from gate.report.console import plain
from gate.report.escape import Escaper, calls_repr
from gate.report.lookup import undecided
from gate.report.redact import Redactor
from gate.report.sentences import check_sentences
from gate.report.view import status
from gate.results import CaseResult, HardFailureResult, Results, SampleResult, sampled
from gate.scorers.registry import COST_METRICS

_DETAIL_LIMIT = 2_000


def render_junit(results: Results, *, redactor: Redactor | None = None) -> str:
    esc = Escaper(redactor or Redactor(), limit=_DETAIL_LIMIT)
    hard: dict[str, list[HardFailureResult]] = defaultdict(list)
    for hf in results.hard_failures:
        hard[hf.case_id].append(hf)

    suites = ET.Element("testsuites", name="toolgate")
    suite = ET.SubElement(suites, "testsuite", name=esc.xml(results.gate_name, 200))
    props = ET.SubElement(suite, "properties")
    _, word = status(results)
    cmp = results.comparison
    flips = {f.case_id: f for f in (cmp.flips if cmp is not None else [])}
    for key, value in (
        ("verdict", word),
        ("regressions", str(cmp.regressions if cmp is not None else 0)),
        ("likely_regressions", str(cmp.likely_regressions if cmp is not None else 0)),
        ("undecided", str(len(undecided(results)))),
        ("dataset", results.dataset.path),
        ("dataset_version", results.dataset.version or ""),
        ("dataset_sha256", results.dataset.sha256),
        ("samples", str(results.samples)),
        ("seed", str(results.seed)),
        ("toolgate_version", results.toolgate_version),
    ):
        ET.SubElement(props, "property", name=key, value=esc.xml(value, 500))
    failures = errors = 0
    for case in results.cases:
        tc = ET.SubElement(
            suite,
            "testcase",
            classname=esc.xml(f"toolgate.{results.gate_name}", 200),
            name=esc.xml(case.id, 500),
            file=esc.xml(results.dataset.path, 500),
        )
        if case.line:
            tc.set("line", str(case.line))
        # a missing sample (the infrastructure failed it) failed no check: not a failure
        failing = [s for s in case.samples if not s.passed and s.failed_checks]
        if not case.passed and not failing:
            ET.SubElement(tc, "skipped", message="not sampled: every sample is missing")
        elif not case.passed:
            all_errors = bool(failing) and all(s.error for s in failing) and not hard.get(case.id)
            tag = "error" if all_errors else "failure"
            if all_errors:
                errors += 1
            else:
                failures += 1
            labels = list(dict.fromkeys(h.kind for h in hard.get(case.id, [])))
            for s in failing:
                labels += [c for c in s.failed_checks if c not in labels]
            if all_errors:
                labels = list(dict.fromkeys(["agent_error", *labels]))
            first = labels[0] if labels else "failed"
            flip = flips.get(case.id)
            kind = f"{flip.kind.replace('_', ' ')}: " if flip is not None else ""
            message = (
                f"{kind}{'; '.join(labels) or 'failed'} "
                f"({fmt.rate_fraction(case.pass_rate, sampled(results, case))} samples pass)"
            )
            el = ET.SubElement(tc, tag, type=esc.xml(first, 200), message=esc.xml(message, 1000))
            el.text = esc.xml(_detail(case, failing, hard.get(case.id, []), esc), 20_000)
        notes = [f"pass rate {fmt.num(case.pass_rate)} over {sampled(results, case)} samples"]
        flip = flips.get(case.id)
        if flip is not None:
            notes.insert(0, f"{flip.kind.replace('_', ' ')}: {esc.xml(flip.reason, 500)}")
        if case.flaky:
            notes.append("flaky: passes on some samples and fails on others")
        ET.SubElement(tc, "system-out").text = "\n".join(notes)
    _counts(suite, len(results.cases), failures, errors)

    gates = results.verdict.gates if results.verdict else []
    gate_failures = 0
    if gates:
        gsuite = ET.SubElement(suites, "testsuite", name=esc.xml(f"{results.gate_name}.gates", 200))
        for g in gates:
            op = ">=" if g.op == GateOp.MIN else "<="
            bound = (
                fmt.cost(g.metric, g.threshold)
                if g.metric in COST_METRICS
                else fmt.num(g.threshold)
            )
            name = f"{gate_label(g.metric, g.slice)} " + (
                f"{op} {bound}"
                if g.op != GateOp.MAX_INCREASE
                else f"rises at most {fmt.percent(g.threshold)} per sample"
            )
            tc = ET.SubElement(
                gsuite,
                "testcase",
                classname=esc.xml(f"toolgate.{results.gate_name}.gates", 200),
                name=esc.xml(name, 500),
            )
            if g.undecided:
                ET.SubElement(tc, "skipped", message=esc.xml(g.reason, 1000))
            if not g.passed:
                gate_failures += 1
                el = ET.SubElement(
                    tc, "failure", type="threshold", message=esc.xml(g.reason or name, 1000)
                )
                lines = (
                    [f"value {fmt.num(g.value)}, threshold {op} {fmt.num(g.threshold)}"]
                    if g.op != GateOp.MAX_INCREASE
                    else [g.reason]
                )
                if g.failing_cases:
                    lines.append("failing cases: " + ", ".join(g.failing_cases[:200]))
                el.text = esc.xml("\n".join(lines), 20_000)
        _counts(gsuite, len(gates), gate_failures, 0, sum(1 for g in gates if g.undecided))
    _counts(suites, len(results.cases) + len(gates), failures + gate_failures, errors)
    ET.indent(suites)
    body = ET.tostring(suites, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + (redactor or Redactor()).redact(body) + "\n"


def _counts(el: ET.Element, tests: int, failures: int, errors: int, skipped: int = 0) -> None:
    el.set("tests", str(tests))
    el.set("failures", str(failures))
    el.set("errors", str(errors))
    if el.tag == "testsuite":
        el.set("skipped", str(skipped))


def _detail(
    case: CaseResult,
    failing: list[SampleResult],
    hard: list[HardFailureResult],
    esc: Escaper,
) -> str:
    lines: list[str] = []
    seen: set[tuple[str, str, str]] = set()
    for h in hard:
        key = (h.kind, calls_repr(h.call), h.message)
        if key in seen:
            continue
        seen.add(key)
        samples = sorted({x.sample for x in hard if (x.kind, calls_repr(x.call), x.message) == key})
        lines.append(
            f"{h.kind} (samples {', '.join(map(str, samples))}): "
            f"{esc.console(calls_repr(h.call), 500)} — {esc.console(h.message, 500)}"
        )
    for numbers, detail in group_samples(case, lambda s: _sample_detail(s, esc)):
        label = "sample" if len(numbers) == 1 else "samples"
        lines.append(f"{label} {', '.join(map(str, numbers))}: {detail[0]}")
        lines += detail[1:]
    return "\n".join(lines)


def _sample_detail(s: SampleResult, esc: Escaper) -> list[str]:
    """A failing sample: its checks, the calls expected and made, and each check's
    sentence (the words every report uses, :mod:`gate.report.sentences`)."""
    lines = [f"failing checks: {', '.join(s.failed_checks) or '—'}"]
    ev = s.evidence
    for label in ("expected", "actual"):
        if label in ev:
            lines.append(f"  {label}: {esc.console(calls_repr(ev[label]), 1000)}")
    lines += [f"  {esc.console(c, 60)}: {plain(said, esc)}" for c, said in check_sentences(s)]
    return lines
