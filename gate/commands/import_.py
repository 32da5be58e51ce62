"""``toolgate import bfcl|transcripts|otel``: bring other tools' data in.

* ``import bfcl`` — a BFCL category → ``DIR/dataset.jsonl`` + ``DIR/toolgate.yml``;
* ``import transcripts --format openai|anthropic|gemini|responses FILE`` — recorded
  conversations → ``DIR/runs.jsonl`` (``--cases``: also ``DIR/dataset.jsonl`` and a
  ``DIR/toolgate.yml`` that replays the runs against it);
* ``import otel FILE`` — OTLP JSON GenAI spans or a Langfuse export → ``DIR/runs.jsonl``.

Existing files are never overwritten without ``--force``. Every problem in the input is
reported at once (file, record, field) with exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gate.errors import Problem, UsageError
from gate.interop import InteropError


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
        "results frozen responses).",
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
    t.add_argument("--force", action="store_true", help="overwrite existing files")
    t.set_defaults(_import=_run_transcripts)

    o = sub.add_parser(
        "otel",
        help="OpenTelemetry GenAI spans (OTLP JSON) or a Langfuse export → runs.jsonl",
        description="Turn OTLP JSON GenAI spans or Langfuse observations into runs.jsonl "
        "(one run per trace; the case id is the span attribute toolgate.case_id, else "
        "--case-attribute, else the trace id).",
    )
    o.add_argument("file", type=Path, metavar="FILE")
    o.add_argument("--format", default="auto", choices=["auto", "otlp", "langfuse"])
    o.add_argument("--case-attribute", help="span attribute holding the case id")
    o.add_argument("--out", type=Path, default=Path("."), help="output folder (default: .)")
    o.add_argument("--force", action="store_true", help="overwrite existing files")
    o.set_defaults(_import=_run_otel)


def run(args: argparse.Namespace) -> int:
    return int(args._import(args))


def _refuse_existing(paths: list[Path], force: bool) -> None:
    if force:
        return
    existing = [p for p in paths if p.exists()]
    if existing:
        raise InteropError(
            [Problem(str(p), None, None, "already exists") for p in existing],
            hint="pass --force to overwrite",
        )


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
    from gate.runsfile import RunsWriter

    fmt = transcripts.Format(args.format)
    imported = transcripts.import_transcripts(
        args.file, fmt, cases=args.cases, keep_system=args.keep_system
    )
    runs_path = args.out / "runs.jsonl"
    targets = [runs_path]
    if args.cases:
        targets += [args.out / "dataset.jsonl", args.out / "toolgate.yml"]
    _refuse_existing(targets, args.force)
    args.out.mkdir(parents=True, exist_ok=True)
    with RunsWriter(runs_path) as w:
        for r in imported.runs:
            w.write(r)
    written = [str(runs_path)]
    if args.cases:
        dataset = args.out / "dataset.jsonl"
        dataset.write_bytes(transcripts.dumps_cases(imported.cases))
        config = args.out / "toolgate.yml"
        config.write_text(_replay_config(f"imported-{fmt.value}", args.file.name), encoding="utf-8")
        written += [str(dataset), str(config)]
    cases = f", {len(imported.cases)} cases" if args.cases else ""
    print(f"imported {len(imported.runs)} runs{cases} from {args.file} → {', '.join(written)}")
    return 0


def _replay_config(name: str, source: str) -> str:
    return (
        f"# Generated by `toolgate import transcripts` from {source}.\n"
        "# The recorded runs replay against the cases made from them: review the\n"
        "# expectations (they are what the model did), then `toolgate pin`.\n"
        f"name: {name}\n"
        "dataset:\n"
        "  path: dataset.jsonl\n"
        "agent:\n"
        "  kind: replay\n"
        "  runs: runs.jsonl\n"
    )


def _run_otel(args: argparse.Namespace) -> int:
    from gate.interop import otel
    from gate.runsfile import RunsWriter

    runs = otel.import_traces(
        args.file, fmt=otel.TraceFormat(args.format), case_attribute=args.case_attribute
    )
    runs_path = args.out / "runs.jsonl"
    _refuse_existing([runs_path], args.force)
    args.out.mkdir(parents=True, exist_ok=True)
    with RunsWriter(runs_path) as w:
        for r in runs:
            w.write(r)
    n_cases = len({r.case_id for r in runs})
    print(f"imported {len(runs)} runs ({n_cases} cases) from {args.file} → {runs_path}")
    return 0
