"""``dsh-fs mcp --http`` specifics, against the real server on 127.0.0.1 (a port it picks):
the listing and instructions over HTTP, one observation owner per MCP session, era
negotiation (the sessionless 2026-07-28 HTTP era is refused with -32022, ``Client(mode="auto")``
falls back to the handshake), DNS-rebinding protection, and loopback-only listening.

Not covered: tool texts (``test_mcp_tools.py``, ``test_mcp_conformance.py``), races
(``test_mcp_concurrency.py``).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import UNSUPPORTED_PROTOCOL_VERSION
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

import dsh_fs
from mcp_support import call_raw, http_server, http_session, list_raw, row, server_argv
from spectext import TOOL_GUIDANCE

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def root(tmp_path_factory: Any) -> str:
    return os.path.realpath(tmp_path_factory.mktemp("http"))


@pytest.fixture(scope="module")
def url(root: str) -> Iterator[str]:
    with http_server(root) as endpoint:
        yield endpoint


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


def _put(root: str, name: str, text: str) -> None:
    with open(os.path.join(root, name), "w", encoding="utf-8") as handle:
        handle.write(text)


def _get(root: str, name: str) -> str:
    with open(os.path.join(root, name), encoding="utf-8") as handle:
        return handle.read()


def test_listing_and_instructions_over_http(root: str, url: str) -> None:
    expected = dsh_fs.create_context(cwd=root)

    async def main() -> None:
        async with http_session(url) as session:
            assert session.instructions == TOOL_GUIDANCE
            listed = await list_raw(session)
        assert [
            {"name": t["name"], "description": t["description"], "parameters": t["inputSchema"]} for t in listed["tools"]
        ] == expected.tools.schemas()

    anyio.run(main)


def test_each_http_session_is_its_own_observation_owner(root: str, url: str) -> None:
    _put(root, "owned.txt", "base\n")

    async def main() -> None:
        async with http_session(url) as first, http_session(url) as second:
            assert row(await call_raw(first, "read", {"file_path": "owned.txt"}))["is_error"] is False
            blind = row(await call_raw(second, "write", {"file_path": "owned.txt", "content": "second\n"}))
            assert (blind["code"], blind["text"]) == (
                "FS_NOT_OBSERVED",
                f'Error: cannot overwrite existing "{root}/owned.txt" without reading it first'
                " — read the file, then retry",
            )
            blind_edit = row(await call_raw(second, "edit", {"file_path": "owned.txt", "old_string": "base", "new_string": "b"}))
            assert blind_edit["code"] == "FS_NOT_OBSERVED"
            ok = row(await call_raw(first, "write", {"file_path": "owned.txt", "content": "first\n"}))
            assert ok["is_error"] is False, ok
        # a new connection is a new owner, even for the same client program
        async with http_session(url) as third:
            again = row(await call_raw(third, "edit", {"file_path": "owned.txt", "old_string": "first", "new_string": "x"}))
            assert again["code"] == "FS_NOT_OBSERVED"

    anyio.run(main)
    assert _get(root, "owned.txt") == "first\n"


def test_auto_mode_falls_back_to_the_handshake_and_a_pinned_modern_client_is_refused(root: str, url: str) -> None:
    _put(root, "era.txt", "era\n")

    async def main() -> None:
        async with Client(url) as client:
            assert client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
            result = await client.call_tool("read", {"file_path": "era.txt"})
            assert result.is_error is False
            assert "1: era" in result.content[0].text  # type: ignore[union-attr]

        with pytest.raises(BaseException) as caught:
            async with Client(url, mode="2026-07-28") as client:
                await client.call_tool("read", {"file_path": "era.txt"})
        refusals = [e for e in _leaves(caught.value) if isinstance(e, MCPError)]
        assert refusals and refusals[0].code == UNSUPPORTED_PROTOCOL_VERSION
        assert set(refusals[0].error.data["supported"]) == set(HANDSHAKE_PROTOCOL_VERSIONS)

    anyio.run(main)


def test_dns_rebinding_protection_refuses_foreign_hosts(url: str) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}},
    }
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    foreign = httpx2.post(url, json=body, headers={**headers, "host": "evil.example:80"}, timeout=20)
    assert foreign.status_code >= 400
    origin = httpx2.post(url, json=body, headers={**headers, "origin": "http://evil.example"}, timeout=20)
    assert origin.status_code >= 400


@pytest.mark.parametrize("listen", ["0.0.0.0:0", "example.com:80", "127.0.0.1"])
def test_non_loopback_or_malformed_listen_addresses_are_refused(tmp_path: Any, listen: str) -> None:
    proc = subprocess.run(
        [*server_argv(os.path.realpath(tmp_path)), "--http", listen],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2, proc.stderr
    assert "--http" in proc.stderr
