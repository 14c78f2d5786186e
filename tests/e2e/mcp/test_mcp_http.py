"""``dsh-fs mcp --http`` specifics, against the real server on 127.0.0.1 (a port it picks),
driven by the official SDK's clients: the listing and instructions over HTTP; both protocol
eras with bearer tokens (one observation owner per MCP session for handshake clients, one per
token for stateless 2026-07-28 requests); without auth (``--no-auth``: a loud warning, the
stateless era refused with -32022, ``Client(mode="auto")`` falling back to the handshake); the
token options and token file; a Unix socket in a private directory; DNS-rebinding protection;
loopback-only listening.

Not covered: tool texts (``test_mcp_tools.py``, ``test_mcp_conformance.py``), races
(``test_mcp_concurrency.py``), call order (``test_mcp_ordering.py``), attacks on the token
and the session limits (``tests/robustness/mcp/test_http_server.py``).
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import UNSUPPORTED_PROTOCOL_VERSION
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

import dsh_fs
from dsh_fs.tool_fs.list_tool import LIST_PROMPT
from filekit import get, put
from httpkit import INITIALIZE, Endpoint, HttpServer, http_client, http_server, http_session, raw_post, server_argv
from mcp_support import call_raw, list_raw, row
from spectext import FULL_TOOL_GUIDANCE

SERVED_GUIDANCE = LIST_PROMPT + "\n\n" + FULL_TOOL_GUIDANCE  # L1: list is served, its section first

pytestmark = pytest.mark.timeout(90)

MODERN = "2026-07-28"


@pytest.fixture(scope="module")
def root(tmp_path_factory: Any) -> str:
    return os.path.realpath(tmp_path_factory.mktemp("http"))


@pytest.fixture(scope="module")
def url(root: str) -> Iterator[Endpoint]:
    """One server with two agents' tokens."""
    with http_server(root, "--tokens", "2") as endpoint:
        assert len(endpoint.tokens) == 2
        yield endpoint


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


def _run(root: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*server_argv(root), *flags], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
    )


def test_listing_and_instructions_over_http(root: str, url: Endpoint) -> None:
    expected = dsh_fs.create_context(cwd=root)

    async def main() -> None:
        async with http_session(url) as session:
            assert session.instructions == SERVED_GUIDANCE
            listed = await list_raw(session)
        assert [
            {"name": t["name"], "description": t["description"], "parameters": t["inputSchema"]} for t in listed["tools"]
        ] == expected.tools.schemas()

    anyio.run(main)


def test_each_http_session_is_its_own_observation_owner(root: str, url: Endpoint) -> None:
    put(os.path.join(root, "owned.txt"), "base\n")

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
    assert get(os.path.join(root, "owned.txt")) == b"first\n"


def test_stateless_2026_clients_are_owned_by_their_token(root: str, url: Endpoint) -> None:
    """12.10: a 2026-07-28 request has no session; its owner is its agent (token). Two
    clients of one agent share observations; another agent, or a handshake session of the
    same token, does not."""
    put(os.path.join(root, "agent.txt"), "base\n")

    async def main() -> None:
        async with http_client(url, mode=MODERN) as reader, http_client(url, mode=MODERN) as editor:
            assert reader.protocol_version == editor.protocol_version == MODERN
            read = await reader.call_tool("read", {"file_path": "agent.txt"})
            assert read.is_error is False and "1: base" in read.content[0].text  # type: ignore[union-attr]
            async with http_client(url, mode=MODERN, agent=1) as other:
                refused = await other.call_tool("edit", {"file_path": "agent.txt", "old_string": "base", "new_string": "x"})
                assert refused.is_error is True
                assert refused.content[0].text.startswith('Error: edit requires reading "')  # type: ignore[union-attr]
            async with http_client(url, mode="legacy") as handshake:
                assert handshake.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
                own = await handshake.call_tool("edit", {"file_path": "agent.txt", "old_string": "base", "new_string": "x"})
                assert own.is_error is True  # a session is its own owner
            edited = await editor.call_tool("edit", {"file_path": "agent.txt", "old_string": "base", "new_string": "agent-1"})
            assert edited.is_error is False, edited.content
        async with http_client(url) as auto:  # auto mode: server/discover offers 2026-07-28
            assert auto.protocol_version == MODERN
            assert auto.instructions == SERVED_GUIDANCE
            again = await auto.call_tool("edit", {"file_path": "agent.txt", "old_string": "agent-1", "new_string": "again"})
            assert again.is_error is False  # still agent-1's observation

    anyio.run(main)
    assert get(os.path.join(root, "agent.txt")) == b"again\n"


def test_without_auth_it_warns_and_serves_only_the_handshake_era(tmp_path: Any) -> None:
    root = os.path.realpath(tmp_path)
    put(os.path.join(root, "era.txt"), "era\n")
    server = HttpServer(root, "--no-auth")
    try:
        while (endpoint := server.endpoint()) is None:
            anyio.run(anyio.sleep, 0.02)
        log = server.log()
        assert "WARNING: --no-auth: no authentication. Any process that can connect to" in log
        assert f"can read and write every file under {root} as " in log
        assert "dshfs_" not in log  # no token minted

        async def main() -> None:
            async with http_client(endpoint) as client:
                assert client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
                result = await client.call_tool("read", {"file_path": "era.txt"})
                assert result.is_error is False and "1: era" in result.content[0].text  # type: ignore[union-attr]
            with pytest.raises(BaseException) as caught:
                async with http_client(endpoint, mode=MODERN) as client:
                    await client.call_tool("read", {"file_path": "era.txt"})
            refusals = [e for e in _leaves(caught.value) if isinstance(e, MCPError)]
            assert refusals and refusals[0].code == UNSUPPORTED_PROTOCOL_VERSION
            assert set(refusals[0].error.data["supported"]) == set(HANDSHAKE_PROTOCOL_VERSIONS)

        anyio.run(main)
    finally:
        server.stop()


def test_a_server_that_cannot_listen_shows_no_token(tmp_path: Any) -> None:
    import socket

    root = os.path.realpath(tmp_path)
    with socket.socket() as taken:  # the address is in use: binding fails
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([*server_argv(root), "--http", f"127.0.0.1:{port}"], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "dshfs_" not in done.stderr and "shown once" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("Error: cannot listen: [Errno 98]")


def test_minted_tokens_are_shown_once_and_a_token_file_is_reused(tmp_path: Any) -> None:
    root = os.path.realpath(tmp_path)
    # without --token-file: the tokens go to stderr, once
    proc = subprocess.Popen([*server_argv(root), "--http", "127.0.0.1:0", "--tokens", "2"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        lines = [proc.stderr.readline() for _ in range(4)]
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    assert lines[0].startswith('dsh-fs mcp: bearer token(s), shown once (clients send "Authorization: Bearer <token>")')
    assert lines[1].startswith("  agent-1: dshfs_") and lines[2].startswith("  agent-2: dshfs_")
    assert lines[3].startswith(f"dsh-fs mcp: serving {root} at http://127.0.0.1:")

    # with --token-file: minted once (0600), then read back by the next server
    token_file = os.path.join(root, "private", "tokens")
    os.mkdir(os.path.dirname(token_file), 0o700)

    async def works(endpoint: Endpoint, agent: int) -> None:
        async with http_session(endpoint, agent) as session:
            assert row(await call_raw(session, "read", {"file_path": "era.txt"}))["code"] == "FS_NOT_FOUND"

    with http_server(root, "--token-file", token_file, "--tokens", "3") as first:
        assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
        tokens = open(token_file, encoding="utf-8").read()
    assert tokens.count("dshfs_") == 3 and tokens.startswith("# dsh-fs mcp bearer tokens")
    server = HttpServer(root, "--token-file", token_file)
    try:
        while (again := server.endpoint()) is None:
            anyio.run(anyio.sleep, 0.02)
        assert "wrote" not in server.log() and "dshfs_" not in server.log()
        assert again.tokens == first.tokens
        anyio.run(works, again, 2)
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--tokens", "2"], "--tokens applies only with --http or --unix-socket"),
        (["--no-auth"], "--no-auth applies only with --http or --unix-socket"),
        (["--http", "127.0.0.1:0", "--no-auth", "--tokens", "2"], "--no-auth excludes --token-file and --tokens"),
        (["--http", "127.0.0.1:0", "--unix-socket", "x.sock"], "--http and --unix-socket exclude each other"),
        (["--http", "127.0.0.1:0", "--tokens", "0"], "--tokens"),
    ],
)
def test_misused_auth_options_are_usage_errors(tmp_path: Any, flags: list[str], message: str) -> None:
    proc = _run(os.path.realpath(tmp_path), *flags)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("kind", ["group-readable", "symlink", "malformed", "empty", "existing-with-tokens"])
def test_an_unsafe_or_bad_token_file_is_refused(tmp_path: Any, kind: str) -> None:
    root = os.path.realpath(tmp_path)
    path = os.path.join(root, "tokens")
    good = "dshfs_" + "a" * 40 + "\n"
    with open(path, "w", encoding="utf-8") as handle:
        handle.write({"malformed": "short\n", "empty": "# nothing\n\n"}.get(kind, good))
    os.chmod(path, 0o640 if kind == "group-readable" else 0o600)
    flags = ["--http", "127.0.0.1:0", "--token-file", path]
    if kind == "symlink":
        os.symlink(path, os.path.join(root, "link"))
        flags[-1] = os.path.join(root, "link")
    if kind == "existing-with-tokens":
        flags += ["--tokens", "2"]
    proc = _run(root, *flags)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    expected = {
        "group-readable": f"is accessible by other users (mode 0640): run chmod 600 {path}",
        "symlink": "is a symlink: give the file itself",
        "malformed": "line 1: a token is 16-512 characters",
        "empty": "holds no token",
        "existing-with-tokens": "already holds the tokens; --tokens only mints new ones",
    }[kind]
    assert expected in " ".join(proc.stderr.split()), proc.stderr


def test_a_unix_socket_in_a_private_directory(tmp_path: Any, short_tmp: str) -> None:
    root = os.path.realpath(tmp_path)
    put(os.path.join(root, "sock.txt"), "over a socket\n")
    shared = os.path.join(root, "shared")
    os.mkdir(shared, 0o755)
    os.chmod(shared, 0o755)
    refused = _run(root, "--unix-socket", os.path.join(shared, "mcp.sock"))
    assert refused.returncode == 2 and "is accessible by other users (mode 0755): run chmod 700" in refused.stderr

    socket_path = os.path.join(short_tmp, "run", "mcp.sock")  # "run" is created 0700; the path fits 108 bytes
    token_file = os.path.join(root, "tokens")
    proc = subprocess.Popen([*server_argv(root), "--unix-socket", socket_path, "--token-file", token_file],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        lines = [proc.stderr.readline(), proc.stderr.readline()]
        assert lines[1] == f"dsh-fs mcp: serving {root} at http://localhost/mcp on the Unix socket {socket_path}\n"
        assert stat.S_IMODE(os.stat(os.path.dirname(socket_path)).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(socket_path).st_mode) == 0o600
        token = dsh_fs.mcp.load_token_file(token_file)[0]

        async def main() -> None:
            transport = httpx2.AsyncHTTPTransport(uds=socket_path)
            async with httpx2.AsyncClient(transport=transport, timeout=60) as http:
                status, _, _ = await raw_post(http, "http://localhost/mcp", INITIALIZE)
                assert status == 401
                status, headers, answer = await raw_post(
                    http, "http://localhost/mcp", INITIALIZE, {"authorization": f"Bearer {token}"}
                )
                assert status == 200 and answer["result"]["serverInfo"]["name"] == "dsh-fs"

        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    assert not os.path.exists(socket_path)  # removed on exit


def test_dns_rebinding_protection_refuses_foreign_hosts(url: Endpoint) -> None:
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json", **url.headers()}
    foreign = httpx2.post(url.url, json=INITIALIZE, headers={**headers, "host": "evil.example:80"}, timeout=60)
    assert foreign.status_code == 421
    origin = httpx2.post(url.url, json=INITIALIZE, headers={**headers, "origin": "http://evil.example"}, timeout=60)
    assert origin.status_code == 403


@pytest.mark.parametrize("listen", ["0.0.0.0:0", "example.com:80", "127.0.0.1"])
def test_non_loopback_or_malformed_listen_addresses_are_refused(tmp_path: Any, listen: str) -> None:
    proc = _run(os.path.realpath(tmp_path), "--http", listen)
    assert proc.returncode == 2, proc.stderr
    assert "--http" in proc.stderr
