"""The prices of tokens (the config's ``pricing``): what the ``cost`` metric
(:mod:`gate.scorers.usage`) charges each sample, by its model."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DEFAULT_PRICE = "default"
"""The ``pricing`` key for an agent whose model ToolGate does not know."""


@dataclass(frozen=True, slots=True)
class Price:
    """Dollars (or any currency) per million input and output tokens."""

    input_per_mtok: float
    output_per_mtok: float


@dataclass(frozen=True, slots=True)
class Pricing:
    """The config's ``pricing`` (model name or glob → price; ``default``) and the agent's
    configured model."""

    prices: Mapping[str, Price]
    model: str | None = None

    def price_for(self, model: str | None) -> Price | None:
        """The price of ``model``: its own key, else the first glob that matches it (in
        the config's order), else ``default``; ``None`` when nothing applies."""
        if model is not None:
            exact = self.prices.get(model)
            if exact is not None:
                return exact
            for pattern, price in self.prices.items():
                if pattern != DEFAULT_PRICE and fnmatch.fnmatchcase(model, pattern):
                    return price
        return self.prices.get(DEFAULT_PRICE)

    def price_of_run(self, meta: Mapping[str, Any] | None) -> Price | None:
        """The price of one run: the model its request named, else the agent's."""
        model = self.model
        request = meta.get("request") if isinstance(meta, Mapping) else None
        if isinstance(request, Mapping) and isinstance(request.get("model"), str):
            model = request["model"]
        return self.price_for(model)
