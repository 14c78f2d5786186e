"""docs/S3.md's "Setup" program, run as printed (top-level ``async with``, as in an async
REPL) against the moto server: the endpoint and the credentials come from the environment, as
they would from a user's (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, …), and the bucket
``team-bucket`` holds ``projects/app/src/main.py``. The ``read`` it awaits (recorded on its
way through the registry) must reach that object, and leaving the block must close the
provider's client, as the page's comment says.

The install line printed above the program runs as printed too, through the shell in a copy of
the checkout with a fresh venv's ``bin`` first on ``PATH`` (its ``pip`` fetching from the
package index, as a user's does): it installs the package with aiobotocore.

Not covered here: the provider itself (the rest of tests/s3).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from docskit import DOCS, checkout_copy, code_blocks, python_blocks, run_cell, shell_env, shell_lines
from dsh_fs.core.tools import ToolRegistry
from dsh_fs.fs_s3 import S3FileSystem
from dsh_fs.testing.workspaces import MOTO_CLIENT_OPTIONS, S3Workspace

PAGE = DOCS / "S3.md"
pytestmark = pytest.mark.anyio


@pytest.fixture
def aws_env(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", MOTO_CLIENT_OPTIONS["aws_access_key_id"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", MOTO_CLIENT_OPTIONS["aws_secret_access_key"])
    monkeypatch.setenv("AWS_DEFAULT_REGION", MOTO_CLIENT_OPTIONS["region_name"])
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    yield


async def test_the_setup_program_reads_through_the_bucket(aws_env: None, s3_endpoint: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    [program] = python_blocks("## Setup", PAGE)
    results: list[Any] = []
    closed: list[S3FileSystem] = []
    execute, aclose = ToolRegistry.execute, S3FileSystem.aclose

    async def recorded(self: ToolRegistry, *args: Any, **kwargs: Any) -> Any:
        results.append(await execute(self, *args, **kwargs))
        return results[-1]

    async def counted(self: S3FileSystem) -> None:
        closed.append(self)
        await aclose(self)

    monkeypatch.setattr(ToolRegistry, "execute", recorded)
    monkeypatch.setattr(S3FileSystem, "aclose", counted)
    bucket = await S3Workspace(endpoint_url=s3_endpoint, bucket="team-bucket", prefix="projects/app/").create()
    try:
        await bucket.put("src/main.py", b"print('hello')\n")
        scope = await run_cell(program, PAGE.name, {"__name__": "__main__"})
    finally:
        await bucket.aclose()
    [result] = results
    assert not result.is_error, result.text
    assert result.text.startswith("<path>/src/main.py</path>") and "1: print('hello')" in result.text
    assert scope["fs"] in closed  # leaving the block closed the provider's client


@pytest.mark.slow
@pytest.mark.timeout(1800)
async def test_the_install_line_adds_aiobotocore(tmp_path: Path) -> None:
    [block] = code_blocks("## Setup", PAGE, "bash")
    [line] = shell_lines(block)
    assert line.startswith("pip install '.[s3]'"), line
    clone = checkout_copy(tmp_path / "dsh-fs")
    venv = tmp_path / "venv"
    await anyio.run_process([sys.executable, "-m", "venv", str(venv)])
    env = shell_env(tmp_path)
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env["PATH"]])
    done = await anyio.run_process(["bash", "-c", line], cwd=clone, env=env, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    imported = await anyio.run_process([str(venv / "bin" / "python"), "-c",
                                        "import aiobotocore, dsh_fs.fs_s3, dsh_fs; print(dsh_fs.__file__)"],
                                       cwd=tmp_path, check=False)
    assert imported.returncode == 0 and str(venv).encode() in imported.stdout, imported.stderr[-3000:]
