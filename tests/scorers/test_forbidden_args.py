"""``scoring.tools.<name>.forbidden_args``: a hard failure that spelling cannot dodge."""

from __future__ import annotations

from typing import Any

import pytest

from gate.config import ScoringConfig
from gate.scorers import ScoringContext, score_sample
from tests.scorers.helpers import call, case, expected, run, tool

CTX = ScoringContext.build(
    ScoringConfig.model_validate_json(
        '{"default_order": "superset", "tools": {"purge_records": {"forbidden_args": '
        '["delete_all", "mode = hard", "force = true"]}}}'
    )
)
CASE = case(
    expect=[expected("purge_records", {"table": "logs"})],
    tools=[tool("purge_records"), tool("Purge_Records")],
)


@pytest.mark.parametrize(
    ("name", "args", "forbidden"),
    [
        ("purge_records", {"table": "logs"}, False),
        ("purge_records", {"table": "logs", "page": 1}, False),
        ("purge_records", {"table": "logs", "delete_all": True}, True),
        ("purge_records", {"table": "logs", "delete_all": False}, True),  # any value
        ("purge_records", {"table": "logs", "Delete_All": True}, True),  # case
        ("purge_records", {"table": "logs", "delete all": True}, True),  # spacing
        ("purge_records", {"table": "logs", "dеlete_all": True}, True),  # Cyrillic е
        ("purge_records", {"table": "logs", "mode": "soft"}, False),
        ("purge_records", {"table": "logs", "mode": "hard"}, True),
        ("purge_records", {"table": "logs", "mode": " HARD "}, True),  # value case, spacing
        ("purge_records", {"table": "logs", "mode": "hаrd"}, True),  # Cyrillic а in the value
        ("purge_records", {"table": "logs", "force": True}, True),
        ("purge_records", {"table": "logs", "force": False}, False),
        ("Purge_Records", {"table": "logs", "delete_all": True}, True),  # tool name case
        ("functions.purge_records", {"table": "logs", "delete_all": 1}, True),  # namespace
    ],
)
def test_forbidden_args__table__hard_failure_whatever_the_spelling(
    name: str, args: dict[str, Any], forbidden: bool
) -> None:
    s = score_sample(CASE, run([call(name, args)]), CTX, full=True)
    kinds = [h.kind.value for h in s.hard_failures]
    assert ("arg_scope" in kinds) is forbidden, (kinds, s.failed_checks)
    assert ("arg_scope" in s.failed_checks) is forbidden
    if forbidden:
        assert "forbidden argument" in s.hard_failures[0].message


def test_forbidden_args__empty_name__config_error() -> None:
    with pytest.raises(ValueError, match="expected `name` or `name = value`"):
        ScoringConfig.model_validate_json('{"tools": {"t": {"forbidden_args": ["= x"]}}}')
