"""A cancellation is looked at in order, never read ahead, and reaches a call on our route exactly
where it reaches it on the SDK's (``mcp/stdio/dispatch.py``, ``HOLD_LINES``): real processes,
everything written at once, stdin then closed.

The scenario: a ``write``, ``k`` other lines (reads, pings, notifications, blank lines), then a
``notifications/cancelled`` for the ``write``. On the SDK route (``DSH_FS_MCP_SDK_ONLY=1``) a
cancellation right behind its request (``k`` < 2 lines that are not blank) reaches the call: the
``write`` runs (its file is written) but is not answered; one sent later finds it answered. Our
route gives the same outcome for every ``k``, before the SDK is loaded (its import held) and
after. Before, our route read the cancellation ahead and aborted a ``write`` the SDK route runs
and answers (nothing written, nothing answered).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpkit import call, cancel, converse, notification, ping

FILLERS = {
    "read": lambda i: call(10 + i, "read", {"file_path": "a.txt"}),
    "ping": lambda i: ping(10 + i),
    "progress": lambda i: notification("notifications/progress", {"progressToken": 1, "progress": 1}),
    "blank": lambda i: b"\n",
}


def _outcome(root: Path, k: int, filler: str, *, sdk_only: bool = False, hold: Path | None = None) -> tuple[bool, bool]:
    """(the write answered, its file written) for ``k`` filler lines between it and its cancellation."""
    target = root / "w.txt"
    target.unlink(missing_ok=True)
    data = (call(2, "write", {"file_path": "w.txt", "content": "x\n"}) + b"".join(FILLERS[filler](i) for i in range(k))
            + cancel(2))
    lines, err = converse(root, data, sdk_only=sdk_only, hold=hold)
    assert "Traceback" not in err, err
    return any(json.loads(line).get("id") == 2 for line in lines), target.exists()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    return ws


@pytest.mark.parametrize("filler", sorted(FILLERS))
@pytest.mark.parametrize("k", [0, 1, 2, 4])
def test_a_cancellation_reaches_a_call_where_the_sdk_route_is_reached(root: Path, tmp_path: Path, k: int,
                                                                     filler: str) -> None:
    sdk = _outcome(root, k, filler, sdk_only=True)
    assert _outcome(root, k, filler) == sdk
    assert _outcome(root, k, filler, hold=tmp_path / "hold") == sdk  # before the SDK is loaded too
    assert sdk[1]  # the write ran on both routes, answered or not


def test_a_cancellation_sent_ten_requests_later_does_not_abort_the_write(root: Path, tmp_path: Path) -> None:
    """The attack's scenario (all in one write, the SDK's import held): written and answered, as
    on the SDK route."""
    assert _outcome(root, 10, "read", sdk_only=True) == (True, True)
    assert _outcome(root, 10, "read", hold=tmp_path / "hold") == (True, True)
    assert _outcome(root, 10, "read") == (True, True)
