"""``toolgate init [DIR]``: scaffold a gate that validates (and passes) immediately.

Writes under DIR (default: the current folder) the config and the ``evals/`` files
docs/dataset.md lists, a ``.gitignore`` of ``toolgate-out/`` (added to one there), and
the workflow — the README's, ``examples/workflows/basic.yml`` — where GitHub runs it:
``.github/workflows/toolgate.yml`` at the root of the git repository DIR is in (with the
config's path from there when DIR is a subfolder). DIR outside any git repository gets it
under DIR, and init says where to move it. It never overwrites: if any of these files
exists (a ``.gitignore`` is added to), nothing is written.
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
    ("toolgate.yml", "toolgate.yml"),
)
WORKFLOW = ".github/workflows/toolgate.yml"
"""Where GitHub runs a workflow from: this path under the repository's root."""
IGNORED = "toolgate-out/"
"""The results folder (``reporting.out``'s default): written by every run, never committed."""
_PLACEHOLDER = "__SHA256__"
_CONFIG_LINE = "          config: toolgate.yml\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dir", nargs="?", default=".", metavar="DIR", help="where to scaffold (default: .)"
    )


def template(name: str) -> bytes:
    return resources.files("gate").joinpath("templates", "init", name).read_bytes()


def git_root(start: Path) -> Path | None:
    """The top folder of the git repository ``start`` is in (a folder holding ``.git``,
    a directory or a worktree's file), or ``None`` outside any."""
    here = start.resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def workflow_for(root: Path, repo: Path | None) -> tuple[Path, bytes]:
    """Where the workflow goes and its bytes: the repository root's workflows folder, the
    config named from there; without a repository, under ``root``."""
    text = template("workflow.yml")
    if repo is None:
        return root / WORKFLOW, text
    rel = (root.resolve() / "toolgate.yml").relative_to(repo).as_posix()
    if rel != "toolgate.yml":
        line = _CONFIG_LINE.encode()
        assert line in text, "the workflow template names its config on one line"
        text = text.replace(line, f"          config: {rel}\n".encode())
    return repo / WORKFLOW, text


def run(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    if root.exists() and not root.is_dir():
        raise UsageError(f"{default_display(root)} is not a folder")
    nearest = next(p for p in (root.resolve(), *root.resolve().parents) if p.exists())
    repo = git_root(nearest)
    workflow, workflow_text = workflow_for(root, repo)
    targets = [root / rel for _, rel in FILES]
    existing = [default_display(p) for p in [*targets, workflow] if p.exists() or p.is_symlink()]
    if existing:
        raise UsageError(
            f"refusing to overwrite {', '.join(existing)}",
            hint="Move those files away, or run `toolgate init` in another folder.",
        )
    for (name, _), target in zip(FILES[:-1], targets[:-1], strict=True):
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(template(name))
    workflow.parent.mkdir(parents=True, exist_ok=True)
    workflow.write_bytes(workflow_text)
    ignore = ignore_results(root)
    dataset = read_dataset(targets[0])
    config_text = template("toolgate.yml").decode("utf-8").replace(_PLACEHOLDER, dataset.sha256)
    targets[-1].write_text(config_text, encoding="utf-8", newline="\n")
    # Self-check: what we wrote must validate, pin included (the dataset just read is the
    # file written, and the one the config names).
    check_pin(read_config(targets[-1]), dataset)
    shown = default_display(targets[-1])
    written = [*targets[:-1], workflow, targets[-1]]
    print(f"Created {', '.join(default_display(p) for p in written)}")
    if ignore is not None:
        print(ignore)
    if repo is None:
        print(
            f"{default_display(root)} is not in a git repository: GitHub runs workflows only "
            f"from the repository root's {WORKFLOW.rsplit('/', 1)[0]}/. Move "
            f"{default_display(workflow)} there (and set its `config:` to this config's path "
            "from the root)."
        )
    print(
        f"Next: `toolgate validate --config {shown}` (it prints what the first base run "
        f"costs), then `toolgate check --config {shown}`; push the workflow to your default "
        "branch before the first pull request: that push makes the baseline."
    )
    return ExitCode.PASS


def ignore_results(root: Path) -> str | None:
    """``toolgate-out/`` in ``root``'s .gitignore (the file made, or the line added);
    what was done, or ``None`` when it is there already."""
    path = root / ".gitignore"
    lines = path.read_text("utf-8").splitlines() if path.is_file() else []
    if any(line.strip() in (IGNORED, IGNORED.rstrip("/"), "/" + IGNORED) for line in lines):
        return None
    existed = path.is_file()
    with path.open("a", encoding="utf-8", newline="\n") as f:
        if existed and lines and not path.read_text("utf-8").endswith("\n"):
            f.write("\n")
        f.write(f"# ToolGate's results folder (reporting.out): made by every run\n{IGNORED}\n")
    return f"{'Added' if existed else 'Created'} {default_display(path)}: {IGNORED}"
