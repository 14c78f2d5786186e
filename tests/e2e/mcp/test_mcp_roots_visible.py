"""D36 over MCP: ``dsh-fs mcp --root A --root B`` names both roots in its ``initialize``
instructions and in ``list`` without a ``path``, follows a symlink in A into B, and lets the
operator choose whether a client's declared roots (M3) narrow what it reaches
(``--ignore-client-roots``: every ``--root`` stays served). The real server, the SDK client."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from httpkit import server_argv


@pytest.fixture
def roots(tmp_path: Path) -> tuple[str, str]:
    base = os.path.realpath(tmp_path)
    a, b = os.path.join(base, "rA"), os.path.join(base, "rB")
    os.makedirs(a)
    os.makedirs(b)
    Path(a, "a.txt").write_text("in A\n")
    Path(b, "b.txt").write_text("in B\n")
    os.symlink("../rB/b.txt", os.path.join(a, "to-b.txt"))
    return a, b


@contextlib.asynccontextmanager
async def connect(a: str, b: str, *flags: str, client_root: str | None = None
                  ) -> AsyncIterator[tuple[ClientSession, types.InitializeResult]]:
    callback = None
    if client_root is not None:
        async def callback(context: Any) -> types.ListRootsResult:
            return types.ListRootsResult(roots=[types.Root(uri="file://" + client_root)])

    params = StdioServerParameters(command=sys.executable, args=[*server_argv(a, "--root", b, *flags)[1:]], cwd=a,
                                   env=dict(os.environ))
    with tempfile.TemporaryFile("w+") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, list_roots_callback=callback) as session:
                yield session, await session.initialize()


def text(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


def test_D36_every_root_is_named_and_a_link_into_the_other_root_is_followed(roots) -> None:
    a, b = roots

    async def main() -> None:
        async with connect(a, b) as (session, init):
            assert init.instructions is not None and init.instructions.startswith(f"Allowed directories:\n{a}\n{b}\n\n")
            listed = text(await session.call_tool("list", {}))
            assert listed.endswith(f"\nAllowed directories:\n{a}\n{b}\n</content>")
            assert "1: in B" in text(await session.call_tool("read", {"file_path": "to-b.txt"}))

    anyio.run(main)


@pytest.mark.parametrize("ignore", [False, True], ids=["client roots narrow", "--ignore-client-roots"])
def test_D36_the_operator_chooses_whether_client_roots_narrow_the_roots(roots, ignore: bool) -> None:
    a, b = roots

    async def main() -> None:
        flags = ("--ignore-client-roots",) if ignore else ()
        async with connect(a, b, *flags, client_root=a) as (session, _init):
            here = await session.call_tool("read", {"file_path": "a.txt"})
            assert not here.is_error, text(here)
            there = await session.call_tool("read", {"file_path": f"{b}/b.txt"})
            if ignore:
                assert not there.is_error and "1: in B" in text(there)
            else:
                assert there.is_error and text(there) == f'Error: cannot resolve "{b}/b.txt": outside the workspace "{a}"'

    anyio.run(main)
