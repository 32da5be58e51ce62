"""The inputs stage, shared by every command: the config, the dataset and its pin, the
judge's inputs, the baseline, the scoring context and the redactor — each input read once,
at the edge, every problem naming its file, line and field.

======================  =======================================================
function                used by
======================  =======================================================
:func:`load_inputs`     ``run``, ``score --config``, ``check``, ``record``, ``init``
:func:`read_config`     ``merge --config``, ``report``/``comment --config``
:func:`read_config_doc` ``validate`` (which reports the config's and the dataset's
                        problems together), ``pin`` (which may fix a bad pin)
:func:`read_dataset`    ``score --dataset``, ``validate``, ``pin``
:func:`load_baseline`   ``check``, ``merge``, ``report``/``comment --baseline``
======================  =======================================================
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from gate.config import Config, NormalizeConfig, ScoringConfig, config_from_doc
from gate.dataset import Dataset, load_dataset
from gate.errors import ConfigError, Problem
from gate.model import DatasetLike, SuiteStats
from gate.pipeline.typed import stats_of
from gate.report.redact import Redactor
from gate.report.redact import redactor_for as redactor_for
from gate.results import Results, read_results
from gate.scorers import ScoringContext
from gate.scorers.context import NormalizerTable
from gate.scorers.pricing import Price, Pricing
from gate.scorers.registry import COST_METRICS, GATEABLE
from gate.yamlio import YamlDoc, load_yaml

__all__ = [
    "Baseline",
    "Inputs",
    "build_redactor",
    "load_baseline",
    "load_inputs",
    "read_config",
    "read_config_doc",
    "read_dataset",
    "redactor_for",
    "retired_problems",
    "scoring_context",
]


@dataclass(frozen=True, slots=True)
class Inputs:
    """A config and its dataset, checked against each other."""

    config: Config
    dataset: Dataset
    config_display: str


@dataclass(frozen=True, slots=True)
class Baseline:
    """The baseline's results, their statistics (what the comparison reads) and where
    they came from, in words."""

    results: Results
    stats: SuiteStats
    source: str


def read_config(config_path: Path, display: str | None = None) -> Config:
    """toolgate.yml, validated; gates may name the metrics of the registry
    (:data:`gate.scorers.registry.GATEABLE`). Every problem names file, line and field."""
    return read_config_doc(config_path, display)[0]


def read_config_doc(config_path: Path, display: str | None = None) -> tuple[Config, YamlDoc]:
    """The config and its YAML document (for the lines of later cross-checks)."""
    doc = load_yaml(config_path, display=display)
    return config_from_doc(doc, config_path, metrics=GATEABLE, cost_metrics=COST_METRICS), doc


def missing_dataset(doc: YamlDoc, path: Path, field: str = "dataset.path") -> Problem:
    """A dataset file that is not there: the config line, and the nearest file by name."""
    from gate.dataset.matchers import did_you_mean

    near = sorted(
        p.name for p in path.parent.glob("*") if p.suffix in (".jsonl", ".csv") and p.is_file()
    )
    return Problem(
        doc.file,
        doc.line_of(("dataset", "path")),
        field,
        f"no such file {rel(path)}{did_you_mean(path.name, near)}",
    )


def retired_problems(config: Config, doc: YamlDoc, dataset: DatasetLike) -> list[Problem]:
    """``dataset.retired`` against the dataset: a retired id still in it is an error (the
    entry is stale, or the id is being reused — ids never are)."""
    ids = {c.id for c in dataset.cases}
    return [
        Problem(
            doc.file,
            doc.line_of(("dataset", "retired", i, "id")),
            f"dataset.retired[{i}].id",
            f"{r.id!r} is retired, but the dataset still holds it: remove the case from the "
            "dataset, or the entry from dataset.retired (a case id is never reused)",
        )
        for i, r in enumerate(config.dataset.retired)
        if r.id in ids
    ]


def read_dataset(path: Path, display: str | None = None) -> Dataset:
    """A dataset file, validated, shown as :func:`rel` names it unless told."""
    return load_dataset(path, display=display or rel(path))


def load_inputs(
    config_path: Path,
    display: str | None = None,
    *,
    pin: bool = True,
    agent: bool = False,
    agent_python: str | None = None,
) -> Inputs:
    """Config, dataset and their cross-checks: the pin (unless ``pin`` is false: ``record``
    writes a new dataset), the judge's rubrics and calibration file, and — with ``agent``,
    for the commands that run it — whether the agent can start at all
    (:func:`gate.pipeline.preflight.agent_problems`: a missing program or script is refused
    before the first case, not recorded as every case failing). ``agent_python``: the
    interpreter of the agent's environment the Action's ``install:`` made, for a config
    that does not set ``agent.python`` (:meth:`~gate.config.Config.with_agent_python`).
    Raises :class:`~gate.errors.InputError` naming file, line and field."""
    from gate.dataset.pin import check_pin

    config, doc = read_config_doc(config_path, display=display)
    if agent_python is not None:
        config = config.with_agent_python(agent_python)
    if agent:
        from gate.pipeline.preflight import agent_problems

        problems = agent_problems(config, doc)
        if problems:
            raise ConfigError(problems)
    path = config.resolve(config.dataset.path)
    if not path.is_file():
        raise ConfigError(missing_dataset(doc, path))
    dataset = read_dataset(path)
    retired = retired_problems(config, doc, dataset)
    if retired:
        raise ConfigError(retired)
    if pin:
        check_pin(config, dataset, config_display=display)
    if config.judge is not None:
        from gate.judge import check_judge_inputs

        check_judge_inputs(config)
    return Inputs(config=config, dataset=dataset, config_display=display or rel(config_path))


def load_baseline(choice: str | None, config: Config | None) -> Baseline | None:
    """The baseline: ``choice`` is a path, ``none``, or None for the config's committed
    ``baseline.path`` (if any). Results of the previous release read too."""
    if choice is not None and choice.lower() == "none":
        return None
    if choice is not None:
        path, display, source = Path(choice), choice, f"file {choice}"
    elif config is not None and config.baseline.path:
        display = config.baseline.path
        path, source = config.resolve(display), f"committed file {display}"
    else:
        return None
    results = read_results(path, display=display)
    return Baseline(results, stats_of(results), source)


def scoring_context(
    config: Config | None, dataset: DatasetLike, *, norms: NormalizerTable | None = None
) -> ScoringContext:
    """The scorers' context for a config (defaults without one): validators compiled once;
    ``norms``, the run's normaliser cache when the runner already built it."""
    scoring = config.scoring if config is not None else ScoringConfig()
    normalize = config.dataset.normalize if config is not None else NormalizeConfig()
    budget = config.agent.step_budget if config is not None else None
    return ScoringContext.build(
        scoring,
        normalize,
        dataset.tools,
        step_budget=budget,
        norms=norms,
        pricing=pricing_of(config),
    )


def pricing_of(config: Config | None) -> Pricing | None:
    """The config's prices and the agent's model (``None`` without ``pricing``)."""
    if config is None or not config.pricing:
        return None
    model = getattr(config.agent, "model", None)
    return Pricing(
        {k: Price(p.input_per_mtok, p.output_per_mtok) for k, p in config.pricing.items()},
        model if isinstance(model, str) else None,
    )


def normalizers(config: Config) -> NormalizerTable:
    """The one per-tool normaliser cache of a run (the runner's frozen responses and the
    scorers share the same rules)."""
    return NormalizerTable.from_config(config)


def build_redactor(
    config_path: str | None, names: Iterable[str], environ: Mapping[str, str]
) -> Redactor:
    """The redactor of a command given a config file (or none) and ``--secret-env``
    names: :func:`redactor_for` of that config."""
    config = read_config(Path(config_path)) if config_path else None
    return redactor_for(config, environ, names)


def rel(path: Path) -> str:
    """How reports name a file: relative to the repository in GitHub Actions
    (``GITHUB_WORKSPACE``, so annotations point at the right file whatever the working
    directory), else to the working directory; absolute when under neither."""
    base = os.environ.get("GITHUB_WORKSPACE") or str(Path.cwd())
    try:
        return str(path.resolve().relative_to(Path(base).resolve()))
    except ValueError:
        return str(path)
