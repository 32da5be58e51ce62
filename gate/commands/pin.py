"""``toolgate pin``: write the dataset's sha256 (and optionally its version) into the config.

Only the ``dataset.sha256`` value (and ``dataset.version`` with ``--version``) changes;
every other byte of toolgate.yml — comments, order, quoting — stays as it was
(:func:`gate.dataset.pin.pin_config`). The dataset must be valid: pinning a dataset that
does not load would only move the error to the next run. A config whose only problem is
a malformed ``sha256``/``version`` can be pinned (that is how it gets fixed).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from gate.commands import add_config_argument, require_config
from gate.config import config_from_doc
from gate.dataset import default_display
from gate.dataset.pin import pin_config
from gate.errors import ConfigError, ExitCode, Problem, UsageError
from gate.pipeline.inputs import read_dataset
from gate.scorers.registry import COST_METRICS, GATEABLE
from gate.yamlio import load_yaml

_PIN_FIELDS = {"dataset.sha256", "dataset.version"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_argument(parser)
    parser.add_argument(
        "--version",
        dest="dataset_version",
        default=None,
        metavar="V",
        help="also set dataset.version to V",
    )


def run(args: argparse.Namespace) -> int:
    config_path = Path(args.config)
    require_config(config_path)
    shown = default_display(config_path)
    version = args.dataset_version
    if version is not None and (not version.strip() or "\n" in version):
        raise UsageError("--version must be a non-empty, single-line string")
    doc = load_yaml(config_path, display=shown)
    try:
        config_from_doc(doc, config_path, metrics=GATEABLE, cost_metrics=COST_METRICS)
    except ConfigError as exc:
        others = [p for p in exc.problems if p.field not in _PIN_FIELDS]
        if others:
            raise ConfigError(
                others,
                hint="Fix the config first; `toolgate pin` only rewrites dataset.sha256 and "
                "dataset.version.",
            ) from None
    raw_path = doc.data["dataset"]["path"]
    dataset_path = (config_path.parent / raw_path).resolve()
    if not dataset_path.exists():
        raise ConfigError(
            Problem(
                shown,
                doc.line_of(("dataset", "path")),
                "dataset.path",
                f"no such file {default_display(dataset_path)}",
            )
        )
    dataset = read_dataset(dataset_path, display=default_display(dataset_path))
    result = pin_config(config_path, dataset.sha256, version, display=shown)
    if not result.changed:
        print(f"{shown}: already pins {dataset.display} sha256 {dataset.sha256} (nothing written)")
        return ExitCode.PASS
    changes = []
    if result.old_sha256 != result.new_sha256:
        changes.append(f"sha256 {result.old_sha256 or '(none)'} -> {result.new_sha256}")
    if version is not None and result.old_version != version:
        changes.append(f"version {result.old_version or '(none)'} -> {version}")
    print(f"{shown}: pinned {dataset.display} ({len(dataset)} cases): {'; '.join(changes)}")
    return ExitCode.PASS
