"""Fuzzing, the fast subset: a few hundred adversarial inputs per reader in every test run.

The full count (10,000 per reader) is ``tests/slow/test_fuzz_full.py`` (``pytest -m slow
tests/slow``). Both draw from the same derandomized strategies
(:mod:`tests.reliability.targets`), so a failure reproduces on every machine.
"""

from __future__ import annotations

import pytest

from tests.reliability.fuzzing import memoised_tool_parser, run_target
from tests.reliability.targets import all_targets

EXAMPLES = 200
"""Inputs per reader in the normal run."""
CLI_SAMPLES = 1
"""Of those that were input errors, how many also go through the CLI as a subprocess."""

TARGETS = all_targets()


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_fuzz__every_input__valid_or_input_error_naming_file_line_field(name: str) -> None:
    with memoised_tool_parser():
        counts = run_target(TARGETS[name], examples=EXAMPLES, cli_samples=CLI_SAMPLES)
    assert counts["inputs"] >= EXAMPLES // 2, counts
    # A target that never produces one of the two outcomes is not exploring both sides.
    assert counts["input_error"] > 0 and counts["valid"] > 0, counts
