"""Fuzzing, the full count: 10,000 adversarial inputs per reader (``pytest -m slow tests/slow``).

The same targets and oracle as the fast subset (``tests/reliability/test_fuzz.py``); each
reader's inputs are drawn by :data:`SHARDS` processes with fixed seeds (reproducible, and
both cores busy), and a sample of the refused inputs goes through the real CLI.
Measured on 2 cores: see ``docs/reliability.md``.
"""

from __future__ import annotations

import multiprocessing
import os
import traceback
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

import pytest

from tests.reliability.fuzzing import FIGURES, memoised_tool_parser, run_target
from tests.reliability.targets import all_targets

EXAMPLES = int(os.environ.get("TOOLGATE_FUZZ_EXAMPLES", "10000"))
"""Inputs per reader (the environment variable is for measuring with fewer)."""
SHARDS = 2
"""Processes per reader, each drawing EXAMPLES / SHARDS inputs with its own fixed seed."""
CLI_SAMPLES = 10
"""Refused inputs per shard that also go through the CLI (a subprocess each)."""
SEED = 20_260_301

NAMES = sorted(all_targets())


def _shard(name: str, examples: int, seed: int, cli: int) -> tuple[dict[str, int], str | None]:
    import warnings

    warnings.simplefilter("error")  # as pytest's filterwarnings = error
    try:
        with memoised_tool_parser():
            counts = run_target(all_targets()[name], examples=examples, cli_samples=cli, seed=seed)
        return dict(counts), None
    except BaseException:
        return dict(FIGURES.get(name, Counter())), traceback.format_exc()


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_fuzz_full__every_input__valid_or_input_error_naming_file_line_field(name: str) -> None:
    per = EXAMPLES // SHARDS
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=SHARDS, mp_context=ctx) as pool:
        futures = [
            pool.submit(_shard, name, per, SEED + i * 7919, CLI_SAMPLES) for i in range(SHARDS)
        ]
        results = [f.result() for f in futures]
    total = FIGURES.setdefault(name, Counter())
    for counts, _ in results:
        total.update(counts)
    failures = [err for _, err in results if err]
    assert not failures, failures[0]
    assert total["inputs"] >= EXAMPLES, total
    assert total["input_error"] > 0 and total["valid"] > 0, total
