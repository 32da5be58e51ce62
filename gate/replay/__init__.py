"""The runner: drive the agent under test on every case × sample, with frozen tools.

* :mod:`gate.replay.frozen` — the tool seam (``ToolBackend``) and its replay, recording
  and function backends;
* :mod:`gate.replay.session` — one case-sample in flight (turns, budget, error kinds);
* agent adapters: :mod:`~gate.replay.replay_agent`, :mod:`~gate.replay.command`,
  :mod:`~gate.replay.python_agent` (its workers: :mod:`~gate.replay.python_worker`),
  :mod:`~gate.replay.openai_agent`, :mod:`~gate.replay.mcp`
  (:func:`gate.replay.interface.build_agent` builds the one the agent's kind names:
  :mod:`gate.agents`);
* :mod:`gate.replay.runner` — :func:`run_all`: plan, shard, concurrency, deadline,
  resume, progress, ``runs.jsonl``;
* :mod:`gate.replay.record` — ``toolgate record``: freeze real tool responses.
"""
