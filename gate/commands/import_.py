"""``toolgate import bfcl|transcripts|otel|tau2|mcp-tools``: bring other tools' data in.

What each source writes is in its subcommand's help and in docs/interop.md.

Existing files are never overwritten without ``--force``. Every problem in the input is
reported at once (file, record, field) with exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from gate.errors import UsageError
from gate.interop._records import refuse_existing, write_cases

if TYPE_CHECKING:
    from gate.interop._conversation import Imported


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="source", metavar="SOURCE", parser_class=type(parser))
    sub.required = True

    b = sub.add_parser(
        "bfcl",
        help="a Berkeley Function Calling Leaderboard category → dataset + toolgate.yml",
        description="Convert BFCL questions, function docs and possible answers into a "
        "ToolGate dataset (case ids = BFCL ids) and a toolgate.yml using the bfcl profile.",
    )
    b.add_argument("--questions", type=Path, help="BFCL_v<N>_<category>.json")
    b.add_argument("--answers", type=Path, help="possible_answer/BFCL_v<N>_<category>.json")
    b.add_argument(
        "--category",
        help="the BFCL category; without --questions, both files are taken from the installed "
        "bfcl-eval package (pip install 'toolgate[bfcl]') or from --data-dir",
    )
    b.add_argument("--data-dir", type=Path, help="a BFCL data folder (instead of the package)")
    b.add_argument(
        "--underscore-names",
        action="store_true",
        help="turn '.' in function names into '_' (OpenAI-style APIs refuse dots)",
    )
    b.add_argument("--out", type=Path, required=True, help="output folder")
    b.add_argument("--force", action="store_true", help="overwrite existing files")
    b.set_defaults(_import=_run_bfcl)

    t = sub.add_parser(
        "transcripts",
        help="recorded provider conversations → runs.jsonl (and dataset cases)",
        description="Turn recorded conversations (request + response) into runs.jsonl for "
        "replay, and with --cases into dataset cases (tool calls become expectations, tool "
        "results frozen responses). A conversation of several user messages becomes a "
        "conversation case: each user message starts a turn, scored where it happened "
        "(user messages with no answer between them are one turn); --last-turn tests the "
        "last user turn alone, as before.",
    )
    t.add_argument(
        "--format", required=True, choices=["openai", "anthropic", "gemini", "responses"]
    )
    t.add_argument("file", type=Path, metavar="FILE")
    t.add_argument("--out", type=Path, default=Path("."), help="output folder (default: .)")
    t.add_argument("--cases", action="store_true", help="also write dataset.jsonl and toolgate.yml")
    t.add_argument(
        "--keep-system",
        action="store_true",
        help="keep system prompts in the cases' message_history",
    )
    t.add_argument(
        "--last-turn",
        action="store_true",
        help="test only the last user turn of each conversation: the messages before it "
        "become the case's message_history and the run is what followed it (one-turn "
        "cases, the behaviour before conversation cases)",
    )
    t.add_argument("--force", action="store_true", help="overwrite existing files")
    t.set_defaults(_import=_run_transcripts)

    o = sub.add_parser(
        "otel",
        help="OpenTelemetry GenAI spans (OTLP JSON) or a Langfuse export → runs.jsonl",
        description="Turn OTLP JSON GenAI spans or Langfuse observations into runs.jsonl "
        "(one run per trace; the case id is the span attribute toolgate.case_id, else "
        "--case-attribute, else the trace id), and with --cases into dataset cases. The "
        "traces of one session (gen_ai.conversation.id, session.id or langfuse.session.id; "
        "Langfuse: the trace's sessionId) are one conversation: one run and one "
        "conversation case, each trace a user turn, in start-time order; the case id is "
        "then the session id unless the traces name one.",
    )
    o.add_argument("file", type=Path, metavar="FILE")
    o.add_argument("--format", default="auto", choices=["auto", "otlp", "langfuse"])
    o.add_argument("--case-attribute", help="span attribute holding the case id")
    o.add_argument(
        "--session-attribute",
        action="append",
        metavar="NAME",
        help="span attribute naming a trace's session (repeatable; default: "
        "gen_ai.conversation.id, session.id, langfuse.session.id, the first found)",
    )
    o.add_argument(
        "--per-trace",
        action="store_true",
        help="one run (and case) per trace even when traces share a session (the "
        "behaviour before conversation cases)",
    )
    o.add_argument("--cases", action="store_true", help="also write dataset.jsonl and toolgate.yml")
    o.add_argument("--out", type=Path, default=Path("."), help="output folder (default: .)")
    o.add_argument("--force", action="store_true", help="overwrite existing files")
    o.set_defaults(_import=_run_otel)

    u = sub.add_parser(
        "tau2",
        help="τ²-bench results → cases judged by their effects + the runs to replay",
        description="Turn a τ²-bench results file into a ToolGate dataset (one case per "
        "task: its expected writes; a task without write actions is a reads-only case), its "
        "tools.json, the runs to replay (one per simulation, sample = trial) and a pinned "
        "toolgate.yml judging effects. Then: toolgate score --config DIR/toolgate.yml --runs "
        "DIR/runs.jsonl.",
    )
    u.add_argument("file", type=Path, metavar="RESULTS.json", help="a τ²-bench results file")
    u.add_argument(
        "--tools",
        type=Path,
        metavar="TOOLS.json",
        help="the tool definitions, when the results file does not keep them",
    )
    u.add_argument(
        "--untyped-tools",
        action="store_true",
        help="without definitions: every tool the file names, with arguments of any shape",
    )
    u.add_argument(
        "--writes",
        metavar="NAME,…",
        help="the tools that write (default: the tools' MCP annotations, else τ²-bench's "
        "action checks, else its own domain's write tools); every other tool reads",
    )
    u.add_argument(
        "--idempotent",
        metavar="NAME,…",
        help="the write tools that set a state (the same call again changes nothing more; "
        "default: the tools' idempotentHint, else τ²-bench's own domain's)",
    )
    u.add_argument(
        "--skip-unmappable",
        action="store_true",
        help="leave out the tasks that cannot be judged from the calls (and say which) "
        "instead of refusing the file",
    )
    u.add_argument("--out", type=Path, required=True, help="output folder")
    u.add_argument("--force", action="store_true", help="overwrite existing files")
    u.set_defaults(_import=_run_tau2)

    m = sub.add_parser(
        "mcp-tools",
        help="an MCP server's tools/list → tools.json (the pinned tool definitions)",
        description="List the tools an MCP server advertises and write them as a tools.json "
        '(name, description, parameters), to reference as available_tools: "@tools.json" '
        "and pin. With agent.servers in the config, `toolgate check` then reports drift "
        "between the pinned tools and what the servers advertise.",
    )
    where = m.add_mutually_exclusive_group(required=True)
    where.add_argument("--url", help="a streamable-HTTP MCP server")
    where.add_argument("--command", help="a stdio MCP server's command line (split like a shell)")
    where.add_argument("--server", help="the name of one of agent.servers in --config")
    m.add_argument("--config", type=Path, default=Path("toolgate.yml"), help="with --server")
    m.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME=ENV_VAR",
        help="an HTTP header whose value is read from the environment variable (repeatable)",
    )
    m.add_argument("--timeout", type=float, default=30.0, help="seconds per exchange")
    m.add_argument("--out", type=Path, required=True, help="the tools.json to write")
    m.add_argument("--force", action="store_true", help="overwrite an existing file")
    m.set_defaults(_import=_run_mcp_tools)


def run(args: argparse.Namespace) -> int:
    return int(args._import(args))


def _run_bfcl(args: argparse.Namespace) -> int:
    from gate.interop import bfcl

    if args.questions is not None:
        questions, answers = args.questions, args.answers
    elif args.category is not None:
        questions, answers = bfcl.locate_category(args.category, args.data_dir)
    else:
        raise UsageError("give --category, or --questions (and --answers)")
    result = bfcl.convert(
        questions, answers, category=args.category, underscore_names=args.underscore_names
    )
    paths = bfcl.write_import(result, args.out, force=args.force)
    for note in result.notes[:20]:
        sys.stderr.write(f"warning: possible answer contradicts its schema: {note}\n")
    if len(result.notes) > 20:
        sys.stderr.write(f"warning: … and {len(result.notes) - 20} more (see the cases' notes)\n")
    for note in result.skipped:
        sys.stderr.write(f"warning: left out {note}\n")
    print(bfcl.summary(result, paths))
    return 0


def _run_transcripts(args: argparse.Namespace) -> int:
    from gate.interop import transcripts

    fmt = transcripts.Format(args.format)
    imported = transcripts.import_transcripts(
        args.file, fmt, cases=args.cases, keep_system=args.keep_system, last_turn=args.last_turn
    )
    written = _write_replay_import(args, imported, "transcripts")
    cases = f", {len(imported.cases)} cases" if args.cases else ""
    print(f"imported {len(imported.runs)} runs{cases} from {args.file} → {', '.join(written)}")
    return 0


def _run_otel(args: argparse.Namespace) -> int:
    from gate.interop import otel

    imported = otel.import_trace_file(
        args.file,
        fmt=otel.TraceFormat(args.format),
        case_attribute=args.case_attribute,
        session_attributes=tuple(args.session_attribute or otel.SESSION_ATTRIBUTES),
        per_trace=args.per_trace,
        cases=args.cases,
    )
    runs = imported.runs
    written = _write_replay_import(args, imported, "otel")
    n_cases = len({r.case_id for r in runs})
    print(f"imported {len(runs)} runs ({n_cases} cases) from {args.file} → {', '.join(written)}")
    return 0


def _write_replay_import(args: argparse.Namespace, imported: Imported, command: str) -> list[str]:
    """``DIR/runs.jsonl`` and, with ``--cases``, ``DIR/dataset.jsonl`` and a
    ``DIR/toolgate.yml`` replaying the runs against it → the paths written."""
    from gate.runsfile import RunsWriter

    runs_path = args.out / "runs.jsonl"
    dataset = args.out / "dataset.jsonl"
    config = args.out / "toolgate.yml"
    targets = [runs_path, dataset, config] if args.cases else [runs_path]
    refuse_existing(targets, args.force)
    args.out.mkdir(parents=True, exist_ok=True)
    with RunsWriter(runs_path) as w:
        for r in imported.runs:
            w.write(r)
    if args.cases:
        write_cases(dataset, imported.cases)
        config.write_text(
            f"# Generated by `toolgate import {command}` from {args.file.name}.\n"
            "# The recorded runs replay against the cases made from them: review the\n"
            "# expectations (they are what the model did), then `toolgate pin`.\n"
            f"name: imported-{imported.source}\n"
            "dataset:\n"
            "  path: dataset.jsonl\n"
            "agent:\n"
            "  kind: replay\n"
            "  runs: runs.jsonl\n",
            encoding="utf-8",
        )
    return [str(p) for p in targets]


def _run_tau2(args: argparse.Namespace) -> int:
    from gate.interop import tau2

    writes = None
    if args.writes is not None:
        writes = [w.strip() for w in args.writes.split(",") if w.strip()]
        if not writes:
            raise UsageError("--writes must name at least one tool: --writes NAME,NAME")
    idempotent = None
    if args.idempotent is not None:
        idempotent = [w.strip() for w in args.idempotent.split(",") if w.strip()]
    imported = tau2.import_tau2(
        args.file,
        tools_file=args.tools,
        writes=writes,
        idempotent=idempotent,
        untyped_tools=args.untyped_tools,
        skip_unmappable=args.skip_unmappable,
    )
    paths = tau2.write_import(imported, args.out, source_name=args.file.name, force=args.force)
    for note in imported.skipped:
        sys.stderr.write(f"warning: left out {note}\n")
    if imported.inferred_errors:
        sys.stderr.write(
            f"note: {imported.inferred_errors} tool result(s) carry no error flag and begin "
            "`Error:` (τ²-bench's text for a failed call): counted as failed calls\n"
        )
    reads_only = sum(1 for c in imported.cases if c.get("expected_no_tool"))
    gaps = f" ({imported.gaps} trials they lack: not run)" if imported.gaps else ""
    print(
        f"imported {len(imported.cases)} tasks ({reads_only} reads-only) and "
        f"{len(imported.runs) - imported.gaps} simulations{gaps} from {args.file}; write tools "
        f"({imported.writes_from}): {', '.join(imported.writes) or 'none'} → "
        + ", ".join(str(p) for p in paths)
    )
    print(f"next: toolgate score --config {paths[2]} --runs {paths[3]} --out DIR")
    return 0


def _run_mcp_tools(args: argparse.Namespace) -> int:
    import os

    from gate.config import McpServerConfig, load_config
    from gate.interop.mcp_tools import list_server_tools, write_tools_file

    root = Path.cwd()
    if args.server is not None:
        config = load_config(args.config)
        servers = config.agent.mcp_servers()
        server = next((s for s in servers if s.name == args.server), None)
        if server is None:
            names = ", ".join(s.name for s in servers) or "none"
            raise UsageError(
                f"--server {args.server!r} is not one of agent.servers in {args.config} ({names})"
            )
        root = config.root
    else:
        headers: dict[str, str] = {}
        for item in args.header:
            name, sep, var = item.partition("=")
            if not sep or not name or not var:
                raise UsageError(f"--header must be NAME=ENV_VAR, not {item!r}")
            headers[name] = var
        try:
            server = McpServerConfig(
                name="server",
                url=args.url,
                command=args.command,
                headers_env=headers,
                timeout_s=args.timeout,
            )
        except ValueError as exc:  # pydantic's: the URL is not http(s)
            raise UsageError(str(exc).splitlines()[-1]) from None
    refuse_existing([args.out], args.force)
    tools = list_server_tools(server, root=root, environ=os.environ)
    write_tools_file(tools, args.out)
    print(f"imported {len(tools)} tool(s) from MCP server {server.name!r} → {args.out}")
    return 0
