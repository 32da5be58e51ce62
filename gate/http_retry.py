"""How long an HTTP server asks us to wait before retrying (``Retry-After``).

One reading for every client ToolGate has (the OpenAI-compatible agent loop, the judge):
``retry-after-ms`` (milliseconds, sent by OpenAI-style APIs) first, then ``Retry-After``
as delta-seconds or an HTTP date. Anything unreadable or not finite is "not said" (None),
never an endless wait; callers still cap the wait by their own deadline.
"""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Mapping


def retry_after_value(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from one ``Retry-After`` value (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


def retry_after_s(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds the server asks us to wait, from its headers, or None when it does not say."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        seconds = retry_after_value(ms)
        if seconds is not None:
            return seconds / 1000
    return retry_after_value(headers.get("retry-after"), now=now)
