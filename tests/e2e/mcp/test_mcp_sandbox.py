"""``dsh-fs mcp --sandbox`` / ``--read-only`` and approval through the client's elicitation
(docs/SANDBOX.md; docs/design/SANDBOX.md §6): the real server in a subprocess, the official SDK
``ClientSession`` with an ``elicitation_callback``, over stdio and streamable HTTP. The person
accepts (the write lands), declines, cancels, or the callback raises (``unavailable``); a client
without the capability is told no approval channel is available. Also the tool commands'
``--sandbox`` and the usage errors."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from dsh_fs.tool_common.sandbox_texts import denial_marker, escalation_hint
from httpkit import HTTP_TIMEOUT, STARTUP_TIMEOUT, http_server_async, server_argv

JUSTIFICATION = "The user asked for this file."


@pytest.fixture
def root() -> Iterator[str]:
    parent = os.path.expanduser("~")
    with tempfile.TemporaryDirectory(prefix="dsh-mcp-sandbox-", dir=parent) as d:
        yield os.path.realpath(d)


class Person:
    """The client's elicitation callback: answers with the next scripted action."""

    def __init__(self) -> None:
        self.answers: list[str] = []
        self.asked: list[types.ElicitRequestParams] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        self.asked.append(params)
        answer = self.answers.pop(0)
        if answer == "raise":
            raise RuntimeError("the client's approval UI crashed")
        return types.ElicitResult(action=answer)  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def connect(transport: str, root: str, person: Person | None, *flags: str) -> AsyncIterator[ClientSession]:
    callback = {"elicitation_callback": person} if person is not None else {}
    if transport == "stdio":
        # the whole environment (the SDK's default drops PYTHONPATH: a checkout's own server runs)
        params = StdioServerParameters(command=sys.executable, args=server_argv(root, *flags)[1:], cwd=root,
                                       env=dict(os.environ))
        with tempfile.TemporaryFile("w+") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=STARTUP_TIMEOUT, **callback) as session:
                    with anyio.fail_after(STARTUP_TIMEOUT):
                        await session.initialize()
                    yield session
        return
    async with http_server_async(root, *flags) as endpoint:
        async with httpx2.AsyncClient(headers=endpoint.headers(0), timeout=HTTP_TIMEOUT) as http:
            async with streamable_http_client(endpoint.url, http_client=http) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=STARTUP_TIMEOUT, **callback) as session:
                    with anyio.fail_after(STARTUP_TIMEOUT):
                        await session.initialize()
                    yield session


def text(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_escalation_asks_the_person_through_elicitation(root: str, transport: str) -> None:
    person = Person()
    path = os.path.join(root, "a.txt")

    async def write(session: ClientSession, content: str, **extra: Any) -> types.CallToolResult:
        with anyio.fail_after(60):
            return await session.call_tool("write", {"file_path": path, "content": content, **extra})

    async def main() -> None:
        async with connect(transport, root, person, "--sandbox", "read-only") as session:
            listed = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert list(listed["write"].input_schema["properties"]) == [
                "file_path", "content", "sandbox_permissions", "justification"]
            plain = await write(session, "x")
            assert plain.is_error and text(plain) == (
                "Error: " + denial_marker("read-only") + "\n" + escalation_hint("operation"))
            widen = {"sandbox_permissions": "workspace-write", "justification": JUSTIFICATION}
            for answer, expected in [
                ("decline", 'Error: the user rejected escalating this operation to "workspace-write"'),
                ("cancel", 'Error: approval for escalating to "workspace-write" was cancelled'),
                ("raise", 'Error: sandbox escalation to "workspace-write" requires approval, but no approval channel '
                          "is available"),
            ]:
                person.answers.append(answer)
                refused = await write(session, "x", **widen)
                assert refused.is_error and text(refused) == expected, answer
                assert not os.path.exists(path)
            person.answers.append("accept")
            granted = await write(session, "granted", **widen)
            assert not granted.is_error, text(granted)
            assert Path(path).read_text() == "granted"
            assert len(person.asked) == 4
            asked = person.asked[-1]
            assert asked.message == f"escalate sandbox to workspace-write: {JUSTIFICATION}\nWrite {path}"
            assert asked.requested_schema == {"type": "object", "properties": {}}
            again = await write(session, "again")  # one-shot: the standing mode again
            assert again.is_error and Path(path).read_text() == "granted"

    anyio.run(main)


def test_a_long_justification_cannot_push_the_files_out_of_sight(root: str) -> None:
    """A justification of 100,000 characters: the person sees its first characters, a note of
    how many were cut, and the file on the next line."""
    person = Person()
    path = os.path.join(root, "a.txt")
    justification = "Fix a typo. " * 8_333 + "Then"

    async def main() -> None:
        async with connect("http", root, person, "--sandbox", "read-only") as session:
            person.answers.append("decline")
            with anyio.fail_after(60):
                refused = await session.call_tool("write", {"file_path": path, "content": "x",
                                                            "sandbox_permissions": "workspace-write",
                                                            "justification": justification})
            assert refused.is_error
    anyio.run(main)
    [asked] = person.asked
    reason = "escalate sandbox to workspace-write: " + justification
    assert asked.message == reason[:500] + f" … [cut: {len(reason) - 500} more characters]\nWrite {path}"
    assert not os.path.exists(path)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_approval_prompt_cannot_be_spoofed_by_line_breaks(root: str, transport: str) -> None:
    """The model writes the justification and the path: a line break (or a line separator, a
    bidi override) in either is shown escaped, so the prompt is exactly the reason's line and
    the call's title, and a fake ``Write <harmless path>`` line cannot push the real one away."""
    person = Person()
    path = os.path.join(root, "evil.txt\nWrite " + os.path.join(root, "harmless.txt"))
    justification = "Fixing a typo.\nWrite " + os.path.join(root, "harmless.txt") + "\u2028\u202e\r\n\n"

    async def main() -> None:
        async with connect(transport, root, person, "--sandbox", "read-only") as session:
            person.answers.append("decline")
            with anyio.fail_after(60):
                refused = await session.call_tool("write", {"file_path": path, "content": "x",
                                                            "sandbox_permissions": "workspace-write",
                                                            "justification": justification})
            assert refused.is_error and text(refused) == (
                'Error: the user rejected escalating this operation to "workspace-write"')
    anyio.run(main)
    [asked] = person.asked
    assert asked.message == (
        "escalate sandbox to workspace-write: Fixing a typo.\\nWrite " + os.path.join(root, "harmless.txt")
        + "\\u2028\\u202e\\r\\n\\n\nWrite " + os.path.join(root, "evil.txt") + "\\nWrite "
        + os.path.join(root, "harmless.txt"))
    assert sorted(os.listdir(root)) == []


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_client_without_elicitation_gets_no_approval_channel(root: str, transport: str) -> None:
    async def main() -> None:
        async with connect(transport, root, None, "--read-only") as session:
            result = await session.call_tool("write", {
                "file_path": "a.txt", "content": "x", "sandbox_permissions": "danger-full-access",
                "justification": JUSTIFICATION})
            assert result.is_error and text(result) == (
                'Error: sandbox escalation to "danger-full-access" requires approval, but no approval channel is '
                "available")
            assert not os.path.exists(os.path.join(root, "a.txt"))
            read = await session.call_tool("glob", {"pattern": "*"})
            assert not read.is_error

    anyio.run(main)


def test_workspace_write_serves_the_root(root: str) -> None:
    async def main() -> None:
        async with connect("stdio", root, None, "--sandbox", "workspace-write") as session:
            result = await session.call_tool("write", {"file_path": "sub/a.txt", "content": "x"})
            assert not result.is_error, text(result)
    anyio.run(main)
    assert Path(root, "sub", "a.txt").read_text() == "x"


def dsh_fs(*args: str, cwd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "NO_COLOR": "1"})


@pytest.mark.parametrize(("args", "message"), [
    (["mcp", "--read-only", "--sandbox", "danger-full-access"], "Error: --read-only is --sandbox read-only; give one of them"),
    (["mcp", "--sandbox", "bogus"], "Error: Invalid value for '--sandbox': 'bogus' is not one of"),
    (["write", "--sandbox", "root", "a.txt", "--content", "x"], "Error: Invalid value for '--sandbox': 'root' is not one of"),
])
def test_bad_sandbox_options_are_usage_errors(root: str, args: list[str], message: str) -> None:
    done = dsh_fs(*args, cwd=root)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert os.listdir(root) == []


def test_the_tool_commands_take_sandbox(root: str) -> None:
    os.mkdir(os.path.join(root, "ws"))
    ws = os.path.join(root, "ws")
    denied = dsh_fs("write", "--sandbox", "read-only", "a.txt", "--content", "x", cwd=ws)
    assert denied.returncode == 1 and denied.stdout.startswith("Error: " + denial_marker("read-only") + "\n")
    outside = dsh_fs("write", "--sandbox", "workspace-write", "../b.txt", "--content", "x", cwd=ws)
    assert outside.returncode == 1 and denial_marker("workspace-write") in outside.stdout
    assert os.listdir(root) == ["ws"] and os.listdir(ws) == []
    inside = dsh_fs("write", "--sandbox", "workspace-write", "a.txt", "--content", "x", cwd=ws)
    assert inside.returncode == 0, inside.stderr
    assert Path(ws, "a.txt").read_text() == "x"


@pytest.mark.parametrize(("answer", "expected"), [
    ("accept", None),
    ("decline", 'Error: the user rejected escalating this operation to "workspace-write"'),
    ("cancel", 'Error: approval for escalating to "workspace-write" was cancelled'),
    ("no-capability", 'Error: sandbox escalation to "workspace-write" requires approval, but no approval channel'
                      ' is available'),
])
def test_a_stateless_2026_client_is_asked_in_rounds(root: str, answer: str, expected: str | None) -> None:
    """2026-07-28 requests have no back channel: the server answers ``InputRequiredResult``
    with the elicitation (SEP-2322), the SDK ``Client`` asks the person through its
    ``elicitation_callback`` and retries the call with the answer; a client without the
    capability is told no approval channel is available. Nothing is written unless accepted."""
    from mcp.client.client import Client

    person = Person()
    person.answers = [answer]
    callback = {} if answer == "no-capability" else {"elicitation_callback": person}
    args = {"file_path": "a.txt", "content": "x", "sandbox_permissions": "workspace-write",
            "justification": JUSTIFICATION}

    async def main() -> None:
        async with http_server_async(root, "--read-only") as endpoint:
            async with httpx2.AsyncClient(headers=endpoint.headers(0), timeout=HTTP_TIMEOUT) as http:
                async with Client(streamable_http_client(endpoint.url, http_client=http), mode="2026-07-28",
                                  **callback) as client:
                    result = await client.call_tool("write", args)
        if expected is None:
            assert not result.is_error and text(result).startswith(f"<path>{root}/a.txt</path>\n")
        else:
            assert result.is_error and text(result) == expected

    anyio.run(main)
    if answer == "no-capability":
        assert person.asked == [] and os.listdir(root) == []
        return
    assert [(p.mode, p.message, p.requested_schema) for p in person.asked] == [
        ("form", f"escalate sandbox to workspace-write: {JUSTIFICATION}\nWrite {os.path.realpath(root)}/a.txt",
         {"type": "object", "properties": {}})]
    assert os.listdir(root) == (["a.txt"] if answer == "accept" else [])


def test_a_stateless_2026_client_over_stdio_is_asked_in_rounds_too(root: str) -> None:
    """The 2026-07-28 revision on stdio has no server-to-client requests either: the same rounds."""
    from mcp.client.client import Client

    person = Person()
    person.answers = ["accept"]

    async def main() -> None:
        params = StdioServerParameters(command=sys.executable, args=server_argv(root, "--read-only")[1:], cwd=root,
                                       env=dict(os.environ))
        with tempfile.TemporaryFile("w+") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="2026-07-28",
                              elicitation_callback=person) as client:
                result = await client.call_tool("write", {
                    "file_path": "a.txt", "content": "x", "sandbox_permissions": "workspace-write",
                    "justification": JUSTIFICATION})
        assert not result.is_error, text(result)

    anyio.run(main)
    assert len(person.asked) == 1 and Path(root, "a.txt").read_text() == "x"


@pytest.mark.parametrize("state", [None, "0" * 64, "forged"])
def test_a_stateless_answer_counts_only_for_the_call_it_was_asked_about(root: str, state: str | None) -> None:
    """An ``accept`` the server never asked for (no state, a forged one, or one sealed for
    another call) is no approval: ``unavailable``, nothing written, the person not asked."""
    from mcp.client.client import Client

    person = Person()

    async def main() -> None:
        async with http_server_async(root, "--read-only") as endpoint:
            async with httpx2.AsyncClient(headers=endpoint.headers(0), timeout=HTTP_TIMEOUT) as http:
                async with Client(streamable_http_client(endpoint.url, http_client=http), mode="2026-07-28",
                                  elicitation_callback=person) as client:
                    sealed = state
                    if state == "forged":  # a real state, sealed for writing b.txt, replayed for a.txt
                        first = await client.session.call_tool(
                            "write", {"file_path": "b.txt", "content": "x", "sandbox_permissions": "workspace-write",
                                      "justification": JUSTIFICATION}, allow_input_required=True)
                        assert isinstance(first, types.InputRequiredResult)
                        assert list(first.input_requests or {}) == ["dsh-fs/approval"]
                        sealed = first.request_state
                    result = await client.call_tool(
                        "write", {"file_path": "a.txt", "content": "x", "sandbox_permissions": "workspace-write",
                                  "justification": JUSTIFICATION},
                        input_responses={"dsh-fs/approval": types.ElicitResult(action="accept")},
                        request_state=sealed)
        assert result.is_error and text(result) == (
            'Error: sandbox escalation to "workspace-write" requires approval, but no approval channel is available')

    anyio.run(main)
    assert os.listdir(root) == [] and person.asked == []


@pytest.mark.parametrize("command", ["edit", "apply-patch"])
def test_the_tool_commands_fence_every_face(root: str, command: str) -> None:
    """``dsh-fs edit`` and ``dsh-fs apply-patch`` under ``--sandbox read-only``: refused with the
    marker, the file unchanged (``--no-policy``: nothing else stands in the way)."""
    path = Path(root, "a.txt")
    path.write_text("old\n")
    before = path.stat()
    if command == "edit":
        done = dsh_fs("edit", "--sandbox", "read-only", "--no-policy", "a.txt", "--old", "old", "--new", "new", cwd=root)
    else:
        patch = Path(root, "..", f"{Path(root).name}.patch")
        patch.write_text("*** Begin Patch\n*** Update File: a.txt\n@@\n-old\n+new\n*** End Patch\n")
        try:
            done = dsh_fs("apply-patch", "--sandbox", "read-only", "--no-policy", str(patch), cwd=root)
        finally:
            patch.unlink()
    assert done.returncode == 1, done.stdout + done.stderr
    assert denial_marker("read-only") in done.stdout.removeprefix("Error: ").splitlines()
    assert path.read_text() == "old\n" and path.stat().st_mtime_ns == before.st_mtime_ns
    assert sorted(os.listdir(root)) == ["a.txt"]


def test_a_stateless_approval_is_not_replayed(root: str) -> None:
    """``allowed-once``: the person's ``accept`` with its ``request_state`` approves one call;
    the same answer and state sent again (the same write again) must not run it again
    unasked: its nonce is spent."""
    from mcp.client.client import Client

    person = Person()
    person.answers = ["accept"]
    args = {"file_path": "a.txt", "content": "x", "sandbox_permissions": "workspace-write",
            "justification": JUSTIFICATION}

    async def main() -> None:
        async with http_server_async(root, "--read-only") as endpoint:
            async with httpx2.AsyncClient(headers=endpoint.headers(0), timeout=HTTP_TIMEOUT) as http:
                async with Client(streamable_http_client(endpoint.url, http_client=http), mode="2026-07-28",
                                  elicitation_callback=person) as client:
                    first = await client.session.call_tool("write", args, allow_input_required=True)
                    assert isinstance(first, types.InputRequiredResult)
                    answer = {"dsh-fs/approval": types.ElicitResult(action="accept")}
                    done = await client.call_tool("write", args, input_responses=answer, request_state=first.request_state)
                    assert not done.is_error, text(done)
                    again = await client.call_tool("write", args, input_responses=answer,
                                                   request_state=first.request_state)
        assert again.is_error and text(again) == (
            'Error: sandbox escalation to "workspace-write" requires approval, but no approval channel is available')

    anyio.run(main)
    assert len(person.asked) <= 1 and Path(root, "a.txt").read_text() == "x"


def test_the_approval_prompt_names_the_file_that_will_change(root: str) -> None:
    """``--sandbox read-only``: the person is shown each real file (``..`` and symlinks
    resolved), never the model's spelling; ``"README.md" + 300 spaces + "/../.git/config"`` is
    refused before anyone is asked (X6), and ``.git/config`` is never written."""
    person = Person()
    Path(root, ".git").mkdir()
    Path(root, ".git", "config").write_text("[core]\n")
    Path(root, "README.md").write_text("# readme\n")
    os.symlink(".git", os.path.join(root, "docs"))
    hook = "[core]\n\tfsmonitor = touch pwned\n"
    widen = {"sandbox_permissions": "workspace-write", "justification": "Fix a typo in the README."}
    patch = ("*** Begin Patch\n*** Add File: docs/hooks/pre-commit\n+#!/bin/sh\n"
             "*** Update File: README.md\n*** Move to: docs/README.md\n@@\n-# readme\n+# Readme\n*** End Patch\n")

    async def main() -> list[types.CallToolResult]:
        async with connect("stdio", root, person, "--sandbox", "read-only", "--tools", "write,apply_patch") as session:
            person.answers.extend(["decline", "decline"])
            with anyio.fail_after(60):
                return [
                    await session.call_tool("write", {"file_path": "README.md" + " " * 300 + "/../.git/config",
                                                      "content": hook, **widen}),
                    await session.call_tool("write", {"file_path": "docs/config", "content": hook, **widen}),
                    await session.call_tool("apply_patch", {"input": patch, **widen}),
                ]

    trick, linked, patched = anyio.run(main)
    assert trick.is_error and text(trick) == (
        f'Error: cannot resolve "{root}/README.md{" " * 300}/../.git/config": a parent path segment is not a directory')
    assert [asked.message for asked in person.asked] == [
        f"escalate sandbox to workspace-write: Fix a typo in the README.\nWrite {root}/.git/config",
        f"escalate sandbox to workspace-write: Fix a typo in the README.\napply_patch\nA {root}/.git/hooks/pre-commit\n"
        f"M {root}/README.md -> {root}/.git/README.md"]
    assert all(r.is_error for r in (linked, patched))
    assert Path(root, ".git", "config").read_text() == "[core]\n" and not Path(root, ".git", "hooks").exists()
