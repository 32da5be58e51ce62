"""A sample's evidence, as short labelled items every renderer can show.

The scorers record (``gate.scorers.sample``) per sample::

    expected    the expectation list that matched best: [{name, args}]
    actual      every call made, in order: [{name, arguments, raw_arguments?, parse_ok, turn}]
    missing     expected calls not matched: [{index, name, why}]
    extra       actual calls not matched: [{index, name}]          (index into ``actual``)
    arg_diffs   [{expected_index, actual_index, tool, diffs: [{argument, expected, actual?, why}]}]
    malformed   [{index, name, kind, detail}]
    violations  [{rule, index, name, message}]                      (index into ``actual``)
    unrecorded  [index]: calls that had no frozen response
    summary     one line: "2 exact, 0 name-only; 2 expected, 2 actual"
    effects     a case judged by its effects: what the run wrote — {made, failed, matched,
                missing, extra, arg_diffs, order}, indices as above (reads are free, so
                the calls' own missing, extra and arg_diffs are not shown)

Every key is optional and older or foreign shapes (a flat ``arg_diffs`` list of
``{name, arg, expected, actual}``, calls instead of indices) are read too: a report must
render whatever results file it is given. :func:`items` returns ``(label, value, prose)``
triples, most telling first: ``value`` is data to show literally (a code span), ``prose``
a sentence — both unescaped; the renderer escapes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gate.report.escape import call_repr, calls_repr, json_compact

Item = tuple[str, str | None, str | None]

RULE_LABELS = {
    "must_not_call": "forbidden",
    "arg_scope": "out of scope",
    "required_before": "no prerequisite for",
}


def _list(value: Any) -> list[Any]:
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return list(value)
    return [] if value in (None, "", {}) else [value]


def _actual_at(ev: Mapping[str, Any], item: Any) -> Any:
    """The actual call an item refers to by ``index``, or the item itself."""
    actual = ev.get("actual")
    if (
        isinstance(item, Mapping)
        and isinstance(item.get("index"), int)
        and isinstance(actual, list)
    ):
        i = item["index"]
        if 0 <= i < len(actual) and actual[i] is not None:
            return actual[i]
    return item


def _expected_at(ev: Mapping[str, Any], index: Any) -> Any:
    expected = ev.get("expected")
    if isinstance(index, int) and isinstance(expected, list) and 0 <= index < len(expected):
        return expected[index]
    return None


def effect_items(ev: Mapping[str, Any], fx: Mapping[str, Any]) -> list[Item]:
    """What a run judged by its effects wrote: expected writes not made, writes made that
    the case does not expect, and writes that failed (they made nothing)."""
    out: list[Item] = []
    paired = {
        d.get("expected_index")
        for d in _list(fx.get("arg_diffs"))
        if isinstance(d, Mapping) and d.get("diffs")
    }
    for m in _list(fx.get("missing")):
        if not isinstance(m, Mapping):
            continue
        call = _expected_at(ev, m.get("index")) or m
        why = m.get("why")
        prose = None if m.get("index") in paired or why == "not called" else str(why)
        out.append(("expected write not made", call_repr(call), prose))
    diffs = arg_diffs(fx.get("arg_diffs"))
    if diffs:
        out.append(("arguments", diffs, None))
    for x in _list(fx.get("extra")):
        out.append(("extra write", call_repr(_actual_at(ev, x)), None))
    for i in _list(fx.get("failed")):
        call = _actual_at(ev, {"index": i}) if isinstance(i, int) else i
        out.append(("failed write", call_repr(call), "its response was an error: it made nothing"))
    for i in _list(fx.get("repeated")):
        call = _actual_at(ev, {"index": i}) if isinstance(i, int) else i
        out.append(
            (
                "repeated write",
                call_repr(call),
                "the same call just before it: it changed nothing more",
            )
        )
    if fx.get("order") is False:
        out.append(("", None, "the writes came in another order than the case expects"))
    return out


def items(ev: Mapping[str, Any], error: str | None = None) -> list[Item]:
    out: list[Item] = []
    fx = ev.get("effects")
    if isinstance(fx, Mapping):
        # Judged by its effects: what was written, never the reads' missing or extra calls.
        ev = {k: v for k, v in ev.items() if k not in ("missing", "extra", "arg_diffs")}
    for v in _list(ev.get("violations")):
        rule = v.get("rule", "must_not_call") if isinstance(v, Mapping) else "must_not_call"
        label = RULE_LABELS.get(str(rule), str(rule))
        message = v.get("message") if isinstance(v, Mapping) and rule != "must_not_call" else None
        out.append((label, call_repr(_actual_at(ev, v)), message))
    # A missing call answered by a same-name call with other arguments shows as one
    # "arguments" item, not also as "missing" and "extra".
    paired_e, paired_a = set(), set()
    for d in _list(ev.get("arg_diffs")):
        if isinstance(d, Mapping) and d.get("diffs"):
            paired_e.add(d.get("expected_index"))
            paired_a.add(d.get("actual_index"))
    for m in _list(ev.get("missing")):
        if isinstance(m, Mapping) and m.get("index") in paired_e and "why" in m:
            continue
        if isinstance(m, Mapping) and "why" in m and "args" not in m and "arguments" not in m:
            out.append(("missing", str(m.get("name", "?")), str(m["why"])))
        else:
            out.append(("missing", call_repr(m), None))
    diffs = arg_diffs(ev.get("arg_diffs"))
    if diffs:
        out.append(("arguments", diffs, None))
    for x in _list(ev.get("extra")):
        if isinstance(x, Mapping) and x.get("index") in paired_a and "arguments" not in x:
            continue
        out.append(("extra", call_repr(_actual_at(ev, x)), None))
    if isinstance(fx, Mapping):
        out.extend(effect_items(ev, fx))
    for m in _list(ev.get("malformed")):
        out.append(("malformed", malformed(m), None))
    for u in _list(ev.get("unrecorded")):
        call = _actual_at(ev, {"index": u}) if isinstance(u, int) else u
        out.append(
            (
                "no recorded response",
                call_repr(call) if isinstance(call, Mapping) else str(call),
                None,
            )
        )
    agent_error = error or ev.get("agent_error")
    if agent_error:
        out.append(("agent error", str(agent_error), None))
    summary = ev.get("summary")
    if isinstance(summary, str) and summary:
        out.append(("", None, summary))
    return out


def arg_diffs(value: Any) -> str:
    """``tool.argument: expected X, got Y (why)``, joined with ``; ``."""
    parts: list[str] = []
    for d in _list(value):
        if not isinstance(d, Mapping):
            parts.append(json_compact(d))
            continue
        tool = d.get("tool") or d.get("name") or d.get("call")
        if isinstance(d.get("diffs"), list):  # the scorer's shape: one entry per call pair
            for inner in d["diffs"]:
                if isinstance(inner, Mapping):
                    parts.append(_one_diff(tool, inner))
                else:
                    parts.append(json_compact(inner))
        else:
            parts.append(_one_diff(tool, d))
    return "; ".join(parts)


def _one_diff(tool: Any, d: Mapping[str, Any]) -> str:
    arg = d.get("argument", d.get("arg") or d.get("key") or d.get("path") or d.get("field"))
    where = ".".join(str(x) for x in (tool, arg) if x is not None) or "arguments"
    exp = json_compact(d["expected"]) if "expected" in d else "?"
    act = json_compact(d["actual"]) if "actual" in d else "absent"
    why = d.get("why")
    return f"{where}: expected {exp}, got {act}" + (f" ({why})" if why else "")


def malformed(m: Any) -> str:
    if not isinstance(m, Mapping):
        return json_compact(m)
    name = m.get("name") or m.get("tool") or "?"
    kind = m.get("kind") or m.get("class") or m.get("type") or "malformed"
    detail = m.get("detail") or m.get("message") or m.get("error")
    return f"{name}: {kind}" + (f" ({detail})" if detail else "")


def expected_repr(ev: Mapping[str, Any]) -> str | None:
    return calls_repr(ev["expected"]) if "expected" in ev else None


def actual_repr(ev: Mapping[str, Any]) -> str | None:
    return calls_repr(ev["actual"]) if "actual" in ev else None
