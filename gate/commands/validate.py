"""``toolgate validate``: check a config, its dataset and the pin; report every problem.

Order of work: the config (every problem with its line), then the dataset (every
problem with file:line: field), then the cross-checks that need both — gates on slices
that exist, scoring settings that name real tools and arguments — and the pin. All
cross-check and pin problems are reported together. docs/dataset.md gives the line
printed on success, and ``--dataset``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gate.commands import DEFAULT_CONFIG, add_config_argument, require_config
from gate.config import Config
from gate.dataset import Dataset, default_display
from gate.dataset.matchers import did_you_mean
from gate.dataset.pin import check_pin
from gate.errors import ConfigError, ExitCode, PinMismatchError, Problem
from gate.model import Difficulty
from gate.pipeline.inputs import (
    missing_dataset,
    read_config_doc,
    read_dataset,
    retired_problems,
)
from gate.pipeline.preflight import agent_problems, first_case_problems
from gate.yamlio import YamlDoc


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_argument(parser, default=None)
    parser.add_argument(
        "--dataset",
        default=None,
        metavar="FILE",
        help="validate this dataset instead of the config's (the pin is then not checked)",
    )
    parser.add_argument(
        "--no-agent",
        action="store_true",
        help="do not start the agent (a command or python agent runs the first case once)",
    )


def run(args: argparse.Namespace) -> int:
    config_path = Path(args.config or DEFAULT_CONFIG)
    if args.dataset and args.config is None and not config_path.exists():
        dataset = read_dataset(Path(args.dataset), display=default_display(Path(args.dataset)))
        print(f"OK: {summary(dataset)}")
        return ExitCode.PASS
    require_config(config_path)
    shown = default_display(config_path)
    config, doc = read_config_doc(config_path, display=shown)
    configured = config.resolve(config.dataset.path)
    path = Path(args.dataset) if args.dataset else configured
    if not path.is_file():
        raise ConfigError(
            missing_dataset(doc, path, "--dataset" if args.dataset else "dataset.path")
        )
    dataset = read_dataset(path, display=default_display(path))
    problems = cross_check(config, doc, dataset)
    pinned = path.resolve() == configured
    if pinned:
        try:
            check_pin(config, dataset, config_display=shown)
        except PinMismatchError as exc:
            problems.extend(exc.problems)
    if problems:
        kind = (
            PinMismatchError if all(p.field == "dataset.sha256" for p in problems) else ConfigError
        )
        raise kind(problems)
    if not args.no_agent:  # the agent started once: the first case, one sample, no scoring
        started = first_case_problems(config, doc, dataset)
        if started:
            raise ConfigError(started, hint=start_hint(started))
    pin = (
        f"pinned {config.dataset.version + ' ' if config.dataset.version else ''}sha256 "
        f"{dataset.sha256[:12]}"
        if pinned
        else f"sha256 {dataset.sha256[:12]} (not the config's dataset: pin not checked)"
    )
    print(f"OK: {shown}: {summary(dataset)}, {pin}")
    if pinned:
        print(first_bill(config, dataset))
    sys.stdout.flush()
    for note in config.agent.notes(config.root):
        sys.stderr.write(f"toolgate: note: {note}\n")
    return ExitCode.PASS


def first_bill(config: Config, dataset: Dataset) -> str:
    """What the first base run (the first push) will spend on the agent, in words: the
    bill ``toolgate check --base-run`` prints before it starts, with no history yet."""
    from gate.pipeline.sequential import bill_lines, run_bill

    bill = run_bill(
        config,
        dataset,
        dataset.cases,
        base=None,
        samples=config.initial_samples,
        agent={},
        base_run=True,
    )
    return "\n".join(bill_lines(bill, "the first base run (the first push)"))


def summary(dataset: Dataset) -> str:
    """One line: cases per slice, tools."""
    counts = dataset.slice_counts()
    levels = ", ".join(
        f"{d.value} {counts[f'difficulty={d.value}']}"
        for d in Difficulty
        if f"difficulty={d.value}" in counts
    )
    parts = [p for p in (levels,) if p]
    parts.append(f"no-tool {counts.get('no_tool=true', 0)}")
    parts.append(f"must-not-call {counts.get('must_not_call=true', 0)}")
    parts.append(f"{len(dataset.tags)} tags")
    return (
        f"{dataset.display}: {len(dataset)} cases ({'; '.join(parts)}), {len(dataset.tools)} tools"
    )


def cross_check(config: Config, doc: YamlDoc, dataset: Dataset) -> list[Problem]:
    """Config settings that must agree with the dataset: a typo here would silently
    gate on an empty slice or configure a tool that never appears."""
    problems: list[Problem] = []
    tools = sorted(dataset.tools)

    def report(path: tuple[str | int, ...], message: str) -> None:
        field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)[1:]
        problems.append(Problem(doc.file, doc.line_of(path), field, message))

    def tool_known(name: str, path: tuple[str | int, ...]) -> bool:
        if name in dataset.tools:
            return True
        report(path, f"no tool {name!r} in the dataset{did_you_mean(name, tools)}")
        return False

    def arg_known(tool: str, arg: str, path: tuple[str | int, ...]) -> None:
        props = _properties(dataset, tool)
        if props is not None and arg not in props:
            report(path, f"{tool} has no parameter {arg!r}{did_you_mean(arg, props)}")

    counts = dataset.slice_counts()
    tags = sorted(dataset.tags)
    mnc = sorted({n for c in dataset.cases for n in c.must_not_call})
    for i, gate in enumerate(config.gates):
        if gate.slice is None or gate.slice in counts:
            continue
        key, _, value = gate.slice.partition("=")
        where: tuple[str | int, ...] = ("gates", i, "slice")
        if key == "tag":
            report(
                where,
                f"no case has the tag {value!r}{did_you_mean(value, tags)}; the gate would "
                "judge an empty slice",
            )
        elif key == "difficulty":
            levels = [d.value for d in Difficulty]
            if value not in levels:
                report(
                    where,
                    f"difficulty must be one of {', '.join(levels)}, not "
                    f"{value!r}{did_you_mean(value, levels)}",
                )
            else:
                report(
                    where, f"no case has difficulty {value!r}; the gate would judge an empty slice"
                )
        elif key == "no_tool":
            if value not in ("true", "false"):
                report(where, f"no_tool must be true or false, not {value!r}")
            else:
                report(where, f"no case is in the slice no_tool={value}")
        elif key == "must_not_call":
            if value in ("true", "false") or value in mnc:
                report(where, f"no case is in the slice must_not_call={value}")
            else:
                report(
                    where,
                    f"no case lists {value!r} in must_not_call{did_you_mean(value, mnc)} (or "
                    "use true / false)",
                )
    scoring = config.scoring
    for name, tool_cfg in scoring.tools.items():
        if tool_known(name, ("scoring", "tools", name)):
            for arg in tool_cfg.args:
                arg_known(name, arg, ("scoring", "tools", name, "args", arg))
    for i, rule in enumerate(scoring.arg_scope):
        tool_known(rule.tool, ("scoring", "arg_scope", i, "tool"))
        arg_known(rule.tool, rule.arg, ("scoring", "arg_scope", i, "arg"))
    for i, before in enumerate(scoring.required_before):
        tool_known(before.tool, ("scoring", "required_before", i, "tool"))
        for j, name in enumerate(before.preceded_by):
            tool_known(name, ("scoring", "required_before", i, "preceded_by", j))
    for name, args in scoring.free_text.items():
        if tool_known(name, ("scoring", "free_text", name)):
            for j, arg in enumerate(args):
                arg_known(name, arg, ("scoring", "free_text", name, j))
    problems += retired_problems(config, doc, dataset)
    problems += agent_problems(config, doc)
    return problems


def start_hint(problems: list[Problem]) -> str:
    """What to do about an agent that could not start (:func:`gate.policy.validity.hint_for`
    on its error), or how to validate without starting it."""
    from gate.policy.validity import hint_for

    for p in problems:
        hint = hint_for(p.message)
        if hint:
            return hint
    return "Fix the agent, or pass --no-agent to validate without starting it."


def _properties(dataset: Dataset, tool: str) -> list[str] | None:
    spec = dataset.tools.get(tool)
    if spec is None:
        return None
    props = spec.parameters.get("properties")
    return sorted(props) if isinstance(props, dict) else None
