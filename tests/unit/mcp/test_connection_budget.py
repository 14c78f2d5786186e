"""``mcp.http.connections.ConnectionBudget``: the pure bookkeeping of who may hold a connection.

Unproven connections (no valid token yet) may take ``total - reserved`` places: the next one
closes the oldest unproven; proven ones are never closed for a newcomer, which is refused
when every other place is proven. Hypothesis: whatever arrives, proves and leaves, the
bounds hold and a proven connection is only ever forgotten by ``forget``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

pytest.importorskip("uvicorn")

from dsh_fs.mcp.http.connections import ConnectionBudget, ConnectionLimits  # noqa: E402


def test_the_oldest_unproven_connection_makes_room_and_proven_ones_stay() -> None:
    budget: ConnectionBudget[str] = ConnectionBudget(ConnectionLimits(total=4, reserved=2))
    assert budget.admit("a") == (True, [])
    budget.prove("a")
    assert budget.admit("b") == (True, [])
    assert budget.admit("c") == (True, [])
    assert budget.admit("d") == (True, ["b"])  # two unproven at most: the oldest goes
    budget.prove("c")
    budget.prove("d")
    assert budget.admit("e") == (True, [])
    assert budget.admit("f") == (True, ["e"])
    budget.prove("f")
    assert len(budget) == 4
    assert budget.admit("g") == (False, [])  # every place proven: the newcomer is refused
    budget.forget("a")
    assert budget.admit("g") == (True, [])


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError):
        ConnectionLimits(total=4, reserved=4)
    with pytest.raises(ValueError):
        ConnectionLimits(header_timeout=0)


@given(st.lists(st.tuples(st.sampled_from(["admit", "prove", "forget"]), st.integers(0, 30)), max_size=200))
def test_bounds_hold_whatever_happens(steps: list[tuple[str, int]]) -> None:
    limits = ConnectionLimits(total=8, reserved=3)
    budget: ConnectionBudget[int] = ConnectionBudget(limits)
    open_: set[int] = set()
    proven: set[int] = set()
    for verb, conn in steps:
        if verb == "admit" and conn not in open_:
            accepted, victims = budget.admit(conn)
            assert not set(victims) & proven  # a proven connection is never closed for a newcomer
            open_ -= set(victims)
            if accepted:
                open_.add(conn)
            else:
                assert len(open_ & proven) == limits.total and budget.unproven == 0  # refused only when full of proven
        elif verb == "prove" and conn in open_:
            budget.prove(conn)
            proven.add(conn)
        elif verb == "forget":
            budget.forget(conn)
            open_.discard(conn)
            proven.discard(conn)
        assert len(budget) == len(open_) <= limits.total
        assert budget.unproven == len(open_ - proven) <= limits.total - limits.reserved


def test_a_token_holds_at_most_its_share_and_revocation_finds_its_connections() -> None:
    budget: ConnectionBudget[str] = ConnectionBudget(ConnectionLimits(total=10, reserved=4, per_token=2))
    for conn in "abcde":
        assert budget.admit(conn) == (True, [])
    assert budget.prove("a", "agent-1") and budget.prove("b", "agent-1")
    assert not budget.prove("c", "agent-1")  # over its share: refused, still unproven
    assert budget.unproven == 3 and budget.holds("agent-1") == 2
    assert budget.prove("a", "agent-1")  # again, same token: nothing changes
    assert budget.prove("c", "agent-2") and budget.prove("d", None) and budget.prove("e", None)  # no auth: no share
    assert sorted(budget.of(["agent-1"])) == ["a", "b"] and budget.of(["agent-3"]) == []
    assert budget.prove("b", "agent-2") and budget.holds("agent-1") == 1  # a connection reused by another token
    assert not budget.prove("a", "agent-2")  # agent-2 holds b and c
    budget.forget("b")
    assert budget.holds("agent-2") == 1 and not budget.prove("zz", "agent-2")  # unknown connection
    with pytest.raises(ValueError):
        ConnectionLimits(per_token=0)
    with pytest.raises(ValueError):
        ConnectionLimits(body_timeout=0)


@given(st.lists(st.tuples(st.sampled_from(["admit", "prove", "forget"]), st.integers(0, 20),
                          st.sampled_from(["p", "q", None])), max_size=200))
def test_no_token_ever_holds_more_than_its_share(steps: list[tuple[str, int, str | None]]) -> None:
    limits = ConnectionLimits(total=8, reserved=3, per_token=2)
    budget: ConnectionBudget[int] = ConnectionBudget(limits)
    owner: dict[int, str | None] = {}
    for verb, conn, principal in steps:
        if verb == "admit":
            _, victims = budget.admit(conn)
            for victim in victims:
                owner.pop(victim, None)
        elif verb == "prove" and budget.prove(conn, principal):
            owner[conn] = principal
        elif verb == "forget":
            budget.forget(conn)
            owner.pop(conn, None)
        for name in ("p", "q"):
            assert budget.holds(name) == sum(1 for p in owner.values() if p == name) <= limits.per_token
            assert sorted(budget.of([name])) == sorted(c for c, p in owner.items() if p == name)
