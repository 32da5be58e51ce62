"""A tool's effect: read, write or irreversible (docs/scoring.md, "Judging effects", lists
the sources in the order they decide), and whether it is idempotent.

:func:`effect_of` is the one place an effect is decided; :func:`idempotent_of` says
whether calling a tool again with the same arguments changes nothing more. How a case is
judged by the writes the tools made: :mod:`gate.scorers.writes`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gate.model import Effect
from gate.scorers.rules import name_skeleton

if TYPE_CHECKING:
    from gate.config import ScoringConfig, ToolScoringConfig

__all__ = [
    "declared_effect",
    "effect_from_annotations",
    "effect_of",
    "idempotent_of",
]


def effect_from_annotations(annotations: Mapping[str, Any] | None) -> Effect | None:
    """The effect MCP's tool annotations say, or ``None`` when they say none.

    ``readOnlyHint: true`` is a read. Otherwise a ``destructiveHint`` or a
    ``readOnlyHint: false`` says the tool writes: ``destructiveHint: false`` (additive
    updates only) is a write; ``destructiveHint: true`` — and, by MCP's defaults, a
    ``readOnlyHint: false`` without it — is irreversible. Annotations without either hint
    (a ``title`` alone) say nothing."""
    if not annotations:
        return None
    read_only = annotations.get("readOnlyHint")
    destructive = annotations.get("destructiveHint")
    if read_only is True:
        return Effect.READ
    if destructive is False:
        return Effect.WRITE
    if destructive is True or read_only is False:
        return Effect.IRREVERSIBLE
    return None


def _configured(name: str, config: ScoringConfig) -> ToolScoringConfig | None:
    cfg = config.tools.get(name)
    if cfg is not None:
        return cfg
    skel = name_skeleton(name)
    for other, c in config.tools.items():
        if name_skeleton(other) == skel:
            return c
    return None


def declared_effect(
    name: str, annotations: Mapping[str, Any] | None, config: ScoringConfig
) -> Effect | None:
    """The effect the sources give (module docstring, 1–3), or ``None`` when none does."""
    cfg = _configured(name, config)
    if cfg is not None and "risk" in cfg.model_fields_set:
        return cfg.risk
    said = effect_from_annotations(annotations)
    if said is not None:
        return said
    return config.default_effect


def effect_of(name: str, annotations: Mapping[str, Any] | None, config: ScoringConfig) -> Effect:
    """The tool's effect (module docstring): a tool nothing describes is a write."""
    said = declared_effect(name, annotations, config)
    return Effect.WRITE if said is None else said


def idempotent_of(name: str, annotations: Mapping[str, Any] | None, config: ScoringConfig) -> bool:
    """Whether calling the tool again with the same arguments changes nothing more: the
    config's ``scoring.tools.<name>.idempotent``, else MCP's ``idempotentHint``, else not."""
    cfg = _configured(name, config)
    if cfg is not None and cfg.idempotent is not None:
        return cfg.idempotent
    return bool(annotations) and annotations.get("idempotentHint") is True  # type: ignore[union-attr]
