"""D37 over MCP: under ``dsh-fs mcp --read-only`` a client that declared no ``elicitation`` can
never approve an escalation, so (default profile) ``tools/list`` shows it no
``sandbox_permissions``/``justification``, a refusal carries no escalation hint, and the
``initialize`` instructions name the sandbox mode (the reference's ``sandbox:policy`` sentence).
A client with ``elicitation``, and the reference profile, keep the reference's offer. The real
server in a subprocess, the official SDK client, stdio (early, lean and SDK paths) and HTTP."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from dsh_fs.tool_common.sandbox_texts import denial_marker, escalation_hint, policy_context
from httpkit import HTTP_TIMEOUT, http_server_async, server_argv

FIELDS = {"sandbox_permissions", "justification"}
POLICY = policy_context("read-only", [])


@pytest.fixture
def root() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="dsh-mcp-offer-", dir=os.path.expanduser("~")) as d:
        yield os.path.realpath(d)


async def refuse(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="decline")


@contextlib.asynccontextmanager
async def connect(transport: str, root: str, elicits: bool, *flags: str
                  ) -> AsyncIterator[tuple[ClientSession, types.InitializeResult]]:
    callback = {"elicitation_callback": refuse} if elicits else {}
    if transport == "stdio":
        params = StdioServerParameters(command=sys.executable, args=server_argv(root, *flags)[1:], cwd=root,
                                       env=dict(os.environ))
        with tempfile.TemporaryFile("w+") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, **callback) as session:
                    yield session, await session.initialize()
        return
    async with http_server_async(root, *flags) as endpoint:
        async with httpx2.AsyncClient(headers=endpoint.headers(0), timeout=HTTP_TIMEOUT) as http:
            async with streamable_http_client(endpoint.url, http_client=http) as (read, write):
                async with ClientSession(read, write, **callback) as session:
                    yield session, await session.initialize()


def text(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def offered(session: ClientSession) -> dict[str, set[str]]:
    listed = await session.list_tools()
    return {tool.name: set(tool.input_schema.get("properties", {})) & FIELDS for tool in listed.tools}


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_D37_a_client_without_elicitation_is_offered_no_escalation(root: str, transport: str) -> None:
    async def main() -> None:
        async with connect(transport, root, False, "--read-only", "--tools", "read,write,edit,apply_patch") as (session, init):
            assert init.instructions is not None and init.instructions.endswith("\n\n" + POLICY)
            assert await offered(session) == {name: set() for name in await _names(session)}
            result = await session.call_tool("write", {"file_path": "a.txt", "content": "x"})
            assert result.is_error and text(result) == "Error: " + denial_marker("read-only")
            patched = await session.call_tool("apply_patch", {"input": "*** Begin Patch\n*** Add File: b.txt\n+x\n*** End Patch"})
            assert patched.is_error and escalation_hint("operation") not in text(patched)
        assert os.listdir(root) == []

    anyio.run(main)


@pytest.mark.parametrize(("transport", "elicits", "profile"), [
    ("stdio", True, "default"), ("http", True, "default"), ("stdio", False, "reference")])
def test_D37_a_client_that_can_approve_and_the_reference_profile_keep_the_offer(
        root: str, transport: str, elicits: bool, profile: str) -> None:
    async def main() -> None:
        async with connect(transport, root, elicits, "--read-only", "--profile", profile) as (session, init):
            fields = await offered(session)
            assert fields["write"] == FIELDS and fields["edit"] == FIELDS
            assert (POLICY in (init.instructions or "")) == (profile == "default")
            result = await session.call_tool("write", {"file_path": "a.txt", "content": "x"})
            assert text(result) == "Error: " + denial_marker("read-only") + "\n" + escalation_hint("operation")

    anyio.run(main)


async def _names(session: ClientSession) -> list[str]:
    return [tool.name for tool in (await session.list_tools()).tools]
