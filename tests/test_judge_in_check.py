"""The judge inside ``toolgate check``: its scores land under ``judge`` and in the
comment's "reported, not gating" section, and an outage changes neither the verdict nor
the exit code."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from gate.pipeline import CheckOptions, CheckOutcome, check
from tests.servers.openai_server import FakeOpenAIServer, Response, chat_completion

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "support-agent"


def _check_with_judge(tmp_path: Path, base_url: str, config: str) -> CheckOutcome:
    work = tmp_path / "example"
    if not work.exists():
        shutil.copytree(EXAMPLE, work)
    cfg = work / f"judged.{config}"
    cfg.write_text(
        (work / config).read_text() + f"\njudge:\n  model: judge-model\n  base_url: {base_url}\n"
        "  api_key_env: ''\n  max_evaluations: 10\n  timeout_s: 2\n  max_retries: 0\n"
    )
    return check(
        CheckOptions(config_path=cfg, out=tmp_path / f"out-{config}", baseline="none",
                     progress=False),
        {},
        io.StringIO(),
    )  # fmt: skip


def _answer(_request: object, _index: int) -> Response:
    content = json.dumps({"label": "appropriate", "reason": "the right tool"})
    return Response(body=chat_completion(content=content))


@pytest.mark.parametrize(("config", "code"), [("toolgate.yml", 0), ("toolgate.regressed.yml", 1)])
def test_check__judge_answers__reported_not_gating(tmp_path: Path, config: str, code: int) -> None:
    with FakeOpenAIServer(_answer) as server:
        outcome = _check_with_judge(tmp_path, server.base_url, config)
    assert outcome.exit_code == code
    judge = outcome.results.judge
    assert judge is not None and judge["gating"] is False
    assert judge["status"] == "partial", "10 of 213 case-samples judged: the budget"
    assert judge["evaluations"]["judged"] == 10
    assert "tool_appropriateness" in judge["rubrics"]
    comment = (outcome.out / "comment.md").read_text()
    assert "not gating" in comment


def test_check__judge_outage__same_verdict_and_exit_code(tmp_path: Path) -> None:
    with FakeOpenAIServer(lambda _r, _i: Response(status=500, body={"error": "down"})) as srv:
        down = _check_with_judge(tmp_path, srv.base_url, "toolgate.yml")
    plain = check(
        CheckOptions(config_path=EXAMPLE / "toolgate.yml", out=tmp_path / "plain",
                     baseline="none", progress=False),
        {},
        io.StringIO(),
    )  # fmt: skip
    assert down.exit_code == plain.exit_code == 0
    assert down.results.verdict is not None and plain.results.verdict is not None
    assert down.results.verdict.passed == plain.results.verdict.passed
    assert down.results.judge is not None
    assert down.results.judge["status"] in {"unavailable", "degraded"}
    assert down.results.judge["notices"], "the outage is reported"


def test_check__judge_notice_and_seeding__each_runs_line_parsed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The score stage reads and converts every line of the runs file; the judge, the
    notice of calls without a recorded response and the seeding of the base history take
    what it read (runs, calls, the lines' bytes), never parsing a line again."""
    from collections import Counter

    from gate import runsfile
    from gate.pipeline import _scorepool

    parsed: Counter[tuple[str, int]] = Counter()

    def counting(real):  # type: ignore[no-untyped-def]
        def parse(line: bytes | str, *, file: str, lineno: int) -> object:
            parsed[(file, lineno)] += 1
            return real(line, file=file, lineno=lineno)

        return parse

    monkeypatch.setattr(_scorepool, "decode_run_line", counting(_scorepool.decode_run_line))
    monkeypatch.setattr(runsfile, "parse_run_line", counting(runsfile.parse_run_line))
    monkeypatch.setenv("TOOLGATE_SCORE_WORKERS", "1")  # the counter sees every parse
    work = tmp_path / "example"
    shutil.copytree(EXAMPLE, work)
    cfg = work / "judged.yml"
    with FakeOpenAIServer(_answer) as server:
        cfg.write_text(
            (work / "toolgate.yml").read_text() + f"\njudge:\n  model: judge-model\n"
            f"  base_url: {server.base_url}\n  api_key_env: ''\n  max_evaluations: 10\n"
        )
        outcome = check(
            CheckOptions(config_path=cfg, out=tmp_path / "out", baseline="none",
                         progress=False, base_run=True),
            {"TOOLGATE_SCORE_WORKERS": "1"},
            io.StringIO(),
        )  # fmt: skip
    assert outcome.results.judge is not None and outcome.results.judge["evaluations"]["judged"]
    assert any("no recorded response" in n for n in outcome.results.notices)
    seeded = (tmp_path / "out" / "sequential" / "runs.jsonl").read_bytes().splitlines()
    assert seeded, "the base history was seeded from this run's lines"
    lines = (tmp_path / "out" / "runs.jsonl").read_bytes().splitlines()
    main = {n: k for (f, n), k in parsed.items() if "sequential" not in f}
    assert len(lines) == len(main) > 0
    assert set(main.values()) == {1}, "a line of the runs file was parsed more than once"
    assert seeded[0] in set(lines), "the seeds are the run's own lines, byte for byte"
