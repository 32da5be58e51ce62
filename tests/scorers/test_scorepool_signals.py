"""Forked scoring workers die on SIGTERM (Pool.terminate relies on it), even though the
CLI turns SIGTERM into an exception in the parent: otherwise terminate() could wait for a
worker forever (a hang seen about once in ten parallel `toolgate score` runs)."""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Iterator

import pytest

from gate.pipeline import _scorepool as scorepool


def _sigterm_is_default() -> bool:
    return signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def _raise(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@pytest.fixture
def cli_sigterm_handler() -> Iterator[None]:
    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@pytest.mark.usefixtures("cli_sigterm_handler")
def test_worker_init__parent_handles_sigterm__worker_restores_default() -> None:
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1, initializer=scorepool._worker_init) as pool:
        assert pool.apply(_sigterm_is_default) is True
    # (Without the initializer the worker would keep the parent's raising handler — the
    # trap itself, not exercised here since it is the hang this test guards against.)
