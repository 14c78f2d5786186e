"""Every surface over a command channel, unchanged (DEVIATIONS C1): ``dsh-fs mcp --root
podman://BOX/dir`` and ``--root ssh://…`` (with ``$DSH_FS_SSH_COMMAND``) driven by the MCP SDK's
client, the tool commands with ``--cwd URL`` (a ``--session`` across commands), and a
framework adapter (deepagents' backend, whose sync methods run on an event loop of their own)
on ``create_context(provider=…)`` — against the session's podman box and ``sshd``."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

import dsh_fs
from dsh_fs.testing.far_sides import PodmanBox, SshServer

pytestmark = pytest.mark.anyio

TIMEOUT = 120


@pytest.fixture
def in_box(podman_box: PodmanBox, box_dir: str) -> Iterator[tuple[str, str]]:
    """A fresh directory of the box: (its path here, its podman:// URL)."""
    name = uuid.uuid4().hex[:12]
    here = os.path.join(box_dir, name)
    os.mkdir(here)
    with open(os.path.join(here, "a.txt"), "w", encoding="utf-8") as handle:
        handle.write("alpha\nbeta TODO\n")
    os.mkdir(os.path.join(here, "src"))
    with open(os.path.join(here, "src", "m.py"), "w", encoding="utf-8") as handle:
        handle.write("# TODO: more\n")
    yield here, podman_box.url(f"/ws/{name}")


@contextlib.asynccontextmanager
async def _session(root: str, env: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "dsh_fs.cli.main", "mcp", "--root", root],
                                   env=env)
    with tempfile.TemporaryFile("w+") as errlog:
        try:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    with anyio.fail_after(TIMEOUT):
                        await session.initialize()
                    yield session
        except BaseException:
            errlog.seek(0)
            sys.stderr.write(errlog.read()[-3000:])
            raise


async def _call(session: ClientSession, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
    with anyio.fail_after(TIMEOUT):
        result = await session.call_tool(tool, args)
    return bool(result.is_error), "".join(getattr(block, "text", "") for block in result.content)


async def _edit_flow(session: ClientSession, far: str) -> None:
    failed, text = await _call(session, "read", {"file_path": "a.txt"})
    assert not failed and "<content>\n1: alpha\n2: beta TODO\n" in text, text
    failed, text = await _call(session, "edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"})
    assert not failed, text
    failed, text = await _call(session, "grep", {"pattern": "TODO"})
    assert (failed, text) == (False, "Found 2 matches\n\na.txt\nLine 2: beta TODO\n\nsrc/m.py\nLine 1: # TODO: more")
    assert await _call(session, "read", {"file_path": "/etc/passwd"}) == (
        True, f'Error: cannot resolve "/etc/passwd": outside the workspace "{far}"')


async def test_mcp_serves_a_podman_box(in_box: tuple[str, str]) -> None:
    here, url = in_box
    async with _session(url) as session:
        await _edit_flow(session, url.split(podman_name(url), 1)[1])
    with open(os.path.join(here, "a.txt"), encoding="utf-8") as handle:
        assert handle.read() == "ALPHA\nbeta TODO\n"


def podman_name(url: str) -> str:
    return url.split("://", 1)[1].split("/", 1)[0]


async def test_mcp_serves_a_machine_over_ssh_with_the_ssh_command_of_the_environment(
        ssh_server: SshServer, tmp_path: Any) -> None:
    here = os.path.realpath(os.path.join(str(tmp_path), "ws"))
    os.makedirs(os.path.join(here, "src"))
    with open(os.path.join(here, "a.txt"), "w", encoding="utf-8") as handle:
        handle.write("alpha\nbeta TODO\n")
    with open(os.path.join(here, "src", "m.py"), "w", encoding="utf-8") as handle:
        handle.write("# TODO: more\n")
    env = {**os.environ, "DSH_FS_SSH_COMMAND": shlex.join(ssh_server.ssh_command)}
    async with _session(ssh_server.url(here), env=env) as session:
        await _edit_flow(session, here)
    with open(os.path.join(here, "a.txt"), encoding="utf-8") as handle:
        assert handle.read() == "ALPHA\nbeta TODO\n"


def _cli(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", *args], capture_output=True, text=True,
                          input=stdin, env=env, timeout=TIMEOUT)


def test_the_tool_commands_reach_a_podman_box(in_box: tuple[str, str], tmp_path: Any) -> None:
    here, url = in_box
    env = {**os.environ, "DSH_FS_STATE_DIR": str(tmp_path / "state")}
    done = _cli("read", "--cwd", url, "a.txt", env=env)
    assert done.returncode == 0 and "<content>\n1: alpha\n2: beta TODO\n" in done.stdout, done.stderr
    refused = _cli("edit", "--cwd", url, "a.txt", "--old", "beta", "--new", "BETA", env=env)
    assert refused.returncode == 1 and "read" in refused.stdout  # no session: the edit was not observed
    assert _cli("read", "--session", "s1", "--cwd", url, "a.txt", env=env).returncode == 0
    edited = _cli("edit", "--session", "s1", "--cwd", url, "a.txt", "--old", "beta", "--new", "BETA",
                  env=env)
    assert edited.returncode == 0, edited.stdout + edited.stderr
    with open(os.path.join(here, "a.txt"), encoding="utf-8") as handle:
        assert handle.read() == "alpha\nBETA TODO\n"
    found = _cli("glob", "--cwd", url, "**/*.py", env=env)
    assert (found.returncode, found.stdout) == (0, "src/m.py\n")


def test_mcp_refuses_local_and_far_roots_together(in_box: tuple[str, str], tmp_path: Any) -> None:
    _, url = in_box
    done = _cli("mcp", "--root", url, "--root", str(tmp_path))
    assert done.returncode == 2 and "--root: serve local directories or a far side's, not both" in done.stderr


async def test_docker_and_kubectl_urls_reach_the_box_through_their_cli(in_box: tuple[str, str], tmp_path: Any) -> None:
    """``docker://`` with a docker-compatible CLI (podman, ``program=``), and ``kubectl://``
    through a stand-in ``kubectl`` that runs the command it is given in the box (no cluster
    here): the argument vectors they build work end to end."""
    here, url = in_box
    box, far = podman_name(url), "/" + url.split("://", 1)[1].split("/", 1)[1]
    fake = tmp_path / "kubectl"
    fake.write_text(f'#!/bin/sh\n[ "$1 $2" = "exec -i" ] || exit 9\nshift 2\npod=$1\nshift\n'
                    f'[ "$1" = "--" ] || exit 9\nshift\nexec {shutil.which("podman")} exec -i "$pod" "$@"\n')
    fake.chmod(0o700)
    for provider in (dsh_fs.open_provider(f"docker://{box}{far}", program="podman"),
                     dsh_fs.open_provider(f"kubectl://{box}{far}", program=str(fake))):
        async with provider:
            target = await provider.resolve("a.txt")
            assert target.key == f"{provider.identity}{far}/a.txt"
            assert await provider.read_text(target) == "alpha\nbeta TODO\n"


def test_a_framework_adapter_over_a_podman_box(in_box: tuple[str, str]) -> None:
    from dsh_fs.adapters.deepagents import DshFsBackend

    here, url = in_box
    far = "/" + url.split("://", 1)[1].split("/", 1)[1]
    ctx = dsh_fs.create_context(provider=dsh_fs.open_provider(url), cwd=far)
    backend = DshFsBackend(ctx)
    try:
        read = backend.read(f"{far}/a.txt")
        assert "alpha" in str(read)
        edited = backend.edit(f"{far}/a.txt", "alpha", "omega")
        assert getattr(edited, "error", None) is None, edited
        # virtual mode (the default): the far root is ``/`` to the model (docs/FRAMEWORKS.md)
        assert sorted(m["path"] for m in backend.grep("TODO").matches or []) == ["/a.txt", "/src/m.py"]
    finally:
        backend._runner.run(ctx.aclose)  # the helper of the backend's own event loop ends with it
        backend.close()
    with open(os.path.join(here, "a.txt"), encoding="utf-8") as handle:
        assert handle.read() == "omega\nbeta TODO\n"


def test_client_config_keeps_a_far_sides_url(tmp_path: Any) -> None:
    done = _cli("client-config", "--root", "podman://box/work", "--root", "podman://box/lib")
    assert done.returncode == 0, done.stderr
    args = __import__("json").loads(done.stdout)["mcpServers"]["dsh-fs"]["args"]
    assert args[-4:] == ["--root", "podman://box/work", "--root", "podman://box/lib"]
