"""The ``python`` agent adapter: ``module:callable``, sync or async, in this process.

``agent.callable: "my_agent.main:run"`` (``agent.path`` folders, relative to the config,
are put first on ``sys.path``) is called once per case-sample with keyword arguments::

    run(messages=[...], tools=[...], call_tool=call_tool)      # plus seed=, case_id=,
                                                               # sample= if it accepts them

``messages`` and ``tools`` are the OpenAI chat shapes the ``command`` protocol uses.
``call_tool(name, arguments)`` (``arguments`` a dict or a JSON string) answers from the
frozen responses and returns a :class:`~gate.replay.frozen.ToolOutcome` (``.content``,
``.is_error``); for an ``async def`` callable it is a coroutine function (``await
call_tool(...)``). Each ``call_tool`` is one assistant turn; ``call_tool.batch([(name,
args), ...])`` makes one turn of parallel calls and returns their outcomes in order.
The callable returns the final answer: a string, ``None``, or ``{"content": str,
"usage": {...}}``.

**Timeouts.** ``agent.timeout_s`` bounds each *step*: the time from the start (or from the
previous ``call_tool``) to the next ``call_tool`` or the return. The callable runs in its
own thread; on a timeout the case-sample is recorded as ``timeout``, an async callable is
cancelled, and any later ``call_tool`` from an abandoned sync callable raises
:class:`AgentCancelled` (Python cannot kill a thread). An exception from the callable is
an ``exception`` error with the end of its traceback.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import queue
import sys
import threading
import traceback
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from gate.adapters.interface import PayloadError
from gate.adapters.plain import call_from_plain
from gate.config import Config, PythonAgent
from gate.errors import AgentCancelled, ConfigError, Problem
from gate.model import Run, ToolCall
from gate.replay.frozen import ToolOutcome
from gate.replay.session import AgentFailure, ErrorKind, Job, Session

_OPTIONAL_KWARGS = ("seed", "case_id", "sample")


def load_callable(
    spec: str, paths: Sequence[str], *, file: str = "toolgate.yml"
) -> Callable[..., Any]:
    """Import ``module:attr.attr`` (``paths`` first on ``sys.path``); a ConfigError
    naming ``agent.callable`` when it cannot be found or is not callable."""
    for p in reversed(paths):
        if p not in sys.path:
            sys.path.insert(0, p)
    module_name, _, attr = spec.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except Exception as exc:  # any import-time failure of user code is a config problem
        raise ConfigError(
            Problem(
                file, None, "agent.callable", f"cannot import {spec!r}: {type(exc).__name__}: {exc}"
            )
        ) from None
    if not callable(obj):
        raise ConfigError(Problem(file, None, "agent.callable", f"{spec!r} is not callable"))
    return obj  # type: ignore[no-any-return]


class PythonCallableAgent:
    """The ``python`` adapter (module docstring)."""

    kind = "python"
    max_parallel: int | None = None

    def __init__(self, config: Config, cfg: PythonAgent, fn: Callable[..., Any] | None = None):
        file = str(config.source) if config.source else "toolgate.yml"
        self._spec = cfg.callable
        self._fn = fn or load_callable(
            cfg.callable, [str(config.resolve(p)) for p in cfg.path], file=file
        )
        self._async = inspect.iscoroutinefunction(self._fn) or inspect.iscoroutinefunction(
            getattr(self._fn, "__call__", None)  # noqa: B004 - async __call__ on an object
        )
        try:
            params = inspect.signature(self._fn).parameters
            var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
            self._extra = tuple(k for k in _OPTIONAL_KWARGS if var_kw or k in params)
        except (TypeError, ValueError):
            self._extra = ()

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "callable": self._spec}

    def samples_for(self, case_id: str, samples: int) -> Sequence[int]:
        return range(samples)

    def prepare(self, jobs: int) -> None:
        return None

    def close(self) -> None:
        return None

    def run(self, job: Job, session: Session) -> Run | None:
        events: queue.Queue[tuple[str, Any]] = queue.Queue()
        cancelled = threading.Event()
        loop_box: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = []

        def turn(calls: Sequence[tuple[str, Any]]) -> list[ToolOutcome]:
            if cancelled.is_set():
                raise AgentCancelled("the case-sample already ended (timeout)")
            events.put(("step", None))
            parsed: list[ToolCall] = []
            for i, (name, args) in enumerate(calls):
                try:
                    parsed.append(call_from_plain({"name": name, "arguments": args}, f"call[{i}]"))
                except PayloadError as exc:
                    raise TypeError(f"call_tool: {exc}") from None
            results = session.answer(parsed)
            return [ToolOutcome(r.content, r.is_error) for r in results]

        call_tool: Any
        if self._async:

            async def async_call_tool(name: str, arguments: Any = None) -> ToolOutcome:
                return turn([(name, {} if arguments is None else arguments)])[0]

            async def async_batch(calls: Sequence[tuple[str, Any]]) -> list[ToolOutcome]:
                return turn(list(calls))

            async_call_tool.batch = async_batch  # type: ignore[attr-defined]
            call_tool = async_call_tool
        else:

            def sync_call_tool(name: str, arguments: Any = None) -> ToolOutcome:
                return turn([(name, {} if arguments is None else arguments)])[0]

            sync_call_tool.batch = lambda calls: turn(list(calls))  # type: ignore[attr-defined]
            call_tool = sync_call_tool

        kwargs: dict[str, Any] = {
            "messages": job.messages,
            "tools": job.tools,
            "call_tool": call_tool,
        }
        extra = {"seed": job.seed, "case_id": job.case.id, "sample": job.sample}
        kwargs.update({k: extra[k] for k in self._extra})

        def target() -> None:
            try:
                if self._async:

                    async def main() -> Any:
                        task = asyncio.ensure_future(self._fn(**kwargs))
                        loop_box.append((asyncio.get_running_loop(), task))
                        return await task

                    value = asyncio.run(main())
                else:
                    value = self._fn(**kwargs)
                    if inspect.isawaitable(value):
                        value = asyncio.run(_await(value))
                events.put(("done", value))
            except AgentCancelled:
                return
            except AgentFailure as failure:  # e.g. the step budget, raised by call_tool
                events.put(("failure", failure))
            except BaseException as exc:
                events.put(("raised", exc))

        thread = threading.Thread(
            target=target, daemon=True, name=f"agent:{job.case.id}#{job.sample}"
        )
        thread.start()
        step = 1
        try:
            while True:
                try:
                    kind, value = events.get(timeout=job.step_timeout())
                except queue.Empty:
                    raise AgentFailure(
                        ErrorKind.TIMEOUT,
                        f"the callable did not call a tool or return within "
                        f"{job.timeout_s:.3g}s (step {step})",
                    ) from None
                if kind == "step":
                    step += 1
                    continue
                if kind == "done":
                    if session.failure is not None:  # the agent caught it and went on
                        raise session.failure
                    self._final(value, session)
                    return None
                if kind == "failure":
                    raise value
                exc = value
                tb = "".join(traceback.format_exception(exc)).rstrip().splitlines()[-12:]
                raise AgentFailure(
                    ErrorKind.EXCEPTION,
                    f"the callable raised {type(exc).__name__}: {exc}",
                    detail="\n".join(tb),
                )
        except AgentFailure:
            cancelled.set()
            session.close()
            for loop, task in loop_box:
                loop.call_soon_threadsafe(task.cancel)
            raise

    @staticmethod
    def _final(value: Any, session: Session) -> None:
        if value is None or isinstance(value, str):
            session.final = value
            return
        if isinstance(value, Mapping):
            content = value.get("content", value.get("final"))
            if content is not None and not isinstance(content, str):
                raise AgentFailure(ErrorKind.PROTOCOL, "the returned content must be a string")
            session.final = content
            session.add_usage(value.get("usage"))
            return
        raise AgentFailure(
            ErrorKind.PROTOCOL,
            f"the callable returned {type(value).__name__}; return a string, None or "
            '{"content": ..., "usage": ...}',
        )


async def _await(value: Awaitable[Any]) -> Any:
    return await value
