"""``toolgate init [DIR]``: scaffold a gate that validates (and passes) immediately.

Writes, under DIR (default: the current folder)::

    toolgate.yml            commented config, already pinned to the dataset below
    evals/dataset.jsonl     nine cases: single-tool, ordered, parallel, must-not-call,
                            an error response, no-tool, a two-turn conversation
    evals/tools.json        four tools with real JSON Schemas
    evals/agent.py          a starter agent speaking the command protocol
    .github/workflows/toolgate.yml
                            the Action on every pull request, and on pushes to main
                            as the base runs that keep the baseline (and seed it)

It never overwrites: if any of these files exists, nothing is written.
"""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path

from gate.dataset import default_display
from gate.dataset.pin import check_pin
from gate.errors import ExitCode, UsageError
from gate.pipeline.inputs import read_config, read_dataset

FILES: tuple[tuple[str, str], ...] = (
    # (template name, path under DIR); the config last, since it embeds the pin.
    ("dataset.jsonl", "evals/dataset.jsonl"),
    ("tools.json", "evals/tools.json"),
    ("agent.py", "evals/agent.py"),
    ("workflow.yml", ".github/workflows/toolgate.yml"),
    ("toolgate.yml", "toolgate.yml"),
)
_PLACEHOLDER = "__SHA256__"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dir", nargs="?", default=".", metavar="DIR", help="where to scaffold (default: .)"
    )


def template(name: str) -> bytes:
    return resources.files("gate").joinpath("templates", "init", name).read_bytes()


def run(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    if root.exists() and not root.is_dir():
        raise UsageError(f"{default_display(root)} is not a folder")
    targets = [root / rel for _, rel in FILES]
    existing = [default_display(p) for p in targets if p.exists() or p.is_symlink()]
    if existing:
        raise UsageError(
            f"refusing to overwrite {', '.join(existing)}",
            hint="Move those files away, or run `toolgate init` in another folder.",
        )
    for (name, _), target in zip(FILES[:-1], targets[:-1], strict=True):
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(template(name))
    dataset = read_dataset(targets[0])
    config_text = template("toolgate.yml").decode("utf-8").replace(_PLACEHOLDER, dataset.sha256)
    targets[-1].write_text(config_text, encoding="utf-8", newline="\n")
    # Self-check: what we wrote must validate, pin included (the dataset just read is the
    # file written, and the one the config names).
    check_pin(read_config(targets[-1]), dataset)
    shown = default_display(targets[-1])
    print(f"Created {', '.join(default_display(p) for p in targets)}")
    print(f"Next: `toolgate validate --config {shown}`, then `toolgate check --config {shown}`.")
    return ExitCode.PASS
