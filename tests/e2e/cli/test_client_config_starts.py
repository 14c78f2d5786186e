"""Every configuration ``dsh-fs client-config`` writes starts as printed, with real clients:
the official SDK's (stdio with the environment a GUI client gives a server: the SDK's default
one plus the configuration's ``env``; HTTP with the configuration's ``url`` and ``headers``) and
the MCP Inspector's CLI (``npx -y @modelcontextprotocol/inspector --cli``: ``--config`` for the
stdio forms; its CLI sends no headers, so of the HTTP forms it starts the ``--no-auth`` one, by
URL). Configurations no client could start are refused: ``--root`` with ``--s3``,
``--unix-socket``, port ``0``, ``--http`` without a token file."""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client
from mcp.client.streamable_http import streamable_http_client

from dsh_fs.testing.fixtures import s3_endpoint  # noqa: F401  (registers the fixture)
from dsh_fs.testing.workspaces import MOTO_CLIENT_OPTIONS, S3Workspace

DSH_FS = str(Path(sys.executable).with_name("dsh-fs"))
pytestmark = pytest.mark.timeout(900)
AWS = {"AWS_ACCESS_KEY_ID": MOTO_CLIENT_OPTIONS["aws_access_key_id"],
       "AWS_SECRET_ACCESS_KEY": MOTO_CLIENT_OPTIONS["aws_secret_access_key"],
       "AWS_DEFAULT_REGION": MOTO_CLIENT_OPTIONS["region_name"]}


def client_config(cwd: Path, *args: str, env: dict[str, str] | None = None) -> tuple[dict[str, Any], str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    done = subprocess.run([DSH_FS, "client-config", *args], cwd=cwd, env={**clean, **(env or {})},
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["mcpServers"]["dsh-fs"], done.stderr


def refused(cwd: Path, *args: str) -> str:
    done = subprocess.run([DSH_FS, "client-config", *args], cwd=cwd, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    return done.stderr


def text(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def read_over_stdio(server: dict[str, Any], path: str) -> str:
    """As a GUI client starts the server: the SDK's default environment, the config's env, cwd /."""
    params = StdioServerParameters(command=server["command"], args=server["args"], cwd="/",
                                   env={**get_default_environment(), **server.get("env", {})})
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return text(await session.call_tool("read", {"file_path": path}))


def inspector(*argv: str, cwd: Path) -> dict[str, Any]:
    done = subprocess.run(["npx", "-y", "@modelcontextprotocol/inspector", "--cli", *argv], cwd=cwd,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(done.stdout)


def inspector_read(config: Path, path: str, cwd: Path) -> str:
    answer = inspector("--config", str(config), "--server", "dsh-fs", "--method", "tools/call", "--tool-name", "read",
                       "--tool-arg", f"file_path={path}", cwd=cwd)
    assert answer["isError"] is False, answer
    return "".join(block["text"] for block in answer["content"])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "lib").mkdir(parents=True)
    (root / "notes.txt").write_text("alpha\n")
    return root


@pytest.mark.parametrize("extra", [[], ["--", "--images", "--session", "agent"]], ids=["plain", "with options"])
def test_the_stdio_configuration_starts(project: Path, tmp_path: Path, extra: list[str]) -> None:
    server, _ = client_config(project, *extra)
    assert set(server) == {"command", "args"}
    assert "1: alpha" in anyio.run(read_over_stdio, server, "notes.txt")
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"dsh-fs": server}}))
    assert "1: alpha" in inspector_read(config, "notes.txt", tmp_path)


def test_the_several_roots_configuration_starts(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "b.txt").write_text("beta\n")
    server, _ = client_config(project, "--root", str(project), "--root", str(other))
    assert "1: beta" in anyio.run(read_over_stdio, server, f"{other}/b.txt")


@pytest.mark.anyio
async def test_the_s3_configuration_starts_with_its_credentials(project: Path, tmp_path: Path,
                                                                s3_endpoint: str) -> None:  # noqa: F811
    bucket = await S3Workspace(endpoint_url=s3_endpoint).create()
    try:
        await bucket.put("hello.txt", b"from the bucket\n")
        url = f"s3://{bucket.location.bucket}/{bucket.location.prefix}"
        server, said = client_config(project, "--", "--s3", url, "--endpoint-url", s3_endpoint, env=AWS)
        assert "--root" not in server["args"] and server["env"] == AWS
        assert "keep the configuration file private" in said
        assert "1: from the bucket" in await read_over_stdio(server, "hello.txt")
        config = tmp_path / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"dsh-fs": server}}))
        assert "1: from the bucket" in await anyio.to_thread.run_sync(inspector_read, config, "hello.txt", tmp_path)
    finally:
        await bucket.aclose()
    assert "--root is not used with --s3" in refused(project, "--root", str(project), "--", "--s3", url)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Started:
    """The server a user starts with the command ``client-config`` printed on stderr."""

    def __init__(self, said: str) -> None:
        line = next(line for line in said.splitlines() if "start the server first: " in line)
        self.proc = subprocess.Popen(shlex.split(line.split("start the server first: ", 1)[1]),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
        assert self.proc.stderr is not None
        for out in self.proc.stderr:  # waits for the announcement, whatever the load
            if " at http://" in out:
                break
        else:
            raise AssertionError(f"the server ended: {self.proc.wait()}")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait()


async def read_over_http(server: dict[str, Any], path: str) -> str:
    async with httpx2.AsyncClient(headers=server.get("headers", {}), timeout=httpx2.Timeout(None)) as http:
        async with streamable_http_client(server["url"], http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return text(await session.call_tool("read", {"file_path": path}))


@pytest.mark.parametrize("auth", ["token-file", "no-auth"])
def test_the_http_configuration_reaches_the_server_it_names(project: Path, tmp_path: Path, auth: str) -> None:
    port = free_port()
    tokens = tmp_path / "tokens"
    flags = ["--token-file", str(tokens)] if auth == "token-file" else ["--no-auth"]
    server, said = client_config(project, "--", "--http", f"127.0.0.1:{port}", *flags)
    assert server["type"] == "http" and server["url"] == f"http://127.0.0.1:{port}/mcp"
    if auth == "token-file":
        first = next(line for line in tokens.read_text().splitlines() if line and not line.startswith("#"))
        assert server["headers"] == {"Authorization": f"Bearer {first}"}
    else:
        assert "headers" not in server
    started = Started(said)
    try:
        assert "1: alpha" in anyio.run(read_over_http, server, "notes.txt")
        if auth == "no-auth":  # the Inspector CLI sends no headers: it reaches only this form
            answer = inspector(server["url"], "--transport", "http", "--method", "tools/call", "--tool-name", "read",
                               "--tool-arg", "file_path=notes.txt", cwd=tmp_path)
            assert "1: alpha" in answer["content"][0]["text"]
    finally:
        started.stop()


@pytest.mark.parametrize(("args", "message"), [
    (["--unix-socket", "/tmp/dsh-fs-x/s"], "--unix-socket cannot be written in a client configuration"),
    (["--http", "127.0.0.1:0", "--no-auth"], "--http needs a fixed PORT"),
    (["--http", "127.0.0.1:9"], "--http needs --token-file PATH (or --no-auth)"),
])
def test_a_configuration_no_client_could_start_is_refused(project: Path, args: list[str], message: str) -> None:
    assert message in refused(project, "--", *args)
