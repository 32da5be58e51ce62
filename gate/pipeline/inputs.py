"""The inputs stage, shared by every command: config, dataset and pin, the baseline, the
scoring context and the redactor — each input read once, at the edge."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from gate.config import Config, NormalizeConfig, ScoringConfig
from gate.dataset import Dataset
from gate.model import DatasetLike
from gate.report.redact import Redactor
from gate.results import Results, read_results
from gate.scorers import ScoringContext
from gate.scorers.registry import GATEABLE


def read_config(config_path: Path, display: str | None = None) -> Config:
    """toolgate.yml, validated; gates may name the metrics of the registry
    (:data:`gate.scorers.registry.GATEABLE`). Every problem names file, line and field."""
    from gate.config import load_config

    return load_config(config_path, display=display, metrics=GATEABLE)


def load_inputs(config_path: Path, display: str | None = None) -> tuple[Config, Dataset]:
    """Config, dataset and their cross-checks: the pin, the judge's inputs. Raises
    :class:`~gate.errors.InputError` naming file, line and field."""
    from gate.dataset import load_dataset
    from gate.dataset.pin import check_pin

    config = read_config(config_path, display=display)
    ds_path = config.resolve(config.dataset.path)
    dataset = load_dataset(ds_path, display=_rel(ds_path))
    check_pin(config, dataset, config_display=display)
    if config.judge is not None:
        from gate.judge import check_judge_inputs

        check_judge_inputs(config)
    return config, dataset


def load_baseline(choice: str | None, config: Config) -> tuple[Results | None, str | None]:
    """The baseline results and where they came from: ``choice`` is a path, ``none``, or
    None for the config's committed ``baseline.path`` (if any)."""
    if choice is not None and choice.lower() == "none":
        return None, None
    if choice is not None:
        return read_results(Path(choice), display=choice), f"file {choice}"
    if config.baseline.path:
        path = config.resolve(config.baseline.path)
        return read_results(path, display=config.baseline.path), (
            f"committed file {config.baseline.path}"
        )
    return None, None


def scoring_context(config: Config | None, dataset: DatasetLike) -> ScoringContext:
    """The scorers' context for a config (defaults without one): validators compiled once."""
    scoring = config.scoring if config is not None else ScoringConfig()
    normalize = config.dataset.normalize if config is not None else NormalizeConfig()
    budget = config.agent.step_budget if config is not None else None
    return ScoringContext.build(scoring, normalize, dataset.tools, step_budget=budget)


def redactor_for(config: Config | None, environ: Mapping[str, str]) -> Redactor:
    """Secrets never to print (:meth:`Config.secret_env_names`)."""
    names = config.secret_env_names() if config is not None else []
    return Redactor.from_environ(names, environ)


def _rel(path: Path) -> str:
    """How reports name a file: relative to the repository in GitHub Actions
    (``GITHUB_WORKSPACE``, so annotations point at the right file whatever the working
    directory), else to the working directory; absolute when under neither."""
    base = os.environ.get("GITHUB_WORKSPACE") or str(Path.cwd())
    try:
        return str(path.resolve().relative_to(Path(base).resolve()))
    except ValueError:
        return str(path)
