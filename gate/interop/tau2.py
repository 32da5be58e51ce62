"""τ²-bench results → cases judged by their effects, and the runs to replay
(``toolgate import tau2``).

docs/interop.md ("Tau2-bench results") gives the mapping in full: a case per task, a run
per simulation, the tools, which tools write, and what is refused. Why effects: τ²-bench
rewards a simulation when the database it ends with is the one the reference actions
make — what the agent wrote, not how it looked things up. ``COMMUNICATE`` (what the agent
must say) is not judged: a case's notes list what τ²-bench also requires.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gate import jsonio
from gate.dataset.matchers import did_you_mean
from gate.dataset.matchers import json_kind as _kind
from gate.dataset.tools import TOOL_NAME, parse_tool
from gate.errors import InteropError, Problem
from gate.interop._records import Locator, read_bytes, refuse_existing, write_cases
from gate.model import Run, ToolCall, ToolResult, Turn
from gate.runsfile import decode_arguments
from gate.scorers.effects import effect_from_annotations

__all__ = [
    "STOCK_IDEMPOTENT",
    "STOCK_WRITES",
    "Tau2Import",
    "import_tau2",
    "render_config",
    "write_import",
]

STOCK_WRITES: Mapping[str, tuple[str, ...]] = {
    "airline": (
        "book_reservation",
        "cancel_reservation",
        "send_certificate",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
    ),
    "retail": (
        "cancel_pending_order",
        "exchange_delivered_order_items",
        "modify_pending_order_address",
        "modify_pending_order_items",
        "modify_pending_order_payment",
        "modify_user_address",
        "return_delivered_order_items",
    ),
    "telecom": (
        "disable_roaming",
        "enable_roaming",
        "refuel_data",
        "resume_line",
        "send_payment_request",
        "suspend_line",
    ),
}
"""The tools τ²-bench's own domains mark ``ToolType.WRITE``: what a results file of those
domains writes when nothing else says."""

STOCK_IDEMPOTENT: Mapping[str, tuple[str, ...]] = {
    "airline": (
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
    ),
    "retail": ("modify_pending_order_address", "modify_user_address"),
}
"""The write tools of τ²-bench's domains that set a state (calling one again with the same
arguments changes nothing more); its other write tools add (a refund, a certificate, a
booking) or refuse a second call."""

_BASES = ("DB", "ENV_ASSERTION", "NL_ASSERTION", "ACTION", "COMMUNICATE")
_UNMAPPABLE_BASES = {
    "ENV_ASSERTION": "assertions on the environment's state, which the calls do not show",
    "NL_ASSERTION": "assertions an LLM judges",
}
_STOPPED = frozenset({"agent_stop", "user_stop"})
_NOT_THE_AGENT = frozenset({"user_error", "infrastructure_error"})
_ERROR_PREFIX = "Error:"
"""How τ²-bench's environment begins the result of every call that raised."""
_ANY_ARGS: dict[str, Any] = {"type": "object"}


@dataclass(slots=True)
class Tau2Import:
    """What one results file becomes (docs/interop.md)."""

    source: str
    domain: str | None
    cases: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    writes: tuple[str, ...]
    writes_from: str
    runs: list[Run]
    idempotent: tuple[str, ...] = ()
    gaps: int = 0
    """Trials a task lacks that other tasks have: written as *not run* (named in every
    report, never a pass, a failure or a sample the infrastructure lost)."""
    skipped: list[str] = field(default_factory=list)
    inferred_errors: int = 0
    """Tool results without an ``error`` flag that read as τ²-bench's error text."""


# ─── reading the file ─────────────────────────────────────────────────────────


def _read_json(path: Path, display: str) -> Any:
    raw = read_bytes(path, display)
    try:
        return jsonio.loads_strict(raw)
    except jsonio.JsonInputError as exc:
        raise InteropError(Problem(display, None, None, f"not valid JSON: {exc}")) from None


def read_results(path: Path) -> tuple[dict[str, Any], str]:
    """The results as one object, and how to name the file: a monolithic results file, or
    τ²-bench's folder format (``results.json`` with a ``simulations/`` folder beside it, one
    file per simulation, in name order — the folder itself may be given)."""
    meta = path / "results.json" if path.is_dir() else path
    display = str(path)
    if not meta.is_file():
        raise InteropError(Problem(display, None, None, "no such file (nor results.json in it)"))
    data = _read_json(meta, str(meta))
    if not isinstance(data, dict):
        raise InteropError(
            Problem(str(meta), None, None, f"must be a τ²-bench results object, not {_kind(data)}")
        )
    folder = meta.parent / "simulations"
    if data.get("simulations") is None and folder.is_dir():
        sims = []
        for f in sorted(folder.glob("*.json")):
            sims.append(_read_json(f, str(f)))
        data = {**data, "simulations": sims}
    return data, str(meta)


# ─── tools ────────────────────────────────────────────────────────────────────


def _tool_entry(name: str, description: Any, params: Any, annotations: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": name,
        "description": description if isinstance(description, str) else "",
        "parameters": params if isinstance(params, dict) else {"type": "object", "properties": {}},
    }
    if annotations is not None:
        entry["annotations"] = annotations
    return entry


def _tools_from_defs(defs: Any, where: str, problems: Locator) -> list[dict[str, Any]]:
    """τ²-bench's ``tool_defs`` (``{name: {name, doc, params, returns}}``), or a tools file:
    an array of definitions (OpenAI ``{"type": "function", "function": …}``, bare
    ``{name, description, parameters}``, or MCP ``{name, description, inputSchema}``)."""
    out: list[dict[str, Any]] = []
    if isinstance(defs, dict):
        for name, sig in defs.items():
            if not isinstance(sig, dict):
                problems.note(f"{where}.{name}", f"must be a tool signature, not {_kind(sig)}")
                continue
            out.append(_tool_entry(name, sig.get("doc"), sig.get("params"), None))
        return out
    if not isinstance(defs, list):
        problems.note(where, f"must be tool definitions (an array or an object), not {_kind(defs)}")
        return out
    for i, t in enumerate(defs):
        fn = t.get("function") if isinstance(t, dict) and "function" in t else t
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            problems.note(f"{where}[{i}].name", "a tool definition needs a name")
            continue
        params = fn.get("parameters", fn.get("inputSchema", fn.get("input_schema")))
        out.append(_tool_entry(fn["name"], fn.get("description"), params, fn.get("annotations")))
    return out


def _check_tools(tools: list[dict[str, Any]], where: str, problems: Locator) -> None:
    """Each definition as the dataset loader will read it (problems named here, once)."""
    seen: set[str] = set()
    for i, t in enumerate(tools):
        _, issues = parse_tool(t)
        for sub, msg in issues:
            problems.note(f"{where}[{i}]{sub}", msg)
        if t["name"] in seen:
            problems.note(f"{where}[{i}].name", f"duplicate tool {t['name']!r}")
        seen.add(t["name"])


# ─── tasks → cases ────────────────────────────────────────────────────────────


@dataclass(slots=True)
class _Task:
    id: str
    where: str
    user_input: str
    actions: list[dict[str, Any]]
    """Each: name, arguments, compare_args (None: every argument), required (ACTION)."""
    reads_required: bool
    communicate: list[str]
    unmappable: list[tuple[str, str]]
    """(field, why) of what keeps the task from being mapped."""


def _user_input(task: Mapping[str, Any], task_id: str) -> str:
    scenario = task.get("user_scenario")
    instructions = scenario.get("instructions") if isinstance(scenario, dict) else None
    if isinstance(instructions, str) and instructions.strip():
        return instructions.strip()
    if isinstance(instructions, dict):
        reason = instructions.get("reason_for_call")
        if isinstance(reason, str) and reason.strip():
            return reason.strip()
    description = task.get("description")
    purpose = description.get("purpose") if isinstance(description, dict) else None
    if isinstance(purpose, str) and purpose.strip():
        return purpose.strip()
    return f"τ²-bench task {task_id}"


def _read_task(i: int, task: Any, problems: Locator) -> _Task | None:
    where = f"tasks[{i}]"
    if not isinstance(task, dict):
        problems.note(where, f"must be a task object, not {_kind(task)}")
        return None
    raw_id = task.get("id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, str | int) or str(raw_id) == "":
        problems.note(f"{where}.id", f"must be the task's id (text or a number), not {raw_id!r}")
        return None
    task_id = str(raw_id)
    unmappable: list[tuple[str, str]] = []
    criteria = task.get("evaluation_criteria")
    crit = f"{where}.evaluation_criteria"
    if criteria is None:
        why = "absent: τ²-bench passes every run of such a task; there is nothing to judge"
        unmappable.append((crit, why))
        criteria = {}
    elif not isinstance(criteria, dict):
        problems.note(crit, f"must be an object, not {_kind(criteria)}")
        return None
    basis = criteria.get("reward_basis", ["DB", "COMMUNICATE"])
    if basis is None:
        basis = ["DB", "COMMUNICATE"]
    if not isinstance(basis, list) or not all(isinstance(b, str) for b in basis):
        why = f"must be an array of reward types, not {basis!r}"[:200]
        problems.note(f"{crit}.reward_basis", why)
        return None
    for b in basis:
        if b not in _BASES:
            why = f"unknown reward type {b!r} (τ²-bench's are {', '.join(_BASES)})"
            problems.note(f"{crit}.reward_basis", why)
            return None
        if b in _UNMAPPABLE_BASES:
            why = f"{b} gates the reward: {_UNMAPPABLE_BASES[b]}, cannot be judged from the calls"
            unmappable.append((f"{crit}.reward_basis", why))
    raw_actions = criteria.get("actions")
    if raw_actions is None and task.get("evaluation_criteria") is not None:
        why = (
            "absent: τ²-bench does not check the database of such a task, so no write "
            "is expected or refused"
        )
        unmappable.append((f"{crit}.actions", why))
    if raw_actions is None:
        raw_actions = []
    if not isinstance(raw_actions, list):
        problems.note(f"{crit}.actions", f"must be an array, not {_kind(raw_actions)}")
        return None
    actions: list[dict[str, Any]] = []
    ok = True
    for k, a in enumerate(raw_actions):
        at = f"{where}.evaluation_criteria.actions[{k}]"
        if not isinstance(a, dict):
            problems.note(at, f"must be an action object, not {_kind(a)}")
            ok = False
            continue
        name, args = a.get("name"), a.get("arguments", {})
        if not isinstance(name, str) or not name:
            problems.note(f"{at}.name", f"must be the tool's name, not {name!r}"[:200])
            ok = False
        if not isinstance(args, dict):
            problems.note(f"{at}.arguments", f"must be an object, not {_kind(args)}")
            ok = False
        compare = a.get("compare_args")
        if compare is not None and (
            not isinstance(compare, list) or not all(isinstance(c, str) for c in compare)
        ):
            problems.note(
                f"{at}.compare_args", f"must be an array of argument names, not {compare!r}"[:200]
            )
            ok = False
        requestor = a.get("requestor", "assistant")
        if requestor not in ("assistant", None):
            why = f"{requestor!r}: an action of the user simulator, not of the agent "
            why += "ToolGate judges"
            unmappable.append((f"{at}.requestor", why))
        if ok:
            actions.append({"name": name, "arguments": args, "compare_args": compare})
    if not ok:
        return None
    communicate = criteria.get("communicate_info") or []
    said = [c for c in communicate if isinstance(c, str)] if "COMMUNICATE" in basis else []
    return _Task(
        id=task_id,
        where=where,
        user_input=_user_input(task, task_id),
        actions=actions,
        reads_required="ACTION" in basis,
        communicate=said,
        unmappable=unmappable,
    )


def _expected(task: _Task, writes: frozenset[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for a in task.actions:
        is_write = a["name"] in writes
        if not is_write and not task.reads_required:
            continue
        compare = a["compare_args"]
        call: dict[str, Any] = {"name": a["name"]}
        if compare is None:
            # The database sees every argument: all of them, and no other.
            call["args"] = a["arguments"]
            call["args_match"] = "exact"
        else:
            call["args"] = {k: v for k, v in a["arguments"].items() if k in compare}
        if not is_write:
            call["required"] = True
        out.append(call)
    return out


def _case(task: _Task, writes: frozenset[str], domain: str | None) -> dict[str, Any]:
    expected = _expected(task, writes)
    writes_any = any(c["name"] in writes for c in expected)
    row: dict[str, Any] = {
        "id": task.id,
        "user_input": task.user_input,
        "available_tools": "@tools.json",
        "expected_tool_calls": expected,
        "tags": [t for t in ("tau2", _tag(domain), "writes" if writes_any else "reads-only") if t],
    }
    if not expected:
        row["expected_no_tool"] = True
    if _same_record(c for c in expected if c["name"] in writes):
        row["order"] = "strict"
    if task.communicate:
        said = "; ".join(repr(c) for c in task.communicate)
        row["notes"] = f"τ²-bench also requires the agent to say (not judged here): {said}"
    return row


def _same_record(calls: Iterable[Mapping[str, Any]]) -> bool:
    """Whether two of the writes write one record: their first arguments — the record a
    τ² tool acts on (``reservation_id``, ``user_id``, ``order_id``) — have the same name
    and the same text value."""
    seen: set[tuple[str, str]] = set()
    for c in calls:
        first = next(iter(c["args"].items()), None)
        if first is None or not isinstance(first[1], str) or not first[1]:
            continue
        if first in seen:
            return True
        seen.add(first)
    return False


def _tag(domain: str | None) -> str | None:
    if not domain:
        return None
    text = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in domain)[:64]
    return text or None


# ─── simulations → runs ───────────────────────────────────────────────────────


def _termination_error(reason: Any) -> str | None:
    """τ²-bench's verdict on a simulation that did not end by the agent or the user
    stopping (it rewards it 0), as the run's error."""
    if reason in _STOPPED:
        return None
    text = f"τ²-bench ended the simulation early (termination_reason {reason!s})"
    if reason in _NOT_THE_AGENT:
        return f"http: {text}: not the agent's doing"
    if reason == "timeout":
        return f"timeout: {text}"
    return f"agent_error: {text}"


def _is_error(msg: Mapping[str, Any], content: Any) -> tuple[bool, bool]:
    """(is an error, was inferred): the message's ``error`` flag, else τ²-bench's text."""
    flag = msg.get("error")
    if isinstance(flag, bool):
        return flag, False
    inferred = isinstance(content, str) and content.startswith(_ERROR_PREFIX)
    return inferred, inferred


def _tool_messages(
    messages: list[Any], start: int
) -> tuple[list[tuple[int, Mapping[str, Any]]], int]:
    """The tool messages from ``start`` on (a MultiToolMessage spread out), with their
    index, and where the next message begins."""
    out: list[tuple[int, Mapping[str, Any]]] = []
    i = start
    while i < len(messages):
        m = messages[i]
        if not isinstance(m, dict) or m.get("role") != "tool":
            break
        inner = m.get("tool_messages")
        if isinstance(inner, list):
            out.extend((i, x) for x in inner if isinstance(x, dict))
        else:
            out.append((i, m))
        i += 1
    return out, i


@dataclass(slots=True)
class _RunState:
    inferred: int = 0


def _read_simulation(
    k: int,
    sim: Any,
    tasks: Mapping[str, _Task],
    problems: Locator,
    state: _RunState,
) -> tuple[str, int | None, Run | None]:
    """(task id, trial, the run) of one simulation; the run is None after a problem."""
    where = f"simulations[{k}]"
    if not isinstance(sim, dict):
        problems.note(where, f"must be a simulation object, not {_kind(sim)}")
        return "", None, None
    raw_task = sim.get("task_id")
    if isinstance(raw_task, bool) or not isinstance(raw_task, str | int):
        problems.note(f"{where}.task_id", f"must be the id of one of the tasks, not {raw_task!r}")
        return "", None, None
    task_id = str(raw_task)
    if task_id not in tasks:
        problems.note(f"{where}.task_id", f"{task_id!r} is not the id of any of the file's tasks")
        return task_id, None, None
    trial = sim.get("trial")
    if trial is not None and (isinstance(trial, bool) or not isinstance(trial, int) or trial < 0):
        problems.note(f"{where}.trial", f"must be a whole number from 0, not {trial!r}")
        return task_id, None, None
    messages = sim.get("messages")
    if messages is None:
        problems.note(
            f"{where}.messages",
            "absent: a full-duplex (voice) simulation keeps ticks instead; only text "
            "simulations can be imported",
        )
        return task_id, trial, None
    if not isinstance(messages, list):
        problems.note(f"{where}.messages", f"must be an array of messages, not {_kind(messages)}")
        return task_id, trial, None
    before = len(problems.problems)
    turns: list[Turn] = []
    final: str | None = None
    i = 0
    while i < len(messages):
        msg = messages[i]
        at = f"{where}.messages[{i}]"
        if not isinstance(msg, dict):
            problems.note(at, f"must be a message object, not {_kind(msg)}")
            break
        role = msg.get("role")
        if role not in ("system", "user", "assistant", "tool"):
            problems.note(
                f"{at}.role", f"must be system, user, assistant or tool, not {role!r}"[:200]
            )
            break
        raw_calls = msg.get("tool_calls") or []
        if role == "tool":
            problems.note(
                at,
                "a tool message that answers no tool call (τ²-bench pairs each with a call "
                "before it)",
            )
            break
        if not isinstance(raw_calls, list):
            problems.note(f"{at}.tool_calls", f"must be an array, not {_kind(raw_calls)}")
            break
        results, nxt = _tool_messages(messages, i + 1)
        if len(results) > len(raw_calls):
            j, _ = results[len(raw_calls)]
            problems.note(
                f"{where}.messages[{j}]",
                f"a tool message beyond the {len(raw_calls)} call(s) of messages[{i}]",
            )
            break
        content = msg.get("content")
        if role != "assistant":
            i = nxt  # the user simulator's own tool calls (and their results) are not the agent's
            continue
        calls: list[ToolCall] = []
        tool_results: list[ToolResult] = []
        for c_i, tc in enumerate(raw_calls):
            cat = f"{at}.tool_calls[{c_i}]"
            call = _call(tc, cat, problems)
            if call is None:
                continue
            calls.append(call)
            if c_i < len(results):
                j, res = results[c_i]
                res_id = res.get("id")
                if isinstance(res_id, str) and res_id and call.id and res_id != call.id:
                    problems.note(
                        f"{where}.messages[{j}].id",
                        f"answers tool call {res_id!r}, but the call it follows is {call.id!r}",
                    )
                    continue
                res_content = res.get("content")
                is_error, inferred = _is_error(res, res_content)
                state.inferred += inferred
                tool_results.append(ToolResult(call.id, res_content, is_error=is_error))
        text = content if isinstance(content, str) else None
        if text is not None and text.strip():
            final = text
        turns.append(Turn(calls=tuple(calls), tool_results=tuple(tool_results), content=text))
        i = nxt
    if len(problems.problems) != before:
        return task_id, trial, None
    duration = sim.get("duration")
    latency = (
        float(duration) * 1000.0
        if isinstance(duration, int | float) and not isinstance(duration, bool) and duration >= 0
        else None
    )
    run = Run(
        case_id=task_id,
        sample=0,  # numbered by the caller
        turns=tuple(turns),
        final=final,
        error=_termination_error(sim.get("termination_reason")),
        latency_ms=latency,
    )
    return task_id, trial, run


def _call(tc: Any, at: str, problems: Locator) -> ToolCall | None:
    if not isinstance(tc, dict):
        problems.note(at, f"must be a tool call object, not {_kind(tc)}")
        return None
    name = tc.get("name")
    if not isinstance(name, str) or not name:
        problems.note(f"{at}.name", f"must be the tool's name, not {name!r}"[:200])
        return None
    raw_id = tc.get("id")
    call_id = raw_id if isinstance(raw_id, str) and raw_id else None
    args = tc.get("arguments", {})
    if not isinstance(args, dict | str):
        problems.note(f"{at}.arguments", f"must be an object, not {_kind(args)}")
        return None
    decoded, raw, ok = decode_arguments(args)
    return ToolCall(name=name, arguments=decoded, id=call_id, raw_arguments=raw, parse_ok=ok)


# ─── the effects ──────────────────────────────────────────────────────────────


def _action_check_types(sims: Iterable[Any]) -> dict[str, str]:
    """Tool name → the ``tool_type`` τ²-bench recorded in its action checks."""
    out: dict[str, str] = {}
    for sim in sims:
        info = sim.get("reward_info") if isinstance(sim, dict) else None
        checks = info.get("action_checks") if isinstance(info, dict) else None
        for chk in checks if isinstance(checks, list) else ():
            if not isinstance(chk, dict):
                continue
            action, kind = chk.get("action"), chk.get("tool_type")
            name = action.get("name") if isinstance(action, dict) else None
            if isinstance(name, str) and isinstance(kind, str):
                out.setdefault(name, kind)
    return out


def _writes(
    given: Sequence[str] | None,
    tools: list[dict[str, Any]],
    sims: list[Any],
    domain: str | None,
    problems: Locator,
) -> tuple[tuple[str, ...], str]:
    names = [t["name"] for t in tools]
    if given is not None:
        for w in given:
            if w not in names:
                problems.note("--writes", f"{w!r} is not one of the tools{did_you_mean(w, names)}")
        return tuple(dict.fromkeys(given)), "--writes"
    annotated = {t["name"]: effect_from_annotations(t.get("annotations")) for t in tools}
    if any(e is not None for e in annotated.values()):
        return tuple(n for n in names if (e := annotated[n]) is not None and e.writes), (
            "the tools' MCP annotations"
        )
    typed = {n for n, v in _action_check_types(sims).items() if v == "write"}
    stock = STOCK_WRITES.get(domain or "")
    if stock is not None:
        # The domain's own list first: the action checks type only the tools some task's
        # reference actions use (a write no reference makes, such as a certificate sent
        # by mistake, would count as a read).
        return tuple(n for n in names if n in stock or n in typed), f"τ²-bench's {domain} domain"
    if typed:
        return tuple(n for n in names if n in typed), (
            "τ²-bench's action checks (only the tools some task's actions use)"
        )
    problems.note(
        "--writes",
        "no write tool is known: name them (--writes NAME,…), or give --tools with MCP "
        "annotations (readOnlyHint)",
    )
    return (), ""


def _idempotent(
    given: Sequence[str] | None,
    writes: Sequence[str],
    tools: list[dict[str, Any]],
    domain: str | None,
    problems: Locator,
) -> tuple[str, ...]:
    if given is not None:
        for w in given:
            if w not in writes:
                problems.note(
                    "--idempotent", f"{w!r} is not one of the write tools{did_you_mean(w, writes)}"
                )
        return tuple(w for w in writes if w in given)
    hinted = {
        t["name"]
        for t in tools
        if isinstance(t.get("annotations"), dict) and t["annotations"].get("idempotentHint") is True
    }
    if hinted:
        return tuple(w for w in writes if w in hinted)
    stock = STOCK_IDEMPOTENT.get(domain or "", ())
    return tuple(w for w in writes if w in stock)


# ─── the whole file ───────────────────────────────────────────────────────────


def import_tau2(
    path: Path,
    *,
    tools_file: Path | None = None,
    writes: Sequence[str] | None = None,
    idempotent: Sequence[str] | None = None,
    untyped_tools: bool = False,
    skip_unmappable: bool = False,
) -> Tau2Import:
    """Read a τ²-bench results file (docs/interop.md); every problem at once, as an
    :class:`InteropError` naming the field."""
    data, display = read_results(path)
    problems = Locator(display)
    for key in ("tasks", "simulations"):
        if key not in data or data[key] is None:
            problems.note(key, "required: a τ²-bench results file holds its tasks and simulations")
        elif not isinstance(data[key], list):
            problems.note(key, f"must be an array, not {_kind(data[key])}")
    problems.raise_if_any()
    info = data.get("info")
    env = info.get("environment_info") if isinstance(info, dict) else None
    domain_raw = env.get("domain_name") if isinstance(env, dict) else None
    domain = domain_raw if isinstance(domain_raw, str) and domain_raw else None

    tasks: dict[str, _Task] = {}
    for i, raw in enumerate(data["tasks"]):
        task = _read_task(i, raw, problems)
        if task is None:
            continue
        if task.id in tasks:
            problems.note(
                f"tasks[{i}].id", f"task {task.id!r} twice (first {tasks[task.id].where})"
            )
            continue
        tasks[task.id] = task
    skipped: list[str] = []
    skipped_ids: set[str] = set()
    for task in list(tasks.values()):
        if task.unmappable:
            if skip_unmappable:
                fld, why = task.unmappable[0]
                skipped.append(f"task {task.id!r}: {fld}: {why}")
                skipped_ids.add(task.id)
                del tasks[task.id]
            else:
                for fld, why in task.unmappable:
                    problems.note(fld, why)
    problems.raise_if_any(
        hint="pass --skip-unmappable to leave such tasks out" if not skip_unmappable else None
    )
    if not tasks:
        problems.note("tasks", "no task to import")
        problems.raise_if_any()

    sims: list[Any] = data["simulations"]
    state = _RunState()
    runs: list[Run] = []
    seen: dict[tuple[str, int], int] = {}
    count: dict[str, int] = {}
    dropped = 0
    for k, sim in enumerate(sims):
        raw_task = sim.get("task_id") if isinstance(sim, dict) else None
        if isinstance(raw_task, str | int) and str(raw_task) in skipped_ids:
            dropped += 1
            continue
        task_id, trial, run = _read_simulation(k, sim, tasks, problems, state)
        if run is None:
            continue
        sample = trial if trial is not None else count.get(task_id, 0)
        count[task_id] = count.get(task_id, 0) + 1
        slot = (task_id, sample)
        if slot in seen:
            problems.note(
                f"simulations[{k}].trial",
                f"trial {sample} of task {task_id!r} twice (first simulations[{seen[slot]}])",
            )
            continue
        seen[slot] = k
        runs.append(dataclasses.replace(run, sample=sample))

    if tools_file is not None:
        tools_data = _read_json(tools_file, str(tools_file))
        tools = _tools_from_defs(tools_data, "--tools", problems)
        tools_where = "--tools"
    elif isinstance(env, dict) and env.get("tool_defs"):
        tools = _tools_from_defs(env["tool_defs"], "info.environment_info.tool_defs", problems)
        tools_where = "info.environment_info.tool_defs"
    elif untyped_tools:
        # Every tool the file names, and those --writes names (no run may have used them).
        named = sorted(
            {*_named_tools(tasks, runs), *(w for w in writes or () if TOOL_NAME.match(w))}
        )
        tools = [_tool_entry(n, "", dict(_ANY_ARGS), None) for n in named]
        tools_where = "--untyped-tools"
    else:
        problems.note(
            "info.environment_info.tool_defs",
            "absent (τ²-bench keeps it only when asked): pass --tools TOOLS.json, or "
            "--untyped-tools to judge the effects without argument schemas",
        )
        tools, tools_where = [], ""
    problems.raise_if_any()
    _check_tools(tools, tools_where, problems)
    names = {t["name"] for t in tools}
    for task in tasks.values():
        for k, a in enumerate(task.actions):
            if a["name"] not in names:
                problems.note(
                    f"{task.where}.evaluation_criteria.actions[{k}].name",
                    f"{a['name']!r} is not one of the tools ({tools_where})",
                )
    write_names, writes_from = _writes(writes, tools, sims, domain, problems)
    same_again = _idempotent(idempotent, write_names, tools, domain, problems)
    problems.raise_if_any()

    wset = frozenset(write_names)
    tools = sorted(tools, key=lambda t: t["name"])
    ran = {r.case_id for r in runs}
    for task in tasks.values():
        if task.id not in ran:
            skipped.append(f"task {task.id!r}: no simulation of it in the file")
    cases = [_case(t, wset, domain) for t in tasks.values() if t.id in ran]
    simulated = len(runs)
    runs = _every_trial(runs)
    if dropped:
        skipped.append(f"{dropped} simulation(s) of the tasks left out")
    return Tau2Import(
        source=display,
        domain=domain,
        cases=cases,
        tools=tools,
        writes=write_names,
        writes_from=writes_from,
        runs=runs,
        idempotent=same_again,
        gaps=len(runs) - simulated,
        skipped=skipped,
        inferred_errors=state.inferred,
    )


def _every_trial(runs: list[Run]) -> list[Run]:
    """The runs, and a sample *not run* for every trial a task lacks that another task
    has: each case has the same samples, in case then trial order."""
    trials = sorted({r.sample for r in runs})
    have = {(r.case_id, r.sample): r for r in runs}
    out: list[Run] = []
    for case_id in dict.fromkeys(r.case_id for r in runs):
        for t in trials:
            run = have.get((case_id, t))
            if run is None:
                run = Run(
                    case_id=case_id,
                    sample=t,
                    error=f"not_run: the τ²-bench file holds no simulation of trial {t}",
                )
            out.append(run)
    return out


def _named_tools(tasks: Mapping[str, _Task], runs: Iterable[Run]) -> list[str]:
    names = {a["name"] for t in tasks.values() for a in t.actions}
    names |= {c.name for r in runs for c in r.calls}
    return sorted(n for n in names if TOOL_NAME.match(n))


# ─── writing ──────────────────────────────────────────────────────────────────


def render_config(imported: Tau2Import, source_name: str, sha256: str | None) -> str:
    """The toolgate.yml of an import: a replay agent, judged by effects, pinned."""
    name = "tau2" + (f"-{_tag(imported.domain)}" if imported.domain else "")
    lines = [
        f"# Generated by `toolgate import tau2` from {source_name}.",
        "# Each simulation replays as one sample of its task (sample = trial). A case",
        "# passes when the run made the task's expected writes and no other write:",
        "# reads are free, and a call whose response was an error wrote nothing.",
        f"name: {name[:64]}",
        "dataset:",
        "  path: dataset.jsonl",
        f"  version: {json.dumps(name)}",
    ]
    if sha256 is not None:
        lines.append(f"  sha256: {sha256}")
    lines += [
        "  normalize:          # τ²-bench compares the database exactly",
        "    case: false",
        "    whitespace: false",
        "    dates: false",
        "agent:",
        "  kind: replay",
        "  runs: runs.jsonl",
        *(["  missing: skip      # a trial a task lacks is not run"] if imported.gaps else []),
        "scoring:",
        "  pass_on: effects",
        f"  default_effect: read    # the tools below write ({imported.writes_from});",
        "                          # every other tool reads",
        "  tools:" if imported.writes else "  tools: {}",
    ]
    lines += [
        f"    {json.dumps(w)}: {{risk: write"
        + (", idempotent: true}" if w in imported.idempotent else "}")
        for w in imported.writes
    ]
    return "\n".join(lines) + "\n"


def write_import(
    imported: Tau2Import, out: Path, *, source_name: str, force: bool = False
) -> list[Path]:
    """Write ``dataset.jsonl``, ``tools.json``, ``runs.jsonl`` and ``toolgate.yml`` (pinned)
    into ``out``; refuse to overwrite unless ``force``."""
    from gate.runsfile import RunsWriter

    paths = [out / n for n in ("dataset.jsonl", "tools.json", "toolgate.yml", "runs.jsonl")]
    refuse_existing(paths, force)
    out.mkdir(parents=True, exist_ok=True)
    dataset, tools, config, runs = paths
    write_cases(dataset, imported.cases)
    tools.write_text(
        json.dumps(imported.tools, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    with RunsWriter(runs) as w:
        for r in imported.runs:
            w.write(r)
    from gate.dataset import load_dataset

    sha = str(load_dataset(dataset).sha256)
    config.write_text(render_config(imported, source_name, sha), encoding="utf-8")
    return paths
