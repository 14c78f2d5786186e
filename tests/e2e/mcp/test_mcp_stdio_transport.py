"""The stdio server's transport (``dsh_fs.mcp.stdio``) with a stand-in for the SDK's server behind
its SDK route (``mcpkit.serve_sdk_standin``): every reply is written, through the end of input;
stray output never reaches the wire. The SDK route's line codec (``parse_line``, ``recover_id``,
``encode_message``) is tested on its own in ``tests/unit/mcp/test_mcp_sdk_codec.py``.

Through a real ``dsh-fs mcp`` process: ``tests/robustness/test_hostile_args.py``
(``test_mcp_answers_every_request``) and the other ``test_mcp_*.py`` files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import anyio
import mcp.types as types
from mcp.shared.message import SessionMessage

from mcpkit import raw_request, serve_sdk_standin

TESTS = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(os.path.dirname(TESTS), "src")
DEEP = "[" * 5000 + "]" * 5000


# -- the transport ------------------------------------------------------------------------------


def test_every_request_is_answered_in_order_through_the_end_of_input() -> None:
    """An echo server on our transport: requests get results, lines that are not messages get
    our error replies (through the same writer), and nothing sent before the end of input is lost."""
    lines = [
        raw_request(1, "{}", method="ping"),
        "garbage",
        raw_request(2, '{"s":"\\ud800"}', method="ping"),
        "",
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        raw_request(3, '{"a":' + DEEP + "}", method="ping"),
        raw_request(4, "{}", method="ping"),
    ]
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    with os.fdopen(in_write, "wb") as feed:
        feed.write("".join(line + "\n" for line in lines).encode("utf-8"))
    seen: list[Any] = []

    async def serve(read_stream: Any, write_stream: Any) -> None:
        with anyio.fail_after(60):
            async with write_stream:
                async for item in read_stream:
                    assert isinstance(item, SessionMessage)
                    seen.append(item.message)
                    if isinstance(item.message, types.JSONRPCRequest):
                        result = {"echo": item.message.params}
                        await write_stream.send(
                            SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=item.message.id, result=result))
                        )

    with os.fdopen(in_read, "rb") as stdin, os.fdopen(out_write, "wb") as stdout:
        serve_sdk_standin(serve, stdin, stdout)
    with os.fdopen(out_read, "rb") as wire:
        out = wire.read()
    replies = [json.loads(line) for line in out.decode("utf-8").splitlines()]
    results = [r for r in replies if "result" in r]
    errors = [(r["id"], r["error"]["code"]) for r in replies if "error" in r]
    assert len(replies) == 5
    assert [r["id"] for r in results] == [1, 2, 4]
    assert results[1]["result"] == {"echo": {"s": "\ufffd"}}
    assert errors == [(None, types.PARSE_ERROR), (3, types.PARSE_ERROR)]
    assert [type(m).__name__ for m in seen] == ["JSONRPCRequest"] * 2 + ["JSONRPCNotification", "JSONRPCRequest"]


def test_stray_output_never_reaches_the_wire(tmp_path: Any) -> None:
    script = textwrap.dedent(
        """
        import os, subprocess, sys
        import mcp.types as types
        from mcp.shared.message import SessionMessage
        from mcpkit import serve_sdk_standin

        async def serve(read_stream, write_stream):
            async with write_stream:
                async for item in read_stream:
                    print("stray print", flush=True)
                    os.write(1, b"stray write\\n")
                    subprocess.run([sys.executable, "-c", "print('stray child')"], check=True)
                    assert sys.stdin.read() == ""  # fd 0 reads the null device
                    reply = types.JSONRPCResponse(jsonrpc="2.0", id=item.message.id, result={})
                    await write_stream.send(SessionMessage(reply))

        serve_sdk_standin(serve, None, None)
        print("after", flush=True)  # fd 1 is the wire again
        """
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (SRC, TESTS, os.environ.get("PYTHONPATH", "")) if p))
    proc = subprocess.run(
        [sys.executable, "-c", script], input=raw_request(1, "{}", method="ping") + "\n", capture_output=True,
        text=True, env=env, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == '{"jsonrpc":"2.0","id":1,"result":{}}\nafter\n'
    assert "stray print" in proc.stderr and "stray write" in proc.stderr and "stray child" in proc.stderr


def test_the_end_of_input_waits_for_the_answers_of_requests_in_flight() -> None:
    """The SDK cancels what is in flight when its input ends; our transport ends the input only
    once every request handed over is answered, or reported by the server as never to be
    answered (``on_request_unanswered``, as the SDK does for a request the client cancelled)."""
    lines = [
        raw_request(1, "{}", method="ping"),
        raw_request(2, "{}", method="ping"),
        raw_request(3, "{}", method="ping"),
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}',
    ]
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    with os.fdopen(in_write, "wb") as feed:
        feed.write("".join(line + "\n" for line in lines).encode("utf-8"))
    pending: dict[Any, SessionMessage] = {}

    async def serve(read_stream: Any, write_stream: Any) -> None:
        with anyio.fail_after(60):
            async with write_stream, anyio.create_task_group() as tg:

                async def answer_later(request_id: Any) -> None:
                    await anyio.sleep(0.2)
                    await write_stream.send(
                        SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result={}))
                    )

                async for item in read_stream:  # like the SDK: at the end of input, cancel the rest
                    assert isinstance(item, SessionMessage)
                    message = item.message
                    if isinstance(message, types.JSONRPCRequest) and message.id != 3:
                        tg.start_soon(answer_later, message.id)
                    elif isinstance(message, types.JSONRPCNotification):  # the cancellation of 3
                        assert pending[3].metadata is not None
                        await pending[3].metadata.on_request_unanswered()  # type: ignore[union-attr,misc]
                    if isinstance(message, types.JSONRPCRequest):
                        pending[message.id] = item
                tg.cancel_scope.cancel()

    with os.fdopen(in_read, "rb") as stdin, os.fdopen(out_write, "wb") as stdout:
        serve_sdk_standin(serve, stdin, stdout)
    with os.fdopen(out_read, "rb") as wire:
        replies = [json.loads(line) for line in wire.read().decode("utf-8").splitlines()]
    assert sorted(r["id"] for r in replies) == [1, 2]


def test_a_piped_session_gets_every_answer_when_stdin_closes_at_once(tmp_path: Any) -> None:
    """``printf … | dsh-fs mcp``: initialize and two writes (handled concurrently), then the end
    of input; both calls are answered (the SDK's shutdown alone often dropped them)."""
    root = str(tmp_path)
    calls = [("write", {"file_path": "a.txt", "content": "one\n"}),
             ("write", {"file_path": "b.txt", "content": "two\n"})]
    lines = [
        raw_request(0, '{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}',
              method="initialize"),
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        *(raw_request(i, json.dumps({"name": name, "arguments": args})) for i, (name, args) in enumerate(calls, 1)),
    ]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p))
    for _ in range(3):
        for name in os.listdir(root):
            os.remove(os.path.join(root, name))
        proc = subprocess.run(
            [sys.executable, "-m", "dsh_fs.cli.main", "mcp", "--root", root], input="\n".join(lines) + "\n",
            capture_output=True, text=True, env=env, timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        replies = {r["id"]: r for r in map(json.loads, proc.stdout.splitlines())}
        assert sorted(replies) == [0, 1, 2], proc.stdout
        assert not replies[1]["result"]["isError"] and not replies[2]["result"]["isError"], proc.stdout
        assert sorted(os.listdir(root)) == ["a.txt", "b.txt"]


def test_the_end_of_input_does_not_wait_once_stdout_is_broken() -> None:
    """A client that is gone (stdout broken) is owed nothing: requests read after the first
    failed write are not waited for either, so the transport ends with stdin."""
    lines = [raw_request(i, "{}", method="ping") for i in range(1, 6)]
    in_read, in_write = os.pipe()
    with os.fdopen(in_write, "wb") as feed:
        feed.write("".join(line + "\n" for line in lines).encode("utf-8"))

    class Broken:
        def write(self, data: bytes) -> int:
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self) -> None:
            pass

    async def serve(read_stream: Any, write_stream: Any) -> None:
        with anyio.fail_after(60):
            async with write_stream:
                async for item in read_stream:  # answers only the first: the rest never are
                    assert isinstance(item, SessionMessage) and isinstance(item.message, types.JSONRPCRequest)
                    if item.message.id == 1:
                        await write_stream.send(SessionMessage(
                            types.JSONRPCResponse(jsonrpc="2.0", id=item.message.id, result={})))

    with os.fdopen(in_read, "rb") as stdin:
        serve_sdk_standin(serve, stdin, Broken())  # ends (fail_after would raise otherwise)


def test_a_cancellation_naming_the_request_by_another_id_form_still_ends_the_session(tmp_path: Any) -> None:
    """The SDK matches ``"3"`` to request ``3`` and never answers a cancelled request; the
    transport learns that from the SDK itself, so closing stdin still ends the process."""
    root = str(tmp_path)
    big = json.dumps({"name": "write", "arguments": {"file_path": "big.txt", "content": "x" * (8 << 20)}})
    lines = [
        raw_request(0, '{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}',
              method="initialize"),
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        raw_request(3, big),
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"3"}}',
        raw_request(4, "{}", method="ping"),
    ]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p))
    proc = subprocess.run(
        [sys.executable, "-m", "dsh_fs.cli.main", "mcp", "--root", root], input="\n".join(lines) + "\n",
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    replies = {r["id"] for r in map(json.loads, proc.stdout.splitlines())}
    assert {0, 4} <= replies <= {0, 3, 4}  # 3 is answered only if it finished before the cancel


def test_a_tool_writing_to_fd_1_before_the_sdk_is_loaded_misses_the_wire(tmp_path: Any) -> None:
    """The standard descriptors are claimed before anything is served: a tool that writes to fd 1
    while the SDK is still held (our route, before its import) writes to stderr, not the wire."""
    script = textwrap.dedent(
        """
        import os, sys
        import dsh_fs
        from dsh_fs.core.tools import ToolDefinition, text_block
        from dsh_fs.mcp.stdio import serve_stdio

        async def stray(arguments, execution):
            os.write(1, b"stray write\\\\n")
            print("stray print", flush=True)
            return [text_block("done")]

        ctx = dsh_fs.create_context(root=sys.argv[1])
        ctx.tools.register(ToolDefinition(name="stray", description="s", parameters={}, execute=stray))
        counts = serve_stdio(ctx, root=sys.argv[1])
        print("sdk" if counts.sdk else "no sdk", flush=True)  # fd 1 is the wire again
        """
    )
    hold = tmp_path / "hold"
    hold.touch()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (SRC, TESTS, os.environ.get("PYTHONPATH", "")) if p),
               DSH_FS_MCP_TEST_HOLD_IMPORT=str(hold))
    lines = [
        raw_request(0, '{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}',
              method="initialize"),
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        raw_request(1, '{"name":"stray","arguments":{}}'),
    ]
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path)], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert [json.loads(line)["id"] for line in out[:2]] == [0, 1] and out[2:] == ["no sdk"], proc.stdout
    assert "stray write" in proc.stderr and "stray print" in proc.stderr
