"""Revoking a token without a restart (``mcp.http.revocation``).

``dsh-fs mcp --http --token-file F``: remove a token from ``F`` (and add another) while the
server runs; on ``SIGHUP``, or by itself when the file changes, the removed token gets
``401`` for everything, its open session is ended (``404`` even for its own id), the other
tokens and their sessions go on, and the added token works. A broken token file changes
nothing (the old tokens stay) and the server says so on stderr.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import anyio
import httpx2
import pytest

pytest.importorskip("mcp")

from dsh_fs.mcp import mint_tokens  # noqa: E402
from httpkit import INITIALIZE, Endpoint, HttpServer, raw_post  # noqa: E402

pytestmark = pytest.mark.timeout(120)


def _rewrite(path: Path, tokens: list[str]) -> None:
    temp = path.with_name("tokens.new")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write("".join(f"{token}\n" for token in tokens))
    os.replace(temp, path)


def _read(id_: int = 2) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call",
            "params": {"name": "read", "arguments": {"file_path": "a.txt"}}}


async def _open(http: httpx2.AsyncClient, url: str, token: str) -> dict[str, str]:
    auth = {"authorization": f"Bearer {token}"}
    status, headers, answer = await raw_post(http, url, INITIALIZE, auth)
    assert status == 200, answer
    session = {"mcp-session-id": headers["mcp-session-id"], **auth}
    await raw_post(http, url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    return session


@pytest.mark.parametrize("how", ["sighup", "file change"])
def test_a_removed_token_stops_working_and_its_sessions_end(tmp_path: Path, how: str) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    token_file = private / "tokens"
    server = HttpServer(str(root), "--token-file", str(token_file), "--tokens", "2")
    try:
        while (endpoint := server.endpoint()) is None:
            time.sleep(0.02)
        keep, revoke = endpoint.tokens
        added = mint_tokens(1)[0]

        async def main(endpoint: Endpoint) -> None:
            # one HTTP client per agent, as agents have: the revoked token's connections are closed
            async with httpx2.AsyncClient(timeout=30) as http, httpx2.AsyncClient(timeout=30) as doomed, \
                    httpx2.AsyncClient(timeout=30, limits=httpx2.Limits(max_keepalive_connections=0)) as once:
                kept_session = await _open(http, endpoint.url, keep)
                revoked_session = await _open(doomed, endpoint.url, revoke)
                for client, session in ((http, kept_session), (doomed, revoked_session)):
                    status, _, _ = await raw_post(client, endpoint.url, _read(), session)
                    assert status == 200
                if how == "file change":
                    await anyio.sleep(1.1)  # a new mtime even on a coarse clock
                _rewrite(token_file, [keep, added])
                if how == "sighup":
                    server.proc.send_signal(signal.SIGHUP)
                with anyio.fail_after(60):
                    while True:
                        try:
                            status, _, _ = await raw_post(once, endpoint.url, INITIALIZE,
                                                          {"authorization": f"Bearer {revoke}"})
                        except httpx2.RemoteProtocolError:  # proven by the token as it was revoked:
                            status = 0  # its connection is closed (connections.revoke) mid-request
                        if status == 401:
                            break
                        await anyio.sleep(0.1)
                status, _, _ = await raw_post(once, endpoint.url, _read(), revoked_session)
                assert status == 401
                with anyio.fail_after(60):
                    while "revoked: agent-2" not in server.log():
                        await anyio.sleep(0.05)
                # its session is gone: not even a token that still works can reach it
                status, _, _ = await raw_post(once, endpoint.url, _read(),
                                              {**revoked_session, "authorization": f"Bearer {keep}"})
                assert status == 404
                status, _, answer = await raw_post(http, endpoint.url, _read(), kept_session)
                assert status == 200 and "alpha" in answer["result"]["content"][0]["text"]
                await _open(once, endpoint.url, added)
                # a broken file changes nothing
                token_file.write_text("not a token\n")
                server.proc.send_signal(signal.SIGHUP)
                with anyio.fail_after(60):
                    while "token file not reloaded" not in server.log():
                        await anyio.sleep(0.05)
                status, _, _ = await raw_post(http, endpoint.url, _read(), kept_session)
                assert status == 200

        anyio.run(main, endpoint)
    finally:
        server.stop()
