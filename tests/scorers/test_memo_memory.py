"""The scorers' memos keep their keys at the size of their JSON text.

orjson's ``bytes`` each hold a 4 KiB buffer however short the JSON: a validator's memo of
4,096 arguments and the run memo of 2,000 views held tens of megabytes in every scoring
worker (at 1,000,000 case-samples a worker's peak fell from 980 to 860 MB with ``str``
keys). Measured with ``tracemalloc``: what the memos keep, per key."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable

from gate.pipeline._scorepool import Memo
from gate.scorers.schema import ArgsValidator

_SCHEMA = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}, "n": {"type": "integer"}},
    "required": ["order_id"],
}


def _kept_per_call(fill: Callable[[int], object], n: int) -> float:
    kept = []
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(n):
            kept.append(fill(i))
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return (after - before) / n


def test_validator_memo__thousands_of_arguments__a_few_hundred_bytes_each() -> None:
    v = ArgsValidator(_SCHEMA)
    per = _kept_per_call(lambda i: v.error({"order_id": f"ord_{i:05d}", "n": i}), 3000)
    assert per < 600, f"{per:.0f} bytes kept per remembered argument (4 KiB per orjson bytes)"
    assert v.error({"order_id": 1}) is not None  # still answers from the memo's misses


def test_run_memo__thousands_of_views__a_few_hundred_bytes_each() -> None:
    def key(i: int) -> object:
        return Memo.key_of_json(
            {"case_id": "c", "turns": [{"calls": [{"name": "t", "arguments": {"n": i}}]}]}
        )

    per = _kept_per_call(key, 3000)
    assert per < 1500, f"{per:.0f} bytes kept per run memo key"
    assert key(1) == key(1) and key(1) != key(2)
