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
