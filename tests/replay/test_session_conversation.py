"""The session of a conversation case: each user turn's message marks its first
assistant turn, its answer ends it, the step budget and the frozen responses are the
turn's own, a must-not-call turn ends the conversation, and the conversation so far is
what the agent is given."""

from __future__ import annotations

import pytest

from gate.model import Case, ExpectedCall, SourceRef, ToolCall, UserTurn
from gate.replay.frozen import ReplayBackend
from gate.replay.session import AgentFailure, ErrorKind, Job, Session
from tests.replay.helpers import LOOKUP, REFUND, response


def _case(**extra: object) -> Case:
    fields: dict[str, object] = {
        "id": "conv",
        "user_input": "where is ord_1?",
        "source": SourceRef("dataset.jsonl", 1),
        "available_tools": (LOOKUP, REFUND),
        "must_not_call": ("issue_refund",),
        "tool_responses": (
            response("lookup_order", {"order_id": "ord_1"}, ok={"status": "case-level"}),
            response("lookup_order", ok={"status": "default"}),
        ),
        "conversation": (
            UserTurn("where is ord_1?", (ExpectedCall("lookup_order"),)),
            UserTurn(
                "and now?",
                (ExpectedCall("lookup_order"),),
                tool_responses=(response("lookup_order", ok={"status": "turn 2"}),),
            ),
            UserTurn("thanks", ()),
        ),
    }
    fields.update(extra)
    return Case(**fields)  # type: ignore[arg-type]


def _session(case: Case, budget: int = 5) -> Session:
    job = Job(case=case, sample=0, seed=1, step_budget=budget, timeout_s=5)
    return Session(job, ReplayBackend(case))


def _lookup() -> list[ToolCall]:
    return [ToolCall("lookup_order", {"order_id": "ord_1"})]


def test_session__turns_marked_answers_recorded_messages_grow() -> None:
    s = _session(_case())
    assert s.messages()[-1] == {"role": "user", "content": "where is ord_1?"}
    assert s.answer(_lookup())[0].content == {"status": "case-level"}
    assert s.next_user("It is on its way.") == "and now?"
    # turn 2's own response wins over the case's, even its argument-specific one
    assert s.answer(_lookup())[0].content == {"status": "turn 2"}
    roles = [m["role"] for m in s.messages()]
    assert roles == ["user", "assistant", "tool", "assistant", "user", "assistant", "tool"]
    assert s.next_user("Still on its way.") == "thanks"
    assert s.messages()[-1] == {"role": "user", "content": "thanks"}
    assert s.next_user("You're welcome.") is None
    run = s.to_run()
    assert [t.user for t in run.turns] == [
        "where is ord_1?",
        None,
        "and now?",
        None,
        "thanks",
    ]
    assert [t.content for t in run.turns if not t.calls] == [
        "It is on its way.",
        "Still on its way.",
        "You're welcome.",
    ]
    assert run.final == "You're welcome."


def test_session__must_not_call_in_a_turn__ends_the_conversation() -> None:
    s = _session(_case())
    s.answer([ToolCall("issue_refund", {"order_id": "ord_1"})])
    assert s.next_user("Refunded.") is None
    assert s.ended_by == "turn 1 of 3 called issue_refund, which must never be called"
    run = s.to_run()
    assert run.meta == {"conversation_ended": s.ended_by}


def test_session__a_turns_own_must_not_call__ends_it_too() -> None:
    case = _case(must_not_call=())
    turns = list(case.conversation)
    turns[1] = UserTurn("and now?", (), must_not_call=("lookup_order",))
    s = _session(_case(must_not_call=(), conversation=tuple(turns)))
    s.answer(_lookup())
    assert s.next_user("ok") == "and now?"  # turn 1 may look it up
    s.answer(_lookup())
    assert s.next_user("ok") is None


def test_session__step_budget__per_user_turn() -> None:
    s = _session(_case(), budget=1)
    s.answer(_lookup())
    assert s.next_user("ok") == "and now?"
    s.answer(_lookup())  # a new turn: a new budget
    with pytest.raises(AgentFailure) as err:
        s.answer(_lookup())
    assert err.value.kind is ErrorKind.STEP_BUDGET
    assert "in user turn 2" in str(err.value)


def test_session__failure_before_the_agent_answers_a_later_turn__belongs_to_that_turn() -> None:
    s = _session(_case())
    s.answer(_lookup())
    s.next_user("ok")
    run = s.to_run(error="crash: gone")
    assert run.turns[-1].user == "and now?" and not run.turns[-1].calls


def test_session__one_turn_case__unchanged() -> None:
    case = _case(conversation=())
    s = _session(case)
    s.answer(_lookup())
    assert s.next_user("done") is None
    run = s.to_run()
    assert run.final == "done"
    assert [t.user for t in run.turns] == [None]
    assert run.meta is None
