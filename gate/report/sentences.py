"""What a failing sample did wrong, in plain sentences, and the calls with only what
differs spelled out — shared by the comment, report.md, the console and JUnit.

A sentence is a list of parts: plain words (``str``) and data to show literally
(:class:`Code`); each renderer escapes the parts its own way. Every failing check gets a
sentence (:func:`check_sentences`), strongest first (:data:`CHECK_ORDER`): a forbidden
call before a broken argument-scope or required-before rule, before a crash, before a
missing call, before a wrong order, and so on. The reasons come from the sample's
evidence (the scorers' :class:`gate.model.Evidence`), never recomputed.

:func:`elided_calls` shows the expected and the actual calls with every matched call
reduced to ``name(…)`` (it is the same on both sides): what differs is kept whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gate.model import BatchingKind, HardFailureKind, TurnRef
from gate.report.escape import call_repr, json_compact
from gate.results import SampleResult

CHECK_ORDER = (
    "must_not_call",
    "arg_scope",
    "required_before",
    "safety_rules",
    "agent_error",
    "no_agent_error",  # the name in results of earlier releases
    "calls_matched",
    "writes_made",
    "no_extra_write",
    "no_tool",
    "order",
    "schema_valid",
    "parsed",
    "no_extra_calls",
    "unrecorded_call",
    "turn_reached",
)
"""Failing checks, strongest reason first (unknown names sort last, by name)."""

HARD_KINDS = tuple(HardFailureKind)
"""The hard-failure kinds, strongest first; each is also the name of its failing check."""


class Code(str):
    """A part of a sentence shown literally (a call, a tool name, a value)."""

    __slots__ = ()


Sentence = list[str | Code]


def check_rank(check: str) -> tuple[int, str]:
    return (CHECK_ORDER.index(check) if check in CHECK_ORDER else len(CHECK_ORDER), check)


def ordered_checks(checks: Sequence[str]) -> list[str]:
    return sorted(dict.fromkeys(checks), key=check_rank)


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _actual(ev: Mapping[str, Any], index: Any) -> Any:
    actual = ev.get("actual")
    if isinstance(index, int) and isinstance(actual, list) and 0 <= index < len(actual):
        return actual[index]
    return None


def _name(call: Any) -> str:
    if isinstance(call, Mapping):
        return str(call.get("name") or call.get("tool") or "?")
    return str(call)


def _batch(call: Any) -> Any:
    return call.get("batch") if isinstance(call, Mapping) else None


def _names(calls: Sequence[Any]) -> list[str | Code]:
    out: list[str | Code] = []
    for i, c in enumerate(dict.fromkeys(_name(c) for c in calls)):
        if i:
            out.append(", ")
        out.append(Code(c))
    return out


def check_sentences(sample: SampleResult, *, where: bool = True) -> list[tuple[str, Sentence]]:
    """(check, sentence) for every failing check of ``sample``, strongest first; the same
    sentence is said once. In a conversation they are the checks of the first user turn
    that failed (its evidence is the one kept), and the first sentence says which turn
    and what the user said in it (unless not ``where``)."""
    checks = sample.failed_checks
    turn = failing_turn(sample)
    if turn is not None and sample.turns and 0 < turn[0] <= len(sample.turns):
        checks = sample.turns[turn[0] - 1].failed_checks or checks
    out: list[tuple[str, Sentence]] = []
    seen: set[tuple[str, ...]] = set()
    for c in ordered_checks(checks):
        sn = sentence_for(c, sample)
        key = tuple(sn)
        if key not in seen:
            seen.add(key)
            out.append((c, sn))
    if turn is not None and out and where:
        out[0] = (out[0][0], [*turn_prefix(turn), *out[0][1]])
    return out


def failing_turn(sample: SampleResult) -> tuple[int, int, str | None] | None:
    """(turn, of, the user's message) of a conversation sample's first failing user turn,
    from its evidence (or its ``first_failing_turn``); ``None`` for a one-turn case."""
    ref = sample.evidence.get("turn") if isinstance(sample.evidence, Mapping) else None
    if isinstance(ref, Mapping) and isinstance(ref.get("index"), int):
        of = ref.get("of")
        user = ref.get("user")
        return (
            ref["index"],
            of if isinstance(of, int) else len(sample.turns or ()),
            user if isinstance(user, str) else None,
        )
    if sample.first_failing_turn is not None and sample.turns:
        return sample.first_failing_turn, len(sample.turns), None
    return None


def turn_prefix(turn: tuple[int, int, str | None]) -> Sentence:
    """``turn 2 of 3 (the user: “…”): `` — where a conversation broke."""
    index, of, user = turn
    if user is None:
        return [f"turn {index} of {of}: "]
    return [TurnRef(index, of, user).label() + ": "]


def sentence_for(check: str, sample: SampleResult) -> Sentence:
    ev = sample.evidence
    violations = [v for v in _list(ev.get("violations")) if isinstance(v, Mapping)]
    never = HardFailureKind.MUST_NOT_CALL  # a violation's rule kind, as its check's name
    scoped = (HardFailureKind.ARG_SCOPE, HardFailureKind.REQUIRED_BEFORE)
    if check == never:
        hits = [v for v in violations if v.get("rule", never) == never]
        if hits:
            call = _actual(ev, hits[0].get("index")) or hits[0]
            return ["called ", Code(call_repr(call)), ", which this case must not call"]
    if check in (*scoped, "safety_rules"):
        rules = scoped if check == "safety_rules" else (check,)
        hits = [v for v in violations if v.get("rule") in rules]
        if hits:
            return [str(hits[0].get("message") or f"{check} rule broken")]
    if check in ("agent_error", "no_agent_error") and sample.error:
        return [Code(error_summary(sample.error))]
    if check == "calls_matched":
        return _calls_matched(ev)
    fx = ev.get("effects")
    if check in ("writes_made", "no_extra_write") and isinstance(fx, Mapping):
        said = _writes_made(ev, fx) if check == "writes_made" else _extra_write(ev, fx)
        if said is not None:
            return said
    if check == "order" and isinstance(fx, Mapping):
        return _order({"expected": ev.get("expected"), "matched": fx.get("matched")})
    if check == "no_tool":
        actual = _list(ev.get("actual"))
        if actual:
            return ["called ", *_names(actual), " although this case needs no tool"]
    if check == "order":
        return _order(ev)
    if check in ("schema_valid", "parsed"):
        bad = [m for m in _list(ev.get("malformed")) if isinstance(m, Mapping)]
        if bad:
            m = bad[0]
            what = "do not match its schema" if check == "schema_valid" else "did not parse"
            detail = m.get("detail") or m.get("kind")
            return [
                "the arguments of ",
                Code(_name(m)),
                f" {what}",
                *([": ", Code(str(detail))] if detail else []),
            ]
    if check == "no_extra_calls":
        extra = [_actual(ev, x.get("index")) or x for x in _list(ev.get("extra"))]
        if extra:
            return [*_names(extra), " called but not expected"]
    if check == "unrecorded_call":
        idx = [u for u in _list(ev.get("unrecorded")) if isinstance(u, int)]
        if idx:
            return [Code(call_repr(_actual(ev, idx[0]))), " had no recorded response"]
    if check == "turn_reached":
        return ["the conversation ended before this turn: the agent never answered it"]
    if check not in CHECK_ORDER:
        # A check this version does not know (a foreign or older results file): the
        # evidence still says what went wrong.
        if sample.error:
            return [Code(error_summary(sample.error))]
        if ev.get("arg_diffs") or ev.get("missing"):
            return _calls_matched(ev)
    reason = sample.reasons.get(check)
    return [reason] if reason else [Code(check), " failed"]


def _calls_matched(ev: Mapping[str, Any]) -> Sentence:
    diffs = [d for d in _list(ev.get("arg_diffs")) if isinstance(d, Mapping)]
    for d in diffs:
        for inner in _list(d.get("diffs")):
            if not isinstance(inner, Mapping):
                continue
            tool = str(d.get("tool") or "?")
            arg = str(inner.get("argument") or "arguments")
            exp = json_compact(inner.get("expected"))
            if "actual" not in inner:
                return [Code(tool), " was called without ", Code(arg), "; expected ", Code(exp)]
            act = json_compact(inner["actual"])
            why = inner.get("why")
            if isinstance(why, str) and why.startswith("not expected"):
                # An argument an exact expectation does not list: name it and say why.
                return [
                    Code(tool),
                    " was called with ",
                    Code(f"{arg}={act}"),
                    ", an argument this case does not expect" + why[len("not expected") :],
                ]
            return [
                Code(tool),
                " was called with ",
                Code(f"{arg}={act}"),
                "; this case expects ",
                Code(f"{arg}={exp}"),
            ]
    missing = [m for m in _list(ev.get("missing")) if isinstance(m, Mapping)]
    if missing:
        return [*_names(missing), " not called"]
    return ["not every expected call was made"]


def _more(n: int) -> Sentence:
    return [f", and {n} more"] if n > 0 else []


def _writes_made(ev: Mapping[str, Any], fx: Mapping[str, Any]) -> Sentence | None:
    """``expected write not made: `book_reservation(…)``` — with what was done instead:
    a write of the tool with other arguments, a call that failed, one that did not parse."""
    missing = [m for m in _list(fx.get("missing")) if isinstance(m, Mapping)]
    if not missing:
        return None
    m = missing[0]
    index = m.get("index")
    expected = _list(ev.get("expected"))
    call = expected[index] if isinstance(index, int) and 0 <= index < len(expected) else m
    out: Sentence = ["expected write not made: ", Code(call_repr(call))]
    why = m.get("why")
    diff = next(
        (
            d
            for d in _list(fx.get("arg_diffs"))
            if isinstance(d, Mapping) and d.get("expected_index") == index and d.get("diffs")
        ),
        None,
    )
    if diff is not None:
        out += ["; ", *_calls_matched({"arg_diffs": [diff]})]
    elif why == "called, but its response was an error":
        out.append(" (its call failed: the response was an error, so it made nothing)")
    elif isinstance(why, str) and why != "not called":
        out.append(f" ({why})")
    return out + _more(len(missing) - 1)


def _extra_write(ev: Mapping[str, Any], fx: Mapping[str, Any]) -> Sentence | None:
    """``extra write `cancel_reservation(reservation_id="Q69X3R")``` (a write made that the
    case does not expect)."""
    extra = [x for x in _list(fx.get("extra")) if isinstance(x, Mapping)]
    if not extra:
        return None
    call = _actual(ev, extra[0].get("index")) or extra[0]
    return ["extra write ", Code(call_repr(call)), *_more(len(extra) - 1)]


def batching_sentence(item: Any) -> Sentence | None:
    """One ``batching`` evidence entry in words: calls expected in one turn but sent over
    several, or expected in separate turns but sent together (turns numbered from 1)."""
    if not isinstance(item, Mapping):
        return None
    names = [Code(str(n)) for n in _list(item.get("names"))]
    turns = [t for t in _list(item.get("turns")) if isinstance(t, int)]
    if not names or not turns:
        return None
    who = spoken([[n] for n in names])
    if item.get("kind") == BatchingKind.SPLIT:
        shown = " and ".join(str(t + 1) for t in turns)
        return [*who, f" were expected in one turn but came in turns {shown}"]
    if item.get("kind") == BatchingKind.MERGED:
        return [*who, f" were expected in separate turns but came together in turn {turns[0] + 1}"]
    return None


def spoken(parts: Sequence[Sentence]) -> Sentence:
    """``a, b and c``: parts joined as a sentence lists them."""
    out: Sentence = []
    for i, p in enumerate(parts):
        if i:
            out.append(" and " if i == len(parts) - 1 else ", ")
        out += p
    return out


def _order(ev: Mapping[str, Any]) -> Sentence:
    if not ev.get("missing") and not ev.get("extra"):
        for item in _list(ev.get("batching")):
            said = batching_sentence(item)
            if said is not None:
                return said
    expected = _list(ev.get("expected"))
    pairs = sorted(
        (p[0], p[1])
        for p in _list(ev.get("matched"))
        if isinstance(p, list) and len(p) == 2 and all(isinstance(x, int) for x in p)
    )
    for i, (e1, a1) in enumerate(pairs):
        for e2, a2 in pairs[i + 1 :]:
            if a2 < a1 and e1 < len(expected) and e2 < len(expected):
                if _batch(expected[e1]) is not None and _batch(expected[e1]) == _batch(
                    expected[e2]
                ):
                    continue  # one batch: no order inside it
                first, second = _name(expected[e1]), _name(expected[e2])
                return [
                    Code(second),
                    " came before ",
                    Code(first),
                    "; this case expects ",
                    Code(first),
                    " first",
                ]
    extra = [_actual(ev, x.get("index")) or x for x in _list(ev.get("extra"))]
    if extra:
        return [*_names(extra), " called outside the expected calls"]
    missing = [m for m in _list(ev.get("missing")) if isinstance(m, Mapping)]
    if missing:
        return ["the expected sequence is incomplete: ", *_names(missing), " missing"]
    return ["the calls were not made in the expected order"]


def error_summary(error: str, tail_lines: int = 3) -> str:
    """An agent error's first line, then the last lines of its stderr (if it kept any)."""
    lines = [line.rstrip() for line in error.splitlines()]
    first = next((line for line in lines if line.strip()), "")
    tail: list[str] = []
    for i, line in enumerate(lines):
        if line.startswith("--- stderr"):
            tail = [t for t in lines[i + 1 :] if t.strip()][-tail_lines:]
            break
    return " · ".join([first, *tail]) if tail else first


def elided_calls(ev: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(expected, actual) with matched calls as ``name(…)``: only what differs in full."""
    pairs = [p for p in _list(ev.get("matched")) if isinstance(p, list) and len(p) == 2]
    same_e = {p[0] for p in pairs}
    same_a = {p[1] for p in pairs}

    def show(calls: Any, same: set[Any]) -> str:
        if not isinstance(calls, list):
            return call_repr(calls)
        if not calls:
            return "(no calls)"
        return ", ".join(
            f"{_name(c)}(…)" if i in same else call_repr(c) for i, c in enumerate(calls)
        )

    exp = show(ev["expected"], same_e) if "expected" in ev else None
    act = show(ev["actual"], same_a) if "actual" in ev else None
    return exp, act
