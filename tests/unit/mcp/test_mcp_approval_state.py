"""The ``request_state`` of the 2026-07-28 approval rounds (``dsh_fs.mcp.approval``): sealed for
one call and one question, and counted once (``allowed-once``), within a bounded memory."""

from __future__ import annotations

from dsh_fs.mcp.approval import SPENT_MAX, Round, _Spent


def test_a_state_is_bound_to_its_call_and_question() -> None:
    call = Round("write", {"file_path": "a.txt", "content": "x"}, None, None)
    state = call.seal("escalate")
    nonce = state.partition(".")[0]
    assert call.seal("escalate", nonce) == state
    assert call.seal("escalate") != state  # a new question: a new nonce
    assert Round("write", {"file_path": "b.txt", "content": "x"}, None, None).seal("escalate", nonce) != state
    assert call.seal("escalate to danger-full-access", nonce) != state


def test_an_answer_counts_once_and_old_questions_are_forgotten() -> None:
    spent = _Spent()
    first = spent.issue("n0.mac").partition(".")[0]
    assert spent.take(first) and not spent.take(first)  # replayed
    assert not spent.take("never-issued")
    kept = [spent.issue(f"n{i}.mac").partition(".")[0] for i in range(1, SPENT_MAX + 2)]
    assert not spent.take(kept[0])  # pushed out: refused, not approved again
    assert spent.take(kept[-1]) and not spent.take(kept[-1])
    assert len(spent._issued) <= SPENT_MAX and len(spent._spent) <= SPENT_MAX
