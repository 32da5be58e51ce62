"""The known traps of issue 9, one named test each, through the real entry points.

JSON (Python's ``json`` accepts ``NaN``/``Infinity`` and duplicate keys and raises
``RecursionError`` on deep nesting — and, found here, decodes ``1e400`` to ``inf``,
integers no writer can encode, and lone surrogates ``"\\ud800"`` that crash every later
``orjson`` write), YAML (tags, alias bombs, YAML 1.2's ``no``), ``@file`` references that
leave the repository, catastrophic regular expressions, and PyGithub's unbounded
rate-limit wait.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from gate import jsonio
from gate.config import load_config
from gate.dataset import load_dataset
from gate.errors import ConfigError, DatasetError, ResultsFileError, RunsFileError
from gate.model import Run, ToolCall, Turn
from gate.results import read_results
from gate.runsfile import RunsWriter, read_runs
from gate.scorers import ScoringContext, score_sample
from tests.reliability import helpers as h

# ─── JSON ─────────────────────────────────────────────────────────────────────

NON_FINITE = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1.5e999"]


@pytest.mark.parametrize("number", NON_FINITE)
def test_dataset__non_finite_number__refused_at_its_line(tmp_path: Path, number: str) -> None:
    rows = h.jsonl_bytes(h.cases(2)).decode().splitlines()
    rows.append(json.dumps(h.case(id="nan-1")).replace('"tol": 0.01', f'"tol": {number}'))
    (tmp_path / "d.jsonl").write_text("\n".join(rows) + "\n")
    with pytest.raises(DatasetError) as info:
        load_dataset(tmp_path / "d.jsonl", display="d.jsonl")
    h.check_input_error(info.value, files=["d.jsonl"], lines=True)
    assert [p.line for p in info.value.problems] == [3]


@pytest.mark.parametrize("number", NON_FINITE)
def test_runs__non_finite_number__refused_at_its_line(tmp_path: Path, number: str) -> None:
    good = '{"case_id": "a", "sample": 0, "turns": [], "latency_ms": 5}\n'
    bad = f'{{"case_id": "a", "sample": 1, "turns": [], "latency_ms": {number}}}\n'
    (tmp_path / "runs.jsonl").write_text(good + bad)
    with pytest.raises(RunsFileError) as info:
        read_runs(tmp_path / "runs.jsonl", display="runs.jsonl")
    assert info.value.problems[0].line == 2


def test_runs__overflowing_argument_number__never_becomes_infinity(tmp_path: Path) -> None:
    # The arguments string of a call is model output: 1e400 in it must not decode to inf
    # (orjson would write it back as null): the call is unparseable, and scored as such.
    line = {
        "case_id": "a",
        "sample": 0,
        "turns": [{"calls": [{"name": "issue_refund", "arguments": '{"amount": 1e400}'}]}],
    }
    (tmp_path / "runs.jsonl").write_text(json.dumps(line) + "\n")
    [(_, run)] = read_runs(tmp_path / "runs.jsonl")
    call = run.calls[0]
    assert call.parse_ok is False and call.arguments is None
    assert call.raw_arguments == '{"amount": 1e400}'


@pytest.mark.parametrize(
    "where",
    ["top", "nested-args", "tool-schema"],
)
def test_dataset__duplicate_key__refused_not_last_wins(tmp_path: Path, where: str) -> None:
    text = json.dumps(h.case())
    if where == "top":
        text = text.replace('"id": "refund-001"', '"id": "refund-001", "id": "other"')
    elif where == "nested-args":
        text = text.replace(
            '"order_id": "ord_10482"}', '"order_id": "ord_10482", "order_id": 1}', 1
        )
    else:
        text = text.replace('"required": ["customer_id"]', '"required": [], "required": ["x"]')
    (tmp_path / "d.jsonl").write_text(text + "\n")
    with pytest.raises(DatasetError, match="duplicate key") as info:
        load_dataset(tmp_path / "d.jsonl", display="d.jsonl")
    h.check_input_error(info.value, files=["d.jsonl"], lines=True)
    assert info.value.problems[0].line == 1


def test_results__duplicate_key__refused(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text('{"schema_version": 1, "schema_version": 1}')
    with pytest.raises(ResultsFileError, match="duplicate key 'schema_version'"):
        read_results(tmp_path / "r.json")


@pytest.mark.parametrize("levels", [65, 900, 990, 5_000, 200_000])
@pytest.mark.parametrize("kind", ["[", '{"a":'])
def test_deep_nesting__every_reader__input_error_not_recursion_error(
    tmp_path: Path, levels: int, kind: str
) -> None:
    """The C decoder accepts ~900 levels that a recursive walk in Python then cannot
    measure (a RecursionError, found by this suite); far deeper ones fail in the
    decoder itself. Both must end as input errors."""
    close = "]" if kind == "[" else "}"
    deep = kind * levels + "1" + close * levels
    # the dataset: the deep value in a column
    (tmp_path / "d.jsonl").write_text('{"id": "x", "user_input": "hi", "notes": ' + deep + "}\n")
    with pytest.raises(DatasetError, match="nesting deeper") as info:
        load_dataset(tmp_path / "d.jsonl", display="d.jsonl")
    assert info.value.problems[0].line == 1
    # runs.jsonl
    (tmp_path / "runs.jsonl").write_text(
        '{"case_id": "a", "sample": 0, "turns": [], "meta": ' + deep + "}\n"
    )
    with pytest.raises(RunsFileError, match="nesting deeper"):
        read_runs(tmp_path / "runs.jsonl")
    # results.json (a baseline; it may nest up to 128 levels)
    (tmp_path / "r.json").write_text('{"agent": ' + deep + "}")
    with pytest.raises(ResultsFileError, match="nesting deeper" if levels > 127 else "required"):
        read_results(tmp_path / "r.json")

    # and the strict decoder itself, from a deep call stack
    def at_depth(n: int) -> None:
        if n:
            return at_depth(n - 1)
        with pytest.raises(jsonio.JsonInputError):
            jsonio.loads_strict(deep)
        return None

    at_depth(200)


def test_deep_nesting__model_arguments__a_parse_failure_not_a_crash() -> None:
    deep = "[" * 950 + "]" * 950
    from gate.runsfile import decode_arguments

    assert decode_arguments('{"a": ' + deep + "}") == (None, '{"a": ' + deep + "}", False)


@pytest.mark.parametrize(
    ("literal", "why"),
    [
        ("123456789012345678901234567890", "out of range"),
        ("-9223372036854775809", "out of range"),
        ("18446744073709551616", "out of range"),
        ('"\\ud800"', "surrogate"),
        ('"abc\\udfff"', "surrogate"),
    ],
)
def test_dataset__value_no_writer_can_encode__refused_at_line(
    tmp_path: Path, literal: str, why: str
) -> None:
    """orjson (every writer: runs.jsonl, results.json, hashes) raises TypeError on
    integers beyond 64 bits and on lone surrogates; they are input errors at the door."""
    text = json.dumps(h.case()).replace('"total": 59.9', f'"total": {literal}')
    (tmp_path / "d.jsonl").write_text(json.dumps(h.no_tool_case()) + "\n" + text + "\n")
    with pytest.raises(DatasetError, match=why) as info:
        load_dataset(tmp_path / "d.jsonl", display="d.jsonl")
    assert info.value.problems[0].line == 2


def test_limits_of_64_bit_integers__accepted_and_written_back(tmp_path: Path) -> None:
    for literal in ("18446744073709551615", "-9223372036854775808"):
        value = jsonio.loads_strict(literal)
        assert jsonio.dumps(value).decode() == literal


def test_paired_surrogate_escape__decodes_to_the_character() -> None:
    assert jsonio.loads_strict('"\\ud83d\\ude00"') == "\U0001f600"


def test_runs__lone_surrogate_in_model_arguments__scored_as_parse_failure_and_written(
    tmp_path: Path,
) -> None:
    """A model that emits ``"\\ud800"`` inside its arguments string: the call keeps
    parse_ok false, and the run can still be written back (the runs file round-trips)."""
    args = '{"order_id": "\\ud800"}'
    line = {
        "case_id": "refund-001",
        "sample": 0,
        "turns": [{"calls": [{"name": "lookup_order", "arguments": args}]}],
    }
    (tmp_path / "runs.jsonl").write_text(json.dumps(line) + "\n")
    [(_, run)] = read_runs(tmp_path / "runs.jsonl")
    assert run.calls[0].parse_ok is False
    with RunsWriter(tmp_path / "again.jsonl") as w:
        w.write(run)
    [(_, again)] = read_runs(tmp_path / "again.jsonl")
    assert again == run


# ─── YAML ─────────────────────────────────────────────────────────────────────


def _config(tmp_path: Path, text: str) -> Path:
    (tmp_path / "dataset.jsonl").write_bytes(h.jsonl_bytes(h.cases(2)))
    path = tmp_path / "toolgate.yml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "tagged",
    [
        "!!python/object/apply:os.system ['touch pwned']",
        "!!python/object/new:subprocess.Popen [['touch', 'pwned']]",
        "!!python/name:os.system",
        "!include /etc/passwd",
        "!!binary aGVsbG8=",
        "!!set {a, b}",
        "!!omap [a: 1]",
        "!!timestamp 2024-01-01",
        "!Ref secret",
    ],
)
def test_config__yaml_tag__refused_with_line_and_nothing_runs(tmp_path: Path, tagged: str) -> None:
    path = _config(tmp_path, h.config_yaml() + f"seed: {tagged}\n")
    with pytest.raises(ConfigError, match="is not allowed") as info:
        load_config(path, display="toolgate.yml")
    h.check_input_error(info.value, files=["toolgate.yml"], lines=True)
    assert info.value.problems[0].line == 7
    assert not (tmp_path / "pwned").exists()
    assert not Path("pwned").exists()


def test_config__alias_bomb__refused_fast_without_expanding(tmp_path: Path) -> None:
    bomb = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i, name in enumerate("bcdefghi"):
        prev = "abcdefghi"[i]
        bomb.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    text = h.config_yaml() + "scoring:\n  free_text:\n" + "".join(f"    {line}\n" for line in bomb)
    path = _config(tmp_path, text)
    t0 = time.perf_counter()
    with pytest.raises(ConfigError, match="alias bomb") as info:
        load_config(path, display="toolgate.yml")
    assert time.perf_counter() - t0 < 5
    h.check_input_error(info.value, files=["toolgate.yml"], lines=True)


@pytest.mark.parametrize("word", ["no", "yes", "off", "on", "n", "y", "No", "NO", "0", "1", "''"])
@pytest.mark.parametrize(
    "where",
    [
        ("reporting", "comment"),
        ("reporting", "annotations"),
        ("dataset.normalize", "case"),
        ("scoring", "order_matters_for_iou"),
    ],
)
def test_config__yaml_1_2_non_boolean_word__refused_for_boolean_field(
    tmp_path: Path, word: str, where: tuple[str, str]
) -> None:
    section, key = where
    if section == "dataset.normalize":
        text = (
            "name: reliability\ndataset:\n  path: dataset.jsonl\n  normalize:\n"
            f"    {key}: {word}\nagent:\n  kind: replay\n  runs: runs.jsonl\n"
        )
        line, field = 5, f"dataset.normalize.{key}"
    else:
        text = h.config_yaml() + f"{section}:\n  {key}: {word}\n"
        line, field = 8, f"{section}.{key}"
    path = _config(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path, display="toolgate.yml")
    h.check_input_error(info.value, files=["toolgate.yml"], lines=True, expect=(line, field))
    assert "true or false" in info.value.render()


def test_config__real_booleans__accepted(tmp_path: Path) -> None:
    path = _config(
        tmp_path, h.config_yaml() + "reporting:\n  comment: false\n  annotations: true\n"
    )
    cfg = load_config(path)
    assert cfg.reporting.comment is False and cfg.reporting.annotations is True


# ─── @file references ─────────────────────────────────────────────────────────


def _tools_file(path: Path) -> None:
    path.write_text(json.dumps(h.TOOLS))


@pytest.mark.parametrize(
    "ref",
    [
        "@../outside.json",
        "@../../outside.json",
        "@sub/../../outside.json",
        "@/etc/passwd",
        "@//etc/passwd",
        "@C:\\Windows\\win.ini",
        "@C:/x.json",
        "@",
    ],
)
def test_at_file__escaping_the_dataset_folder__refused_at_line(tmp_path: Path, ref: str) -> None:
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    _tools_file(tmp_path / "outside.json")
    row = h.case(available_tools=ref)
    (repo / "d.jsonl").write_text(json.dumps(h.no_tool_case()) + "\n" + json.dumps(row) + "\n")
    with pytest.raises(DatasetError) as info:
        load_dataset(repo / "d.jsonl", display="d.jsonl")
    h.check_input_error(info.value, files=["d.jsonl"], lines=True, expect=(2, "available_tools"))
    assert "outside.json" not in "".join(str(f) for f in info.value.problems if "sha" in str(f))


def test_at_file__csv_reference_escaping__refused_at_line(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _tools_file(tmp_path / "outside.json")
    rows = [h.no_tool_case(), h.case(available_tools="@../outside.json")]
    (repo / "d.csv").write_bytes(h.csv_bytes(rows))
    with pytest.raises(DatasetError) as info:
        load_dataset(repo / "d.csv", display="d.csv")
    h.check_input_error(info.value, files=["d.csv"], lines=True, expect=(3, "available_tools"))


@pytest.mark.parametrize("link", ["file", "dir", "chain"])
def test_at_file__symlink_leaving_the_folder__refused(tmp_path: Path, link: str) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    _tools_file(outside / "tools.json")
    if link == "file":
        (repo / "tools.json").symlink_to(outside / "tools.json")
        ref = "@tools.json"
    elif link == "dir":
        (repo / "shared").symlink_to(outside, target_is_directory=True)
        ref = "@shared/tools.json"
    else:
        (repo / "a.json").symlink_to(repo / "b.json")
        (repo / "b.json").symlink_to(outside / "tools.json")
        ref = "@a.json"
    (repo / "d.jsonl").write_text(json.dumps(h.case(available_tools=ref)) + "\n")
    with pytest.raises(DatasetError, match="outside") as info:
        load_dataset(repo / "d.jsonl", display="d.jsonl")
    h.check_input_error(info.value, files=["d.jsonl"], lines=True, expect=(1, "available_tools"))


def test_at_file__symlink_inside_the_folder__followed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "tools").mkdir(parents=True)
    _tools_file(repo / "tools" / "v2.json")
    (repo / "tools.json").symlink_to(repo / "tools" / "v2.json")
    (repo / "d.jsonl").write_text(json.dumps(h.case(available_tools="@tools.json")) + "\n")
    ds = load_dataset(repo / "d.jsonl")
    assert sorted(ds.tools) == sorted(
        t.get("function", t)["name"]
        for t in h.TOOLS  # type: ignore[index]
    )


def test_at_file__special_file_inside_the_folder__refused_without_reading(tmp_path: Path) -> None:
    """A FIFO named like a tools file would block a reader forever."""
    repo = tmp_path / "repo"
    repo.mkdir()
    os.mkfifo(repo / "tools.json")
    (repo / "d.jsonl").write_text(json.dumps(h.case(available_tools="@tools.json")) + "\n")
    t0 = time.perf_counter()
    with pytest.raises(DatasetError) as info:
        load_dataset(repo / "d.jsonl", display="d.jsonl")
    assert time.perf_counter() - t0 < 5
    h.check_input_error(info.value, files=["d.jsonl"], lines=True, expect=(1, "available_tools"))


def test_at_file__wider_root__allows_sibling_but_not_beyond(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    _tools_file(repo / "tools.json")
    _tools_file(tmp_path / "beyond.json")
    (repo / "data" / "d.jsonl").write_text(
        json.dumps(h.case(available_tools="@../tools.json")) + "\n"
    )
    assert len(load_dataset(repo / "data" / "d.jsonl", root=repo)) == 1
    (repo / "data" / "e.jsonl").write_text(
        json.dumps(h.case(available_tools="@../../beyond.json")) + "\n"
    )
    with pytest.raises(DatasetError, match="outside"):
        load_dataset(repo / "data" / "e.jsonl", root=repo)


# ─── catastrophic regular expressions ─────────────────────────────────────────

EVIL = [
    # catastrophic for stdlib `re`
    (r"^(a+)+$", "a" * 40 + "!"),
    (r"^(\w+\s?)*$", "a" * 40 + "!"),
    # catastrophic for the `regex` module too
    (r"^(a|a)*$", "a" * 40 + "!"),
    (r"^(a|aa)+$", "a" * 60 + "!"),
]


def _score(case_row: dict[str, object], args: dict[str, object], tmp_path: Path) -> float:
    (tmp_path / "d.jsonl").write_text(json.dumps(case_row) + "\n")
    ds = load_dataset(tmp_path / "d.jsonl")
    ctx = ScoringContext.build(None, None, ds.tools)
    c = ds.cases[0]
    call = ToolCall(name=c.expected_tool_calls[0].name, arguments=args, id="c1")
    run = Run(case_id=c.id, sample=0, turns=(Turn(calls=(call,)),), final="done")
    t0 = time.perf_counter()
    for _ in range(3):
        score = score_sample(c, run, ctx)
    assert score.passed is False
    return time.perf_counter() - t0


@pytest.mark.parametrize(("pattern", "text"), EVIL)
def test_regex_matcher__catastrophic_pattern__finishes_fast(
    tmp_path: Path, pattern: str, text: str
) -> None:
    row = h.case(
        expected_tool_calls=[{"name": "search_kb", "args": {"query": {"$regex": pattern}}}],
        order=...,
        tool_responses=...,
    )
    assert _score(row, {"query": text}, tmp_path) < 2.0


@pytest.mark.parametrize(("pattern", "text"), EVIL)
def test_tool_schema_pattern__catastrophic_on_model_argument__finishes_fast(
    tmp_path: Path, pattern: str, text: str
) -> None:
    """A tool schema's ``pattern`` runs on what the model wrote: stdlib ``re`` (inside
    jsonschema and the fast path) took hours on ``^(a+)+$`` (found by this suite)."""
    tools = [
        {
            "name": "search_kb",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string", "pattern": pattern}},
            },
        },
        {
            "name": "tagged",
            "parameters": {
                "type": "object",
                "patternProperties": {pattern: {"type": "string"}},
                "additionalProperties": False,
            },
        },
    ]
    row = h.case(
        available_tools=tools,
        must_not_call=...,
        order=...,
        tool_responses=...,
        expected_tool_calls=[{"name": "search_kb", "args": {"query": {"$any": True}}}],
    )
    assert _score(row, {"query": text}, tmp_path) < 3.0
    row["expected_tool_calls"] = [{"name": "tagged", "args": {}}]
    assert _score(row, {text: "x"}, tmp_path) < 3.0


def test_arg_scope_rule__catastrophic_regex__finishes_fast(tmp_path: Path) -> None:
    from gate.config import ScoringConfig

    (tmp_path / "d.jsonl").write_text(json.dumps(h.case()) + "\n")
    ds = load_dataset(tmp_path / "d.jsonl")
    cfg = ScoringConfig.model_validate(
        {"arg_scope": [{"tool": "issue_refund", "arg": "order_id", "regex": r"^(a|a)*$"}]}
    )
    ctx = ScoringContext.build(cfg, None, ds.tools)
    call = ToolCall(name="issue_refund", arguments={"order_id": "a" * 40 + "!", "amount": 1})
    run = Run(case_id=ds.cases[0].id, sample=0, turns=(Turn(calls=(call,)),))
    t0 = time.perf_counter()
    score = score_sample(ds.cases[0], run, ctx)
    assert time.perf_counter() - t0 < 2.0
    assert score.hard_failures, "an argument the rule cannot check breaks the rule"


# ─── GitHub: the total time spent on GitHub is bounded ────────────────────────


@pytest.mark.parametrize("retry_after", ["3600", "86400", "1"])
def test_github__secondary_rate_limit_with_huge_retry_after__gives_up_within_budget(
    retry_after: str,
) -> None:
    """PyGithub's default retry would sleep out the Retry-After (an hour, a day); the
    gate's client must give up within its budget however long GitHub asks it to wait."""
    from gate.github.client import GitHubApiError, GitHubClient, RetryPolicy
    from tests.servers.github_server import Fault, GitHubServer

    with GitHubServer() as gh:
        gh.add_token("ghs_reliabilitytoken000000000000000000", "github-actions[bot]", kind="app")
        gh.add_pull(7)
        gh.inject(
            "get_repo",
            Fault(
                status=403,
                body={"message": "You have exceeded a secondary rate limit."},
                headers={"Retry-After": retry_after},
            ),
        )
        budget = 4.0
        client = GitHubClient(
            token="ghs_reliabilitytoken000000000000000000",
            api_url=gh.api_url,
            policy=RetryPolicy(budget_s=budget, request_timeout_s=2, backoff_s=0.1),
        )
        t0 = time.monotonic()
        with pytest.raises(GitHubApiError) as info:
            client.call("GET repo", lambda: client.gh.get_repo("octo/agent"))
        elapsed = time.monotonic() - t0
    assert elapsed <= budget + 1.0, elapsed
    assert info.value.rate_limited
    assert "rate limit" in str(info.value)


def test_github__budget_from_environment__must_be_finite() -> None:
    """``TOOLGATE_GITHUB_BUDGET_S=inf`` would lift the bound altogether: an input error."""
    from gate.errors import InputError
    from gate.github.context import DEFAULT_BUDGET_S, GitHubContext

    for raw in ("inf", "Infinity", "nan", "-1", "0", "1e999"):
        ctx = GitHubContext.from_environ({"TOOLGATE_GITHUB_BUDGET_S": raw})
        assert ctx.budget_s == DEFAULT_BUDGET_S, raw
        assert [p.field for p in ctx.problems] == ["TOOLGATE_GITHUB_BUDGET_S"], raw
        with pytest.raises(InputError):
            ctx.require_valid()


def test_github__server_that_stalls__each_request_capped_and_total_bounded() -> None:
    from gate.github.client import GitHubApiError, GitHubClient, RetryPolicy
    from tests.servers.github_server import Fault, GitHubServer

    with GitHubServer() as gh:
        gh.add_token("ghs_stall0000000000000000000000000000000", "github-actions[bot]", kind="app")
        gh.inject("get_repo", Fault(delay=30.0))
        client = GitHubClient(
            token="ghs_stall0000000000000000000000000000000",
            api_url=gh.api_url,
            policy=RetryPolicy(budget_s=5.0, request_timeout_s=1, backoff_s=0.1),
        )
        t0 = time.monotonic()
        with pytest.raises(GitHubApiError):
            client.call("GET repo", lambda: client.gh.get_repo("octo/agent"))
        assert time.monotonic() - t0 <= 5.0 + 1.5


@pytest.mark.parametrize("char", ["\x00", "\x07", "\x1b", "\ufffe"])
def test_config__control_character__refused_with_its_line(tmp_path: Path, char: str) -> None:
    """ruamel's reader error has no mark, only an offset (found by the fuzz suite)."""
    path = _config(tmp_path, h.config_yaml() + f"seed: 1\nnotes{char}: x\n")
    with pytest.raises(ConfigError, match=f"U\\+{ord(char):04X}") as info:
        load_config(path, display="toolgate.yml")
    h.check_input_error(info.value, files=["toolgate.yml"], lines=True)
    assert info.value.problems[0].line == 8


def test_dataset_csv__two_quoting_errors__one_problem_not_a_crash(tmp_path: Path) -> None:
    """After a quoting error the loader drained the csv reader, which raised again on the
    next bad line: an unhandled ``_csv.Error`` (found by the fuzz suite)."""
    rows = h.csv_bytes(h.cases(2)).decode().splitlines()
    rows[1] = rows[1].replace('"object"', '"object"\x00', 1)
    rows.append('x,"a"b,c')
    (tmp_path / "d.csv").write_text("\n".join(rows) + "\n")
    with pytest.raises(DatasetError, match="malformed CSV") as info:
        load_dataset(tmp_path / "d.csv", display="d.csv")
    h.check_input_error(info.value, files=["d.csv"], lines=True)
    assert info.value.problems[0].line == 2


@pytest.mark.parametrize("levels", [65, 1_000, 200_000])
@pytest.mark.parametrize("style", ["flow", "block"])
def test_config__deep_yaml_nesting__input_error_not_recursion_error(
    tmp_path: Path, levels: int, style: str
) -> None:
    """ruamel's composer recurses once per level: 1,000 levels raised RecursionError
    (found by this suite)."""
    if style == "flow":
        deep = "seed: " + "[" * min(levels, 20_000) + "]" * min(levels, 20_000) + "\n"
    else:
        deep = "seed:\n" + "".join("  " * i + "-\n" for i in range(1, min(levels, 900)))
    path = _config(tmp_path, h.config_yaml() + deep)
    with pytest.raises(ConfigError, match="nesting deeper than 64") as info:
        load_config(path, display="toolgate.yml")
    h.check_input_error(info.value, files=["toolgate.yml"], lines=True)


def test_config__anchor_defined_twice__refused_with_line(tmp_path: Path) -> None:
    """YAML lets a second ``&a`` silently replace the first (ruamel only warns, which is
    an exception under ``-W error``): ambiguous, so refused, naming the second one."""
    text = h.config_yaml() + "scoring:\n  free_text:\n    a: &t [x]\n    b: &t [y]\n    c: *t\n"
    path = _config(tmp_path, text)
    with pytest.raises(ConfigError, match="anchor &t is defined twice") as info:
        load_config(path, display="toolgate.yml")
    assert info.value.problems[0].line == 10


def test_github__api_that_trickles_bytes__total_time_within_budget() -> None:
    """requests' timeout bounds each socket read; a server (a broken GitHub Enterprise
    proxy) that sends one byte every 0.2 s held a call forever (found by this suite)."""
    from gate.github.client import GitHubApiError, GitHubClient, RetryPolicy
    from tests.reliability.helpers import TrickleServer

    with TrickleServer(gap_s=0.2) as srv:
        client = GitHubClient(
            token="ghs_trickle000000000000000000000000000000",
            api_url=f"http://127.0.0.1:{srv.port}",
            policy=RetryPolicy(budget_s=3.0, request_timeout_s=1, backoff_s=0.1),
        )
        t0 = time.monotonic()
        with pytest.raises(GitHubApiError, match="budget"):
            client.call("GET repo", lambda: client.gh.get_repo("octo/agent"))
        assert time.monotonic() - t0 <= 3.0 + 1.5
