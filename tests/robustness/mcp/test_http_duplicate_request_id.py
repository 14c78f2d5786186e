"""Two requests with the same JSON-RPC id in one HTTP MCP session: the second is answered with
an error, never left unanswered (``mcp.http``'s session gate).

The SDK's streamable HTTP transport keeps one response stream per request id: a second ``POST``
with an id still in flight took over the first one's stream, so one of the two waited forever.
Now the session gate answers the second at once (``400``, JSON-RPC ``-32600`` ``request id … is
already in flight``, the SDK dispatcher's words for it); the first is answered as usual, and the
id may be used again once it is.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import httpx2  # noqa: E402

import dsh_fs  # noqa: E402
from dsh_fs.fs_local import LocalFileSystem  # noqa: E402
from httpkit import INITIALIZE, Endpoint, raw_post, serve_in_process, tool_call  # noqa: E402

pytestmark = pytest.mark.timeout(180)


async def _open_session(http: httpx2.AsyncClient, endpoint: Endpoint) -> dict[str, str]:
    status, headers, answer = await raw_post(http, endpoint.url, INITIALIZE, endpoint.headers())
    assert status == 200, answer
    session = {"mcp-session-id": headers["mcp-session-id"], **endpoint.headers()}
    await raw_post(http, endpoint.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    return session


@pytest.mark.parametrize("request_id", [7, "seven"])
def test_a_second_request_with_an_id_in_flight_gets_an_error(tmp_path: Any, request_id: int | str) -> None:
    root = os.path.realpath(tmp_path)
    with open(os.path.join(root, "a.txt"), "w", encoding="utf-8") as handle:
        handle.write("a\n")

    class Stuck(LocalFileSystem):
        def __init__(self, **config: Any) -> None:
            super().__init__(**config)
            self.gate = anyio.Event()
            self.waiting = 0

        async def resolve(self, path: str, **kwargs: Any) -> Any:
            if path == "stuck.txt":
                self.waiting += 1
                await self.gate.wait()
            return await super().resolve(path, **kwargs)

    async def main() -> None:
        fs = Stuck(cwd=root)
        ctx = dsh_fs.create_context(cwd=root, provider=fs)
        async with serve_in_process(ctx, root) as served, httpx2.AsyncClient(timeout=30) as http:
            endpoint = served.endpoint
            session = await _open_session(http, endpoint)
            first: list[Any] = []

            async def slow() -> None:
                first.append(await raw_post(http, endpoint.url, tool_call("read", {"file_path": "stuck.txt"},
                                                                          id_=request_id), session))

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow)
                with anyio.fail_after(60):
                    while fs.waiting < 1:
                        await anyio.sleep(0.02)
                with anyio.fail_after(60):  # answered, not left waiting
                    status, _, answer = await raw_post(
                        http, endpoint.url, tool_call("read", {"file_path": "a.txt"}, id_=request_id), session)
                assert status == 400
                assert answer == {"jsonrpc": "2.0", "id": request_id, "error": {
                    "code": -32600, "message": f"request id {request_id!r} is already in flight"}}
                fs.gate.set()
            [(status, _, answer)] = first
            assert status == 200 and answer["id"] == request_id
            assert answer["result"]["content"][0]["text"] == f'Error: cannot read "{root}/stuck.txt": not found'
            status, _, answer = await raw_post(  # the id is free again
                http, endpoint.url, tool_call("read", {"file_path": "a.txt"}, id_=request_id), session)
            assert status == 200 and answer["result"]["isError"] is False

    anyio.run(main)
