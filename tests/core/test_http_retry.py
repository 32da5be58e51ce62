"""Retry-After: one reading for every HTTP client; never an endless wait."""

from __future__ import annotations

import email.utils

import pytest

from gate.replay.http import retry_after_s, retry_after_value


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after-ms": "soon", "retry-after": "3"}, 3.0),
        ({"retry-after": "inf"}, None),
        ({"retry-after": "nan"}, None),
        ({"retry-after-ms": "inf"}, None),
        ({"retry-after": "-5"}, 0.0),
        ({}, None),
    ],
)
def test_retry_after_s__header_forms(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after_s(headers) == expected


def test_retry_after_value__http_date__seconds_from_now() -> None:
    now = 1_700_000_000.0
    assert retry_after_value(email.utils.formatdate(now + 12, usegmt=True), now=now) == 12.0
