"""``--s3`` on the command line and on ``dsh-fs mcp``: the same tools on a bucket prefix,
through real processes against the loopback S3 server (standard AWS credential chain via
environment variables). Not covered here: provider details (test_provider.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from dsh_fs.testing.workspaces import S3Workspace

pytestmark = pytest.mark.anyio


def _env(tmp_path: Any) -> dict[str, str]:
    env = dict(os.environ)
    env.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1",
               DSH_FS_STATE_DIR=str(tmp_path / "state"))
    return env


def _cli(args: list[str], env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", *args], capture_output=True, text=True,
                          env=env, input=stdin, timeout=60)


async def test_cli_read_then_edit_on_a_bucket_across_processes(bucket: S3Workspace, s3_endpoint: str, tmp_path: Any) -> None:
    env = _env(tmp_path)
    url = f"s3://{bucket.location.bucket}/{bucket.location.prefix}"
    common = ["--s3", url, "--endpoint-url", s3_endpoint]
    await bucket.put("notes/a.txt", b"hello\nworld\n")
    refused = _cli(["edit", "notes/a.txt", "--old", "world", "--new", "there", *common], env)
    assert refused.returncode == 1
    assert refused.stdout == 'Error: edit requires reading "/notes/a.txt" first — read the file, then retry\n'
    read = _cli(["read", "notes/a.txt", "--session", "s1", *common], env)
    assert read.returncode == 0, read.stderr
    assert read.stdout == (
        "<path>/notes/a.txt</path>\n<type>file</type>\n<content>\n1: hello\n2: world\n\n"
        "(End of file - total 2 lines)\n</content>\n"
    )
    edited = _cli(["edit", "notes/a.txt", "--old", "world", "--new", "there", "--session", "s1", *common], env)
    assert edited.returncode == 0, edited.stdout + edited.stderr
    assert edited.stdout == "The file /notes/a.txt has been updated successfully.\n"
    assert await bucket.get("notes/a.txt") == b"hello\nthere\n"


async def test_mcp_server_serves_a_bucket(bucket: S3Workspace, s3_endpoint: str, tmp_path: Any) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    await bucket.put("a.txt", b"one\n")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "dsh_fs.cli.main", "mcp", "--s3", f"s3://{bucket.location.bucket}/{bucket.location.prefix}",
              "--endpoint-url", s3_endpoint],
        env=_env(tmp_path),
    )
    async with stdio_client(params) as streams, ClientSession(*streams) as session:
        await session.initialize()
        first = await session.call_tool("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"})
        assert first.is_error and first.content[0].text == (
            'Error: edit requires reading "/a.txt" first — read the file, then retry'
        )
        read = await session.call_tool("read", {"file_path": "a.txt"})
        assert not read.is_error
        done = await session.call_tool("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"})
        assert not done.is_error and done.content[0].text == "The file /a.txt has been updated successfully."
    assert await bucket.get("a.txt") == b"two\n"


async def test_cli_glob_and_grep_on_a_bucket(bucket: S3Workspace, s3_endpoint: str, tmp_path: Any) -> None:
    env = _env(tmp_path)
    common = ["--s3", f"s3://{bucket.location.bucket}/{bucket.location.prefix}", "--endpoint-url", s3_endpoint]
    await bucket.put("src/a.py", b"needle\n")
    await bucket.put("docs/b.md", b"no\n")
    listed = _cli(["glob", "*.py", *common], env)
    assert (listed.returncode, listed.stdout) == (0, "src/a.py\n"), listed.stderr
    found = _cli(["grep", "needle", "--path", "/src", *common], env)
    assert (found.returncode, found.stdout) == (0, "Found 1 match\n\nsrc/a.py\nLine 1: needle\n"), found.stderr
