"""The stdio server's two routes held to each other: ours (``stdio/dispatch.py``: the codec, our
dispatcher, the codec) and the SDK's (``DSH_FS_MCP_SDK_ONLY=1``: every line to the SDK).

Each test serves the same requests twice over real pipes, in process (``serve_stdio`` with
explicit streams on a thread of its own, a blocking client here: ``mcpkit.InProcess``): once as
``dsh-fs mcp`` serves them, once through the SDK alone, and compares the bytes the client reads,
for every handshake protocol version. ``Counts.calls`` says how many calls our route served, so
a test whose calls all went to the SDK fails.

Covers: results and tool errors (``isError``, ``_meta``), images, a large result, JSON number
edge cases in ids, arguments and results (hypothesis too: generated calls and generated tool
outputs), calls sent together, a registry that raises; what goes to the SDK (progress token /
``_meta``, unknown tool, a name that is not a string, extra params, before ``initialize``, a
client's roots question, a sandbox with a client that can be asked, while a request the SDK
serves is in flight, a line that is not plain); a client with settled roots served on our
route; cancellation of a running and of a waiting call; arrival order against a call the SDK
serves; a call in flight when stdin ends; ``DSH_FS_MCP_SDK_ONLY``; the in-flight cap.
Cancellations sent right behind their request, and later, against real processes:
``tests/e2e/mcp/test_mcp_cancel_routes.py``. Not here: timing (``bench/run.py --only-mcp``).
"""

from __future__ import annotations

import base64
import functools
import json
import os
import select
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import dsh_fs
from dsh_fs.core.tools import ToolDefinition, ToolOutput, ToolRegistry, ToolResult, image_block, text_block
from dsh_fs.mcp.stdio.dispatch import sdk_only_from_env
from dsh_fs.mcp.wire import HANDSHAKE_PROTOCOL_VERSIONS, plain_call
from mcpkit import InProcess

WAIT = 60.0
"""seconds a reply may take on a loaded machine before the test gives up"""

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


class Gate:
    """A tool body that waits until released (or its call is aborted): ``hold``."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.aborted: list[bool] = []

    async def body(self, arguments: dict[str, Any], execution: Any) -> list[Any]:
        self.started.set()
        while not self.release.is_set():
            if execution.signal is not None and execution.signal.aborted:
                self.aborted.append(True)
                return [text_block("aborted")]
            await anyio.sleep(0.005)
        return [text_block("released")]


def _workspace(root: Path) -> None:
    """The same files before every run (the two runs must see the same disk)."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir()
    (root / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 40)))
    (root / "big.txt").write_text("".join(f"{i:06d} " + "x" * 90 + "\n" for i in range(4000)))
    (root / "pic.png").write_bytes(PNG)
    (root / "sub").mkdir()
    (root / "sub" / "b.py").write_text("def f():\n    return 1\n")


def _context(root: Path, gate: Gate | None = None) -> dsh_fs.Context:
    ctx = dsh_fs.create_context(root=str(root), images=True)
    gate = gate or Gate()
    ctx.tools.register(ToolDefinition(name="hold", description="waits", parameters={}, execute=gate.body))
    ctx.tools.register(ToolDefinition(name="hold_read", description="waits, concurrency-safe", parameters={},
                                      execute=gate.body, is_concurrency_safe=lambda _a: True))

    async def numbers(arguments: dict[str, Any], execution: Any) -> ToolOutput:
        return ToolOutput(content=[text_block("n")], meta={"floats": [1e16, -0.0, 0.1, 1e-7, 2.5e300],
                                                           "ints": [2**53 + 1, -(2**63), 0], "nan": float("nan")})

    async def picture(arguments: dict[str, Any], execution: Any) -> list[Any]:
        return [text_block("\u2028\x00\x7f é 😀 \"q\" \\"), image_block(PNG, "image/png")]

    ctx.tools.register(ToolDefinition(name="numbers", description="n", parameters={}, execute=numbers))
    ctx.tools.register(ToolDefinition(name="picture", description="p", parameters={}, execute=picture))
    return ctx


def _call(request_id: Any, name: str, arguments: Any = None, **extra: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, **extra}
    if arguments is not None:
        params["arguments"] = arguments
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _converse(root: Path, version: str, requests: list[dict[str, Any] | bytes], *, ours: bool,
              capabilities: dict[str, Any] | None = None) -> tuple[list[bytes], int]:
    """Each request sent after the previous answer; the answers and how many took our route."""
    _workspace(root)
    client = InProcess(_context(root), root, sdk_only=not ours)
    answers = [client.initialize(version, capabilities)]
    for request in requests:
        client.send(request)
        answers.append(client.recv())
    answers.append(client.close())
    return answers, client.counts.calls


def _both(root: Path, version: str, requests: list[dict[str, Any] | bytes], **kwargs: Any) -> tuple[list[bytes], int]:
    ours, served = _converse(root, version, requests, ours=True, **kwargs)
    sdk, none = _converse(root, version, requests, ours=False, **kwargs)
    assert none == 0
    assert ours == sdk
    return ours, served


TABLE: list[dict[str, Any] | bytes] = [
    _call(1, "read", {"file_path": "a.txt"}),
    _call("two", "read", {"file_path": "a.txt", "offset": 5, "limit": 3}),
    _call(3, "read", {"file_path": "missing.txt"}),  # a tool error: isError, _meta error
    _call(4, "read", {"file_path": "big.txt"}),  # a large result (the read's byte cap)
    _call(5, "read", {}),  # invalid arguments
    _call(6, "read", [1, 2]),  # arguments that are not an object reach the registry
    _call(7, "read", None),  # absent arguments
    {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "read", "arguments": None}},
    _call(9, "edit", {"file_path": "a.txt", "old_string": "line 3\n", "new_string": "line three\n"}),
    _call(10, "write", {"file_path": "new.txt", "content": "fresh\n"}),
    _call(11, "edit", {"file_path": "new.txt", "old_string": "fresh", "new_string": "old"}),
    _call(12, "glob", {"pattern": "**/*.py"}),
    _call(13, "grep", {"pattern": "return", "path": "sub"}),
    _call(14, "read_image", {"file_path": "pic.png"}),  # an image block
    _call(15, "picture"),  # escapes: U+2028, NUL, DEL, quotes, astral
    _call(16, "numbers"),  # floats, -0.0, NaN, huge ints in _meta
    _call(2**53 - 1, "read", {"file_path": "a.txt"}),
    _call(-7, "read", {"file_path": "a.txt"}),
    _call("\u00e9\u2028", "read", {"file_path": "a.txt"}),
    b'{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"name":"read","arguments":{"file_path":"a.txt"}}}',
    b'{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"read","arguments":{"file_path":"a.txt","offset":-0}}}',
    b'{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"read","arguments":{"file_path":"a.txt","offset":1.0,"limit":9007199254740993}}}',
    b'{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"read","arguments":{"file_path":"a.txt","limit":1e2}}}',
    b'{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"read","arguments":{"file_path":"\\ud800"}}}',
    b'{"id":21,"jsonrpc":"2.0","params":{"arguments":{"file_path":"a.txt"},"name":"read"},"method":"tools/call"}',
]
def _plain(requests: list[dict[str, Any] | bytes]) -> int:
    """How many of ``requests`` are plain ``tools/call`` lines (our route takes those)."""
    return sum(plain_call(r if isinstance(r, bytes) else json.dumps(r).encode()) is not None for r in requests)


PLAIN_IN_TABLE = _plain(TABLE)
assert PLAIN_IN_TABLE == len(TABLE) - 5  # the ids and arguments js_numbers may rewrite, the floats

FALLBACKS: list[dict[str, Any] | bytes] = [
    _call(30, "read", {"file_path": "a.txt"}, _meta={"progressToken": "p"}),
    _call(31, "read", {"file_path": "a.txt"}, _meta={}),
    _call(32, "nope", {}),
    {"jsonrpc": "2.0", "id": 33, "method": "tools/call", "params": {"name": 5, "arguments": {}}},
    _call(34, "read", {"file_path": "a.txt"}, task={"ttl": 1000}),
    {"jsonrpc": "2.0", "id": 35, "method": "tools/call"},
    {"jsonrpc": "2.0", "id": 36, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 37, "method": "ping"},
]


@pytest.mark.parametrize("version", HANDSHAKE_PROTOCOL_VERSIONS)
def test_every_answer_is_the_sdks_byte_for_byte(tmp_path: Path, version: str) -> None:
    answers, served = _both(tmp_path / "w", version, TABLE + FALLBACKS)
    assert served == PLAIN_IN_TABLE
    assert all(answers[1 : 1 + len(TABLE)])  # every request was answered
    image = json.loads(answers[1 + TABLE.index(_call(14, "read_image", {"file_path": "pic.png"}))])
    assert image["result"]["content"][-1]["type"] == "image"


def test_small_reads_are_answered_without_the_sdk(tmp_path: Path) -> None:
    """A client that sends nothing but ``initialize`` and plain calls never has the SDK attached."""
    root = tmp_path / "w"
    _workspace(root)
    client = InProcess(_context(root), root)
    client.initialize("2025-06-18")
    for number in range(1, 6):
        client.send(_call(number, "read", {"file_path": "a.txt", "offset": number}))
        assert json.loads(client.recv())["id"] == number
    client.close()
    assert client.counts.calls == 5 and not client.counts.sdk


def test_an_unmodified_read_answer_round_trips_the_registry_text(tmp_path: Path) -> None:
    answers, served = _both(tmp_path / "w", "2025-06-18", [_call(1, "read", {"file_path": "a.txt"})])
    assert served == 1
    result = json.loads(answers[1])["result"]
    assert result["isError"] is False and "1: line 1" in result["content"][0]["text"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
ids = st.integers(-(2**64), 2**64) | st.text(max_size=6)
requests = st.lists(
    st.builds(lambda i, args: _call(i, "read", args), ids,
              st.fixed_dictionaries({"file_path": st.sampled_from(["a.txt", "big.txt", "nope", "sub"])},
                                    optional={"offset": json_values, "limit": json_values}) | json_values),
    min_size=1, max_size=4,
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(version=st.sampled_from(HANDSHAKE_PROTOCOL_VERSIONS), calls=requests)
def test_generated_calls_get_the_sdks_bytes(tmp_path: Path, version: str, calls: list[dict[str, Any]]) -> None:
    try:
        lines = [json.dumps(call, allow_nan=False).encode() for call in calls]
    except ValueError:  # an infinite float: not JSON
        return
    _answers, served = _both(tmp_path / "w", version, lines)  # type: ignore[arg-type]
    assert served == _plain(lines)  # type: ignore[arg-type]


def test_a_registry_that_raises_gets_the_sdks_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(self: Any, *args: Any, **kwargs: Any) -> ToolResult:
        raise RuntimeError("registry bug")

    monkeypatch.setattr(ToolRegistry, "execute", broken)
    answers, served = _both(tmp_path / "w", "2025-11-25", [_call(1, "read", {"file_path": "a.txt"})])
    assert served == 1
    assert json.loads(answers[1]) == {"jsonrpc": "2.0", "id": 1, "error": {"code": 0, "message": "registry bug"}}


def test_before_initialize_every_call_goes_to_the_sdk(tmp_path: Path) -> None:
    root = tmp_path / "w"
    _workspace(root)
    client = InProcess(_context(root), root)
    client.send(_call(1, "read", {"file_path": "a.txt"}))
    assert b'"error"' in client.recv()  # the SDK's answer to a call before initialize
    client.close()
    assert client.counts.calls == 0


def _roots_conversation(root: Path, *, ours: bool) -> tuple[list[bytes], int]:
    """A client declaring roots (M3): ``sub`` first, then, after a change, the whole root."""
    _workspace(root)
    client = InProcess(_context(root), root, sdk_only=not ours)
    answers = [client.initialize("2025-06-18", {"roots": {"listChanged": True}})]
    roots = [[(root / "sub").as_uri()], [root.as_uri()]]

    def answer_roots() -> None:
        question = json.loads(client.recv())
        assert question["method"] == "roots/list"  # asked with the owner's first call (after a change)
        client.send({"jsonrpc": "2.0", "id": question["id"], "result": {"roots": [{"uri": u} for u in roots.pop(0)]}})

    client.send(_call(1, "read", {"file_path": "sub/b.py"}))
    answer_roots()
    answers.append(client.recv())
    for number, path in ((2, str(root / "a.txt")), (3, "b.py")):  # outside the client's roots, then inside
        client.send(_call(number, "read", {"file_path": path}))
        answers.append(client.recv())
    client.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
    client.send(_call(4, "read", {"file_path": str(root / "a.txt")}))
    answer_roots()
    answers.append(client.recv())
    client.send(_call(5, "read", {"file_path": str(root / "a.txt")}))
    answers.append(client.recv())
    answers.append(client.close())
    return answers, client.counts.calls


def test_a_client_with_roots_is_asked_and_served_on_our_route_as_on_the_sdks(tmp_path: Path) -> None:
    ours, served = _roots_conversation(tmp_path / "w", ours=True)
    sdk, _ = _roots_conversation(tmp_path / "w", ours=False)
    assert ours == sdk
    assert served == 5  # calls 1 and 4 ask for the roots first, as the SDK's handler does
    assert b"outside the workspace" in ours[2] and b'"isError":false' in ours[3]  # a.txt is outside sub
    assert b'"isError":false' in ours[4] and b'"isError":false' in ours[5]  # the whole root since the change


@pytest.fixture
def held(tmp_path: Path) -> Iterator[tuple[Path, Gate]]:
    root = tmp_path / "w"
    _workspace(root)
    yield root, Gate()


def _held_client(root: Path, gate: Gate, *, ours: bool) -> InProcess:
    ctx = _context(root, gate)
    client = InProcess(ctx, root, sdk_only=not ours)
    client.initialize("2025-06-18")
    return client


@pytest.mark.parametrize("ours", [True, False])
def test_a_cancelled_call_of_ours_is_aborted_and_never_answered(held: tuple[Path, Gate], ours: bool) -> None:
    root, gate = held
    client = _held_client(root, gate, ours=ours)
    client.send(_call(7, "hold"))
    assert gate.started.wait(WAIT)
    client.send(_call(8, "read", {"file_path": "a.txt"}))  # waits for the exclusive call 7
    client.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "8"}})
    client.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "x"}})
    client.send({"jsonrpc": "2.0", "id": 9, "method": "ping"})
    assert json.loads(client.recv()) == {"jsonrpc": "2.0", "id": 9, "result": {}}  # 7 and 8: no answer
    assert client.close() == b""
    assert gate.aborted == [True]
    assert client.counts.calls == (2 if ours else 0)


@pytest.mark.parametrize("ours", [True, False])
def test_a_call_the_sdk_serves_keeps_its_place_behind_one_of_ours(held: tuple[Path, Gate], ours: bool) -> None:
    root, gate = held
    client = _held_client(root, gate, ours=ours)
    client.send(_call(1, "hold"))  # ours (unless SDK only), exclusive
    assert gate.started.wait(WAIT)
    client.send(_call(2, "read", {"file_path": "a.txt"}, _meta={"progressToken": 2}))  # the SDK's
    client.send(_call(3, "read", {"file_path": "a.txt"}))  # the SDK's too: 2 is not answered yet
    assert client.recv(timeout=0.5) == b""  # both wait for the exclusive call 1
    gate.release.set()
    answers = [json.loads(client.recv()) for _ in range(3)]
    assert sorted(a["id"] for a in answers) == [1, 2, 3]
    assert client.close() == b""
    assert client.counts.calls == (1 if ours else 0)


def test_a_registry_that_raises_after_suspending_gets_the_sdks_error(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(self: Any, *args: Any, **kwargs: Any) -> ToolResult:
        await anyio.sleep(0.01)  # suspends
        raise RuntimeError("late registry bug")

    monkeypatch.setattr(ToolRegistry, "execute", broken)
    answers, served = _both(tmp_path / "w", "2025-06-18", [_call(1, "read", {"file_path": "a.txt"}),
                                                            _call(2, "read", {"file_path": "a.txt"})])
    assert served == 2
    assert json.loads(answers[2]) == {"jsonrpc": "2.0", "id": 2, "error": {"code": 0, "message": "late registry bug"}}


@pytest.mark.parametrize("ours", [True, False])
def test_a_fast_call_behind_a_suspended_concurrency_safe_one_is_answered_first(held: tuple[Path, Gate],
                                                                                ours: bool) -> None:
    """a suspended call does not hold the reading up: the read after it (parallel with it under
    the scheduler's rules) is read, run and answered while it still waits"""
    root, gate = held
    client = _held_client(root, gate, ours=ours)
    client.send(_call(1, "hold_read"))
    assert gate.started.wait(WAIT)
    client.send(_call(2, "read", {"file_path": "a.txt"}))
    assert json.loads(client.recv())["id"] == 2
    gate.release.set()
    assert json.loads(client.recv())["result"]["content"][0]["text"] == "released"
    assert client.close() == b""
    assert client.counts.calls == (2 if ours else 0)


@pytest.mark.parametrize("ours", [True, False])
def test_a_fast_call_behind_a_suspended_exclusive_one_waits_for_it(held: tuple[Path, Gate], ours: bool) -> None:
    """arrival order: a read after an exclusive call that suspended runs after it ends"""
    root, gate = held
    client = _held_client(root, gate, ours=ours)
    client.send(_call(1, "hold"))
    assert gate.started.wait(WAIT)
    client.send(_call(2, "read", {"file_path": "a.txt"}))
    client.send(_call(3, "read", {"file_path": "a.txt", "limit": 1}))
    assert client.recv(timeout=0.5) == b""
    gate.release.set()
    assert [json.loads(client.recv())["id"] for _ in range(3)] == [1, 2, 3]
    assert client.close() == b""
    assert client.counts.calls == (3 if ours else 0)


@pytest.mark.parametrize("ours", [True, False])
def test_a_call_in_flight_when_stdin_ends_is_answered(held: tuple[Path, Gate], ours: bool) -> None:
    root, gate = held
    client = _held_client(root, gate, ours=ours)
    client.send(_call(1, "hold_read"))
    assert gate.started.wait(WAIT)
    client.end_input()
    time.sleep(0.2)
    gate.release.set()
    assert json.loads(client.recv())["result"]["content"][0]["text"] == "released"
    client.close()
    assert client.counts.calls == (1 if ours else 0)


def test_after_the_sdk_is_attached_plain_calls_are_still_ours(tmp_path: Path) -> None:
    """A ``ping`` attaches the SDK (it is given our ``initialize`` first; its answer to it is
    dropped); the calls after it still take our route."""
    root = tmp_path / "w"
    _workspace(root)
    client = InProcess(_context(root), root)
    answer = json.loads(client.initialize("2025-06-18"))
    assert answer["id"] == 0 and answer["result"]["protocolVersion"] == "2025-06-18"
    client.send({"jsonrpc": "2.0", "id": 9, "method": "ping"})
    assert json.loads(client.recv()) == {"jsonrpc": "2.0", "id": 9, "result": {}}
    client.send(_call(1, "read", {"file_path": "a.txt"}))
    assert b'"isError":false' in client.recv()
    assert client.close() == b""
    assert client.counts.calls == 1 and client.counts.sdk


def test_the_switch_reads_the_environment() -> None:
    assert sdk_only_from_env({}) is False
    assert sdk_only_from_env({"DSH_FS_MCP_SDK_ONLY": "0"}) is False
    for on in ("1", "on", " TRUE ", "yes"):
        assert sdk_only_from_env({"DSH_FS_MCP_SDK_ONLY": on}) is True


def test_serve_stdio_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "w"
    _workspace(root)
    monkeypatch.setenv("DSH_FS_MCP_SDK_ONLY", "1")
    client = InProcess(_context(root), root, sdk_only=None)
    client.initialize("2025-06-18")
    client.send(_call(1, "read", {"file_path": "a.txt"}))
    assert b'"isError":false' in client.recv()
    client.close()
    assert client.counts.calls == 0


@pytest.mark.parametrize(("capabilities", "ours_calls"), [({"elicitation": {}}, 0), ({}, 1)])
def test_under_a_sandbox_a_client_that_can_be_asked_goes_to_the_sdk(
    tmp_path: Path, capabilities: dict[str, Any], ours_calls: int
) -> None:
    from dsh_fs.mcp.approval import approve_by_elicitation

    root = tmp_path / "w"
    _workspace(root)
    ctx = dsh_fs.create_context(root=str(root), sandbox="read-only", approval=approve_by_elicitation)
    client = InProcess(ctx, root)
    client.initialize("2025-06-18", capabilities)
    client.send(_call(1, "read", {"file_path": "a.txt"}))
    assert b'"isError":false' in client.recv()
    client.close()
    assert client.counts.calls == ours_calls


def _pipelined(root: Path, *, ours: bool) -> tuple[dict[Any, bytes], int]:
    _workspace(root)
    client = InProcess(_context(root), root, sdk_only=not ours)
    client.initialize("2025-11-25")
    calls = [
        _call(1, "read", {"file_path": "a.txt"}),
        _call(2, "edit", {"file_path": "a.txt", "old_string": "line 2\n", "new_string": "line two\n"}),
        _call(3, "read", {"file_path": "a.txt", "limit": 3}),
        _call(4, "write", {"file_path": "n.txt", "content": "x\n"}),
        _call(5, "read", {"file_path": "n.txt"}),
        _call(6, "edit", {"file_path": "n.txt", "old_string": "x", "new_string": "y"}),
    ]
    for call in calls:  # sent together: the answers come as the calls finish
        client.send(call)
    answers = {}
    for _ in calls:
        line = client.recv()
        answers[json.loads(line)["id"]] = line
    client.close()
    return answers, client.counts.calls


def test_calls_sent_together_run_in_arrival_order_with_the_sdks_answers(tmp_path: Path) -> None:
    ours, served = _pipelined(tmp_path / "w", ours=True)
    sdk, _ = _pipelined(tmp_path / "w", ours=False)
    assert served == 6
    assert ours == sdk
    assert b"line two" in ours[3] and b'"isError":false' in ours[6]  # each edit after the read before it


texts = st.text(st.characters(codec="utf-8"), max_size=12) | st.text(st.characters(categories=["Cs", "Ll"]), max_size=4)
meta_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
outputs = st.builds(
    lambda content, meta: ToolOutput(content=content, meta=meta),
    st.lists(texts.map(text_block) | st.binary(max_size=12).map(lambda data: image_block(data, "image/png")),
             max_size=3),
    st.none() | st.dictionaries(texts, meta_values, max_size=3) | meta_values,
)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(version=st.sampled_from(HANDSHAKE_PROTOCOL_VERSIONS), output=outputs)
@example(version="2024-11-05", output=ToolOutput(content=[], meta={"\ud800": None}))  # the runner's code-0 error
def test_generated_results_get_the_sdks_bytes(tmp_path: Path, version: str, output: ToolOutput) -> None:
    """Whatever a tool returns (lone surrogates, NaN and huge numbers in ``_meta``, images),
    both paths write the same line (or the same error)."""

    async def give(arguments: dict[str, Any], execution: Any) -> ToolOutput:
        return output

    def converse(ours: bool) -> tuple[list[bytes], int]:
        root = tmp_path / "w"
        _workspace(root)
        ctx = _context(root)
        ctx.tools.register(ToolDefinition(name="give", description="g", parameters={}, execute=give))
        client = InProcess(ctx, root, sdk_only=not ours)
        client.initialize(version)
        client.send(_call(1, "give"))
        answers = [client.recv()]
        answers.append(client.close())
        return answers, client.counts.calls

    ours, served = converse(True)
    sdk, _ = converse(False)
    assert served == 1
    assert ours == sdk and ours[0]


@pytest.mark.parametrize("ours", [True, False])
def test_a_client_that_does_not_read_its_answers_holds_at_most_in_flight_max_results(tmp_path: Path,
                                                                                     ours: bool) -> None:
    """backpressure: with stdout full, stdin is read no further once ``IN_FLIGHT_MAX`` requests
    are unanswered (memory stays bounded); every answer still comes once the client reads"""
    from dsh_fs.mcp.stdio.dispatch import IN_FLIGHT_MAX

    root = tmp_path / "ws"
    _workspace(root)
    ctx = _context(root)
    ran: list[int] = []

    async def bulky(arguments: dict[str, Any], execution: Any) -> list[Any]:
        ran.append(1)
        return [text_block("x" * 16384)]

    ctx.tools.register(ToolDefinition(name="bulky", description="16 KiB", parameters={}, execute=bulky,
                                      is_concurrency_safe=lambda _a: True))
    client = InProcess(ctx, root, sdk_only=not ours)
    client.initialize("2025-11-25")
    calls = 1500  # (their lines fill the stdin pipe: the sender blocks once the server stops reading)

    def flood() -> None:
        for n in range(1, calls + 1):
            client.send(_call(n, "bulky", {}))  # blocks once the server stops reading

    sender = threading.Thread(target=flood, daemon=True)
    sender.start()
    # nobody reads stdout meanwhile: the server reaches its cap (awaited, under a guard), and a
    # moment later it has still run no more than the cap allows
    deadline = time.monotonic() + WAIT
    while len(ran) < IN_FLIGHT_MAX and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(1)
    assert IN_FLIGHT_MAX <= len(ran) <= IN_FLIGHT_MAX + 8, len(ran)  # (+ the few answers the stdout pipe took)
    assert sender.is_alive()  # its writes are held back
    answered = set()
    while len(answered) < calls:
        line = client.recv()
        assert line, f"{len(answered)} answers"
        answer = json.loads(line)
        assert answer["result"]["content"][0]["text"] == "x" * 16384
        answered.add(answer["id"])
    sender.join(WAIT)
    assert answered == set(range(1, calls + 1)) and len(ran) == calls
    client.close()
