"""Cohen's κ, raw agreement, the bootstrap interval and the calibration file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gate.errors import CalibrationError
from gate.judge.agreement import agreement, cohen_kappa, load_calibration, percentile, raw_agreement

SCALES = {
    "tool_appropriateness": ("appropriate", "wrong_tool"),
    "argument_fidelity": ("faithful", "distorted"),
}


def test_kappa__textbook_table__matches_hand_computation() -> None:
    # Both yes 20, judge yes/human no 5, judge no/human yes 10, both no 15 (n = 50):
    # p_o = 35/50 = 0.7; p_e = (25/50)(30/50) + (25/50)(20/50) = 0.5; κ = 0.2/0.5 = 0.4.
    pairs = [("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15
    assert raw_agreement(pairs) == pytest.approx(0.7)
    assert cohen_kappa(pairs) == pytest.approx(0.4)


def test_kappa__perfect_agreement_over_two_labels__one() -> None:
    assert cohen_kappa([("a", "a"), ("b", "b"), ("a", "a")]) == pytest.approx(1.0)


def test_kappa__systematic_disagreement__negative() -> None:
    assert cohen_kappa([("a", "b"), ("b", "a")]) == pytest.approx(-1.0)


def test_kappa__one_label_throughout__undefined_not_nan() -> None:
    assert cohen_kappa([("a", "a")] * 5) is None
    assert cohen_kappa([]) is None
    assert raw_agreement([]) is None


def test_percentile__linear_interpolation() -> None:
    assert percentile([0.0, 1.0, 2.0, 3.0], 0.5) == pytest.approx(1.5)
    assert percentile([5.0], 0.025) == 5.0


def test_agreement__seeded__same_interval_every_time_and_holds_estimate() -> None:
    pairs = [("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15
    a, b = agreement(pairs, seed=3), agreement(pairs, seed=3)
    assert a == b
    assert a["ci_low"] < a["kappa"] < a["ci_high"]
    assert a["raw_ci_low"] < a["raw"] < a["raw_ci_high"]
    assert agreement(pairs, seed=4)["ci_low"] != a["ci_low"]


def test_agreement__one_pair__no_interval() -> None:
    got = agreement([("a", "a")], seed=0)
    assert (
        got["n"] == 1 and got["raw"] == 1.0 and got["ci_low"] is None and got["raw_ci_low"] is None
    )


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("abc")), min_size=1, max_size=30))
def test_kappa__any_pairs__at_most_one_and_raw_in_unit_interval(
    pairs: list[tuple[str, str]],
) -> None:
    k = cohen_kappa(pairs)
    assert k is None or -1.0 - 1e-9 <= k <= 1.0 + 1e-9
    r = raw_agreement(pairs)
    assert r is not None and 0.0 <= r <= 1.0
    if all(j == h for j, h in pairs) and k is not None:
        assert k == pytest.approx(1.0)


def write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "human.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_calibration__valid_file__labels_with_lines_blank_lines_skipped(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            json.dumps(
                {
                    "case_id": "c1",
                    "sample": 0,
                    "rubric": "tool_appropriateness",
                    "label": "appropriate",
                }
            ),
            "",
            json.dumps(
                {
                    "case_id": "c1",
                    "sample": 0,
                    "rubric": "argument_fidelity",
                    "item": "s#0.q",
                    "label": "distorted",
                }
            ),
        ],
    )
    got = load_calibration(path, SCALES, display="human.jsonl")
    assert [(h.case_id, h.rubric, h.item, h.label, h.line) for h in got] == [
        ("c1", "tool_appropriateness", "", "appropriate", 1),
        ("c1", "argument_fidelity", "s#0.q", "distorted", 3),
    ]


_DROP = object()


def line_with(**over: object) -> str:
    base: dict[str, object] = {"case_id": "c", "sample": 0, "rubric": "tool_appropriateness"}
    base["label"] = "appropriate"
    base.update(over)
    return json.dumps({k: v for k, v in base.items() if v is not _DROP})


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ("not json", None, "invalid JSON"),
        ("[1]", None, "must be a JSON object"),
        (line_with(label=_DROP), "label", "required"),
        (line_with(sample="0"), "sample", "integer"),
        (line_with(sample=True), "sample", "integer"),
        (line_with(sample=-1), "sample", "integer"),
        (line_with(case_id=""), "case_id", "non-empty"),
        (line_with(rubric="tool_appropriatenes"), "rubric", "did you mean 'tool_appropriateness'"),
        (line_with(label="good"), "label", "not on the scale"),
        (line_with(who="ann"), "who", "unknown key"),
        (line_with(item=3), "item", "string"),
        (line_with()[:-1] + ', "sample": 1}', None, "duplicate key"),
    ],
)
def test_calibration__bad_line__error_names_file_line_field(
    tmp_path: Path, line: str, field: str | None, message: str
) -> None:
    ok = json.dumps(
        {"case_id": "c0", "sample": 0, "rubric": "tool_appropriateness", "label": "appropriate"}
    )
    path = write(tmp_path, [ok, line])
    with pytest.raises(CalibrationError) as exc:
        load_calibration(path, SCALES, display="human.jsonl")
    problem = exc.value.problems[0]
    assert (problem.file, problem.line, problem.field) == ("human.jsonl", 2, field)
    assert message in problem.message


def test_calibration__same_item_twice__error_points_at_first_line(tmp_path: Path) -> None:
    line = json.dumps(
        {"case_id": "c", "sample": 0, "rubric": "tool_appropriateness", "label": "appropriate"}
    )
    path = write(tmp_path, [line, line])
    with pytest.raises(CalibrationError) as exc:
        load_calibration(path, SCALES, display="human.jsonl")
    assert (
        exc.value.problems[0].line == 2
        and "already labelled on line 1" in exc.value.problems[0].message
    )


def test_calibration__many_problems__all_reported_in_one_pass(tmp_path: Path) -> None:
    path = write(tmp_path, ["{}", "nope", "{}"])
    with pytest.raises(CalibrationError) as exc:
        load_calibration(path, SCALES, display="human.jsonl")
    assert sorted({p.line for p in exc.value.problems}) == [1, 2, 3]


def test_calibration__missing_file__error_names_it(tmp_path: Path) -> None:
    with pytest.raises(CalibrationError) as exc:
        load_calibration(tmp_path / "absent.jsonl", SCALES, display="absent.jsonl")
    assert (
        exc.value.problems[0].file == "absent.jsonl"
        and "cannot read" in exc.value.problems[0].message
    )
