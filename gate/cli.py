"""The ``toolgate`` command line: parse, dispatch, and the one top-level error handler.

Each subcommand lives in ``gate/commands/<name>.py`` with ``add_arguments(parser)`` and
``run(args) -> int``; only the module of the command given is imported (``toolgate
--version`` and ``toolgate --help`` import none: ``bench/cli_startup.py`` measures it).
Exit codes everywhere (``gate.errors.ExitCode``, listed in the help): 0 pass, 1 the gate
failed, 2 usage or input error, 3 a bug in ToolGate.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Sequence

from gate import __version__
from gate.errors import ExitCode, InputError, RunAborted, Terminated

COMMANDS: dict[str, tuple[str, str]] = {
    # name: (module, one-line help)
    "validate": ("validate", "check a config and its dataset; report every problem"),
    "pin": ("pin", "write the dataset's sha256 (and version) into the config"),
    "init": ("init", "scaffold a commented toolgate.yml, a dataset and a tools file"),
    "run": ("run", "run the agent on every case x sample; write runs.jsonl"),
    "score": ("score", "score a runs file against the dataset; write results.json"),
    "check": ("check", "run, score, gate, compare with a baseline, report (the CI job)"),
    "diff": ("diff", "the flip table between two results files"),
    "merge": ("merge", "join shard results, then gate and report once"),
    "report": ("report", "render a report (comment, summary, junit, console) from results"),
    "comment": ("comment", "post or update the sticky PR comment from results"),
    "import": ("import_", "import BFCL data, transcripts or traces"),
    "export": ("export", "export results to other formats (CSV per case, per tool)"),
    "record": ("record", "local only: run real tools once to freeze their responses"),
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(ExitCode.BAD_INPUT)


EPILOG = """\
Start with `toolgate init` (a commented toolgate.yml, a dataset and a tools file), then
`toolgate validate` and `toolgate check`. `toolgate COMMAND --help` describes a command.

exit codes:
  0  passed (or the command did what it was asked)
  1  the gate failed
  2  usage or input error (the message names the file, line and field)
  3  a bug in ToolGate (please report it with the traceback)
  4  the run is not valid (the infrastructure failed: samples missing, the agent never
     started); it says nothing about the agent
"""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; the arguments of ``command`` only (its module is imported then, the
    others' never: every subcommand is listed with its one-line help either way)."""
    parser = _Parser(
        prog="toolgate",
        description="Block a pull request when an LLM agent's tool calling regresses.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"toolgate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(
            name,
            help=help_text,
            description=help_text,
            epilog=EPILOG.split("\n\n", 1)[1],
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        if name == command:
            mod = importlib.import_module(f"gate.commands.{module}")
            mod.add_arguments(p)
            p.set_defaults(_module=mod)
    return parser


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (the first word that is one)."""
    for word in argv:
        if word in COMMANDS:
            return word
        if not word.startswith("-"):
            return None
    return None


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_of(words))
    if not words:  # a bare `toolgate`: the help, not an error
        parser.print_help()
        return ExitCode.PASS
    args = parser.parse_args(words)
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return _run(args)
    finally:
        if previous is not None:  # main() may be called in-process (tests, embedding)
            signal.signal(signal.SIGTERM, previous)


def _run(args: argparse.Namespace) -> int:
    try:
        return int(args._module.run(args))
    except InputError as exc:
        report_input_error(exc)
        return ExitCode.BAD_INPUT
    except RunAborted as exc:
        report_run_aborted(exc)
        return ExitCode.RUN_INVALID
    except Terminated:
        sys.stderr.write("toolgate: terminated\n")
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        sys.stderr.write("toolgate: interrupted\n")
        return 130
    except BrokenPipeError:
        return ExitCode.BAD_INPUT
    except Exception:
        traceback.print_exc()
        sys.stderr.write(
            "toolgate: internal error (a bug in ToolGate, not in your input); "
            "please report it with the traceback above\n"
        )
        return ExitCode.BUG


def error_text(exc: InputError) -> str:
    """One ``toolgate:`` prefix on every line: ``toolgate: error: FILE:LINE: FIELD: …``."""
    lines = []
    for p in exc.problems:
        shown = p.message if p.file == "toolgate" and p.line is None and not p.field else str(p)
        lines.append(f"toolgate: error: {shown}")
    if len(exc.problems) > 1:
        lines.append(f"toolgate: ({len(exc.problems)} problems)")
    if exc.hint:
        lines.append(f"toolgate: hint: {exc.hint}")
    return "\n".join(lines) + "\n"


def report_run_aborted(exc: RunAborted) -> None:
    """What stopped the run and what to do; in GitHub Actions also as an annotation."""
    from gate.github.workflow import annotation

    text = f"toolgate: error: {exc}\ntoolgate: nothing was decided: run again"
    sys.stderr.write(text + (f"\ntoolgate: hint: {exc.hint}\n" if exc.hint else "\n"))
    if os.environ.get("GITHUB_ACTIONS") == "true":
        print(annotation("error", str(exc), title="toolgate run aborted"))


def report_input_error(exc: InputError) -> None:
    """Print every problem; in GitHub Actions also as ``::error`` annotations."""
    from gate.github.workflow import annotation

    sys.stderr.write(error_text(exc))
    if os.environ.get("GITHUB_ACTIONS") == "true":
        for p in exc.problems[:10]:
            msg = f"{p.field}: {p.message}" if p.field else p.message
            print(annotation("error", msg, file=p.file, line=p.line, title="toolgate input error"))
