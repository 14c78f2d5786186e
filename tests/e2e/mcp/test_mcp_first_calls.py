"""``dsh-fs mcp`` answers ``initialize``, plain ``tools/call`` requests and ``tools/list`` before
the MCP SDK is loaded (DEVIATIONS M2: our route, ``mcp/stdio/dispatch.py``), for real:
subprocesses over pipes.

The proof that an answer came before the SDK import: ``$DSH_FS_MCP_TEST_HOLD_IMPORT`` names a
file; while it exists the background import does not start (``stdio.dispatch.HOLD_ENV_VAR``), so
an answer read while it exists was given without the SDK. The file is then removed and a line
only the SDK serves (``ping``) attaches it.

Covers: a read answered before the SDK, then an edit after it is attached (the observation
carries over); ``--session`` across processes (both calls without the SDK); the per-call hint
without ``--session``; a client that declared ``roots`` (its first call waits for the SDK: M3
asks them); hostile input before the SDK (a line split across writes, the end of input
mid-line, invalid UTF-8, a huge line, ``ping``, an unknown tool, a call before
``notifications/initialized``), each compared byte for byte with the SDK route's answers
(``DSH_FS_MCP_SDK_ONLY=1``); answers that need the SDK's encoding, written once it is loaded.
"""

from __future__ import annotations

import json
import select
import time
from pathlib import Path
from typing import Any

import pytest

from mcpkit import INITIALIZED, WAIT, Server, call, initialize


def _call(request_id: int, name: str, **arguments: Any) -> bytes:
    return call(request_id, name, arguments)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\nbeta\n")
    return ws


def _held(root: Path, tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Server:
    server = Server(root, *args, hold=tmp_path / "hold", env=env)
    server.send(initialize())
    assert b'"id":1' in server.line()
    return server


def test_a_read_is_answered_before_the_sdk_and_an_edit_after_it_is_attached_sees_it(root: Path, tmp_path: Path) -> None:
    server = _held(root, tmp_path)
    server.send(INITIALIZED + _call(2, "read", file_path=str(root / "a.txt")))
    answer = server.line()  # the import is held: no SDK in the process
    text = json.loads(answer)["result"]["content"][0]["text"]
    assert "alpha" in text and "beta" in text, text
    assert server.hold is not None and server.hold.exists()
    server.release()
    server.send(b'{"jsonrpc":"2.0","id":3,"method":"ping"}\n')  # the SDK answers it
    assert json.loads(server.line()) == {"jsonrpc": "2.0", "id": 3, "result": {}}
    server.send(_call(4, "edit", file_path=str(root / "a.txt"), old_string="beta", new_string="gamma"))
    edited = json.loads(server.line())
    assert edited["id"] == 4 and edited["result"]["isError"] is False, edited
    server.finish()
    assert (root / "a.txt").read_text() == "alpha\ngamma\n"


def test_a_call_whose_strings_hold_minus_zero_or_long_digit_runs_is_answered_before_the_sdk(tmp_path: Path) -> None:
    """``-0`` and runs of 16 digits are what ``js_numbers`` rewrites as numbers; inside a string
    (a fresh machine's temp path ``…/pytest-0/…``, a file named by a timestamp) they change
    nothing, and the call is ours to answer."""
    root = tmp_path / "release-0" / "ws"
    root.mkdir(parents=True)
    name = root / "build-1733500000123456789.txt"
    name.write_text("alpha\n")
    server = _held(root, tmp_path)
    server.send(INITIALIZED + _call(2, "read", file_path=str(name)))
    answer = json.loads(server.line())  # the import is held: no SDK in the process
    assert answer["id"] == 2 and "alpha" in answer["result"]["content"][0]["text"], answer
    assert server.hold is not None and server.hold.exists()
    server.finish()


def test_the_answers_before_the_sdk_are_the_sdk_routes_byte_for_byte(root: Path, tmp_path: Path) -> None:
    script = INITIALIZED + _call(2, "read", file_path=str(root / "a.txt")) + _call(3, "read", file_path="missing.txt")
    server = _held(root, tmp_path)
    server.send(script)
    held = server.line() + server.line()
    assert server.hold is not None and server.hold.exists()  # both answered without the SDK
    server.finish()
    sdk = Server(root, sdk_only=True)
    sdk.send(initialize() + script)
    sdk.line()
    assert sdk.line() + sdk.line() == held
    sdk.finish()


def test_session_observations_cross_processes_answered_before_the_sdk(root: Path, tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path / "state")}
    first = _held(root, tmp_path, "--session", "s8", env=env)
    first.send(INITIALIZED + _call(2, "read", file_path=str(root / "a.txt")))
    assert b'"isError":false' in first.line()
    first.finish()
    second = _held(root, tmp_path, "--session", "s8", env=env)
    second.send(INITIALIZED + _call(2, "edit", file_path=str(root / "a.txt"), old_string="alpha", new_string="omega"))
    answer = second.line()
    assert second.hold is not None and second.hold.exists()
    assert b'"isError":false' in answer, answer
    second.finish()
    assert (root / "a.txt").read_text() == "omega\nbeta\n"


def test_without_session_a_first_edit_is_refused_with_the_hint(root: Path, tmp_path: Path) -> None:
    server = _held(root, tmp_path)
    server.send(INITIALIZED + _call(2, "edit", file_path=str(root / "a.txt"), old_string="alpha", new_string="x"))
    assert b'"isError":true' in server.line()
    _, err = server.finish()
    assert "hint: a call was refused for want of a read" in err
    assert (root / "a.txt").read_text() == "alpha\nbeta\n"


def test_a_client_that_declared_roots_is_asked_and_answered_before_the_sdk(root: Path, tmp_path: Path) -> None:
    """A per-call client that declares ``roots`` (the Inspector CLI, IDE clients): its first call
    asks ``roots/list`` (M3) and is answered, all before the SDK is loaded; the roots' answer
    narrows the call as the SDK route's does."""
    (root / "sub").mkdir()
    (root / "sub" / "b.txt").write_text("inside\n")
    server = Server(root, hold=tmp_path / "hold")
    server.send(initialize(capabilities={"roots": {"listChanged": True}}))
    server.line()
    server.send(INITIALIZED + _call(2, "read", file_path=str(root / "a.txt")))
    asked = json.loads(server.line())  # asked first (M3), without the SDK
    assert asked["method"] == "roots/list" and "params" not in asked
    server.send(json.dumps({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": [
        {"uri": (root / "sub").as_uri()}]}}).encode() + b"\n")
    refused = json.loads(server.line())  # a.txt is outside the client's root
    assert refused["id"] == 2 and refused["result"]["isError"] is True
    server.send(_call(3, "read", file_path="b.txt"))  # relative: the client's first root
    assert b"inside" in server.line()
    assert server.hold is not None and server.hold.exists()
    server.finish()


HUGE = _call(5, "read", file_path="x" * 100_000)
HOSTILE = {
    "split-line": [_call(5, "read", file_path="a.txt")[:20], _call(5, "read", file_path="a.txt")[20:]],
    "eof-mid-line": [_call(5, "read", file_path="a.txt")[:-5]],
    "invalid-utf8": [b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read","arguments":{"file_path":"\xff"}}}\n'],
    "huge-line": [HUGE],
    "ping": [b'{"jsonrpc":"2.0","id":5,"method":"ping"}\n', _call(6, "read", file_path="a.txt")],
    "unknown-tool": [_call(5, "nope"), _call(6, "read", file_path="a.txt")],
    "cancelled": [b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}\n',
                  _call(6, "read", file_path="a.txt")],
    "blank-lines": [b"\n  \n", _call(6, "read", file_path="a.txt")],
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_lines_before_the_sdk_get_the_sdk_routes_answers(root: Path, tmp_path: Path, name: str) -> None:
    def run(server: Server, held: bool) -> bytes:
        server.send(INITIALIZED + _call(2, "read", file_path="a.txt"))
        first = server.line()
        if held:
            assert server.hold is not None and server.hold.exists()  # answered before the SDK
        for part in HOSTILE[name]:
            server.send(part)
            time.sleep(0.05)
        out, _ = server.finish()
        return first + out

    held = run(_held(root, tmp_path), True)
    sdk = Server(root, sdk_only=True)
    sdk.send(initialize())
    sdk.line()
    assert sorted(run(sdk, False).splitlines()) == sorted(held.splitlines())  # (answers come as calls end)


def test_a_call_before_notifications_initialized_goes_to_the_sdk(root: Path, tmp_path: Path) -> None:
    script = _call(2, "read", file_path="a.txt") + INITIALIZED + _call(3, "read", file_path="a.txt")
    server = _held(root, tmp_path)
    server.send(script)
    held, _ = server.finish()
    sdk = Server(root, sdk_only=True)
    sdk.send(initialize() + script)
    sdk.line()
    out, _ = sdk.finish()
    assert sorted(out.splitlines()) == sorted(held.splitlines())  # (answers come as calls end)


def test_stdin_ending_with_every_line_served_needs_no_sdk(root: Path, tmp_path: Path) -> None:
    server = _held(root, tmp_path)
    server.send(INITIALIZED + _call(2, "read", file_path="a.txt") + _call(3, "read", file_path="a.txt"))
    assert server.proc.stdin is not None
    server.proc.stdin.close()  # the import is still held: only our route can answer
    assert server.proc.wait(timeout=WAIT) == 0
    assert server.proc.stdout is not None and server.proc.stderr is not None
    out, err = server.proc.stdout.read(), server.proc.stderr.read()
    assert server.proc.returncode == 0, err
    answers = [json.loads(line) for line in out.splitlines()]
    assert sorted(answer["id"] for answer in answers) == [2, 3]
    assert server.hold is not None and server.hold.exists()
    server.release()


LIST = b'{"jsonrpc":"2.0","id":3,"method":"tools/list"}\n'


@pytest.mark.parametrize("args", [(), ("--images",), ("--profile", "reference"), ("--sandbox", "read-only")],
                         ids=["default", "images", "reference", "sandbox"])
def test_tools_list_after_a_call_is_answered_before_the_sdk_with_the_sdk_routes_bytes(root: Path, tmp_path: Path,
                                                                             args: tuple[str, ...]) -> None:
    """The ``mcp<2`` client (LangChain's adapter) lists the tools after each call: that answer
    too comes before the SDK import, with the SDK path's bytes."""
    script = INITIALIZED + _call(2, "read", file_path="a.txt") + LIST + b'{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}\n'
    server = _held(root, tmp_path, *args)
    server.send(script)
    held = {json.loads(line)["id"]: line for line in (server.line(), server.line(), server.line())}
    assert server.hold is not None and server.hold.exists()  # all three without the SDK
    server.finish()
    sdk = Server(root, *args, sdk_only=True)
    sdk.send(initialize() + script)
    sdk.line()
    by_id = {json.loads(line)["id"]: line for line in (sdk.line(), sdk.line(), sdk.line())}
    sdk.finish()  # (either route may answer a list before a call sent ahead of it: compared by id)
    assert by_id == held
    assert [tool["name"] for tool in json.loads(held[3])["result"]["tools"]][:2] == ["edit", "glob"]


@pytest.mark.parametrize("line", [b'{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"x"}}\n',
                                  b'{"jsonrpc":"2.0","id":3,"method":"tools/list","params":null}\n',
                                  b'{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{}}}\n'],
                         ids=["cursor", "null", "meta"])
def test_a_tools_list_with_params_waits_for_the_sdk(root: Path, tmp_path: Path, line: bytes) -> None:
    server = _held(root, tmp_path)
    server.send(INITIALIZED + line)
    time.sleep(0.3)
    assert select.select([server.proc.stdout], [], [], 0)[0] == []  # left for the SDK
    server.release()
    held = server.line()
    server.finish()
    sdk = Server(root, sdk_only=True)
    sdk.send(initialize() + INITIALIZED + line)
    sdk.line()
    assert sdk.line() == held
    sdk.finish()
