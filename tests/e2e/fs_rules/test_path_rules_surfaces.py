"""The path-rules matrix over the other surfaces (docs/PATH-RULES.md): ``dsh-fs mcp --deny …
--read-only-path …`` (every row of ``pathruleskit.ROWS`` as an MCP ``tools/call`` over stdio,
on the local disk and on an S3 bucket prefix), and the tool commands (every row whose tool has
a command: ``read``, ``write``, ``edit``, ``list``, ``glob``, ``grep``, ``apply-patch``), each
a real process. Also ``--rules-file``, ``--show-rules`` in the MCP instructions, and the usage
errors. The tool commands on S3 too (``--s3``). The registry and the memory provider (which no
command line serves): tests/integration/fs_rules/.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_support import RawStdio, call_raw, row as wire_row, stdio_session
from pathruleskit import DENY, READ_ONLY, ROWS, Row, args_for, check, layout

from dsh_fs.faces import FACE_TOOLS
from dsh_fs.testing.fixtures import s3_endpoint  # noqa: F401  (registers the fixture)
from dsh_fs.testing.workspaces import S3Workspace

pytestmark = pytest.mark.anyio

RULE_FLAGS = [*(f"--deny={p}" for p in DENY), *(f"--read-only-path={p}" for p in READ_ONLY)]
TOOLS = ",".join(["list", "read", "write", "edit", "glob", "grep", "read_image", "read_pdf", *FACE_TOOLS])


def _put(root: Path) -> None:
    for rel, data in layout().items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_FS_")}
    env.update(DSH_FS_STATE_DIR=str(tmp_path / "state"), DSH_FS_LOCK_DIR=str(tmp_path / "locks"),
               AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1")
    return env


async def _run_rows(session: ClientSession, root: str) -> None:
    for row in ROWS:
        for rel in row.reads:
            read = wire_row(await call_raw(session, "read", {"file_path": rel}))
            assert not read["is_error"], read
        result = wire_row(await call_raw(session, row.tool, args_for(row, root)))
        check(row, result["is_error"], result["text"], result["code"])


async def test_mcp_stdio_on_the_local_disk(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    _put(root)
    before = _tree(root)
    async with stdio_session(str(root), *RULE_FLAGS, "--tools", TOOLS, "--images", "--pdfs") as session:
        await _run_rows(session, str(root))
        instructions = session.server_info  # noqa: F841  (the handshake passed)
    assert _tree(root) == before


@pytest.fixture
async def bucket(s3_endpoint: str) -> AsyncIterator[S3Workspace]:  # noqa: F811
    ws = await S3Workspace(endpoint_url=s3_endpoint).create()
    for rel, data in layout().items():
        await ws.put(rel, data)
    yield ws
    await ws.aclose()


async def test_mcp_stdio_on_s3(bucket: S3Workspace, s3_endpoint: str, tmp_path: Path) -> None:  # noqa: F811
    before = await bucket.files()
    url = f"s3://{bucket.location.bucket}/{bucket.location.prefix}"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "dsh_fs.cli.main", "mcp", "--s3", url, "--endpoint-url", s3_endpoint, *RULE_FLAGS,
              "--tools", TOOLS, "--images", "--pdfs"],
        env=_env(tmp_path))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            with anyio.fail_after(60):
                await session.initialize()
            await _run_rows(session, "/")
    assert await bucket.files() == before


def _cli_argv(row: Row) -> list[str] | None:
    """The tool command of a row, or ``None`` for a tool without one."""
    a = row.args
    if row.tool == "read":
        return ["read", a["file_path"]]
    if row.tool == "write":
        return ["write", a["file_path"], "--content", a["content"]]
    if row.tool == "edit":
        return ["edit", a["file_path"], "--old", a["old_string"], "--new", a["new_string"]]
    if row.tool == "list":
        return ["list", a["path"]]
    if row.tool in ("glob", "grep"):
        return [row.tool, a["pattern"], *(["--path", a["path"]] if "path" in a else [])]
    if row.tool == "apply_patch":
        return ["apply-patch", "-"]
    return None


def _cli(argv: list[str], cwd: Path, env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", *argv], cwd=cwd, env=env, input=stdin,
                          capture_output=True, text=True, timeout=120)


CLI_ROWS = [r for r in ROWS if _cli_argv(r) is not None]


@pytest.mark.parametrize("row", CLI_ROWS, ids=lambda r: r.name)
async def test_tool_commands_on_s3(bucket: S3Workspace, s3_endpoint: str, tmp_path: Path, row: Row) -> None:  # noqa: F811
    env = _env(tmp_path)
    where = ["--s3", f"s3://{bucket.location.bucket}/{bucket.location.prefix}", "--endpoint-url", s3_endpoint]
    session = ["--session", "s1"]
    for rel in row.reads:
        read = await anyio.to_thread.run_sync(lambda: _cli(["read", rel, *session, *where, *RULE_FLAGS], tmp_path, env))
        assert read.returncode == 0, read.stdout + read.stderr
    before = await bucket.files()
    argv = _cli_argv(row)
    assert argv is not None
    done = await anyio.to_thread.run_sync(
        lambda: _cli([*argv, *session, *where, *RULE_FLAGS], tmp_path, env, stdin=row.args.get("input")))
    assert done.returncode in (0, 1), done.stderr
    check(row, done.returncode == 1, done.stdout, None)
    assert await bucket.files() == before


@pytest.mark.parametrize("row", CLI_ROWS, ids=lambda r: r.name)
def test_tool_commands(tmp_path: Path, row: Row) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    _put(root)
    env = _env(tmp_path)
    session = ["--session", "s1"]
    for rel in row.reads:
        assert _cli(["read", rel, *session, *RULE_FLAGS], root, env).returncode == 0
    before = _tree(root)
    argv = _cli_argv(row)
    assert argv is not None
    done = _cli([*argv, *session, *RULE_FLAGS], root, env, stdin=row.args.get("input"))
    assert done.returncode in (0, 1), done.stderr
    check(row, done.returncode == 1, done.stdout, None)
    assert _tree(root) == before


async def test_rules_file_and_shown_instructions(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    _put(root)
    rules = tmp_path / "rules.toml"
    rules.write_text('deny = ["secret.txt", "keys/"]\nread_only = ["frozen.txt"]\n')
    async with stdio_session(str(root), "--rules-file", str(rules), "--show-rules") as session:
        denied = wire_row(await call_raw(session, "read", {"file_path": "secret.txt"}))
        assert denied["is_error"] and "the path rules deny access to it" in denied["text"]
        listing = wire_row(await call_raw(session, "list", {"path": "."}))
        assert "keys" not in listing["text"] and "open.txt" in listing["text"]
    result = _cli(["prompt", "--rules-file", str(rules), "--show-rules"], root, _env(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "Denied (gitignore patterns, relative to each workspace root): secret.txt, keys/" in result.stdout
    assert "Read-only (gitignore patterns, relative to each workspace root): frozen.txt" in result.stdout


def test_the_mcp_instructions_say_rules_exist(tmp_path: Path) -> None:
    """P6: the ``tool:path-rules`` section is in the server's instructions (with the tools'
    own sections), without the patterns unless --show-rules."""
    root = tmp_path / "ws"
    root.mkdir()
    with RawStdio(str(root), *RULE_FLAGS) as raw:
        told = raw.initialize()["result"]["instructions"]
    assert "Path rules: Some paths are denied by the deployment's path rules" in told
    assert "Others are read-only" in told and "secret.txt" not in told and "keys/" not in told
    with RawStdio(str(root), *RULE_FLAGS, "--show-rules") as raw:
        shown = raw.initialize()["result"]["instructions"]
    assert "Denied (gitignore patterns, relative to each workspace root): secret.txt, keys/, *.pem" in shown
    with RawStdio(str(root)) as raw:
        assert "Path rules" not in raw.initialize()["result"].get("instructions", "")


@pytest.mark.parametrize("argv, error", [
    (["read", "a.txt", "--deny", ""], "Error: --deny: '' is not a path pattern"),
    (["read", "a.txt", "--read-only-path", "#x"], "Error: --read-only-path: '#x' is not a path pattern"),
    (["read", "a.txt", "--rules-file", "missing.toml"], "Error: Invalid value for '--rules-file': File 'missing.toml' does not exist."),
    (["read", "a.txt", "--rules-file", "{bad}"], "bad.toml: unknown key 'allow' (a rules file has deny and read_only)"),
    (["read", "a.txt", "--show-rules"], "Error: --show-rules needs --deny, --read-only-path or --rules-file"),
    (["mcp", "--deny", "!"], "Error: --deny: '!' is not a path pattern"),
])
def test_usage_errors(tmp_path: Path, argv: list[str], error: str) -> None:
    (tmp_path / "bad.toml").write_text('allow = ["x"]\n')
    argv = [arg.replace("{bad}", str(tmp_path / "bad.toml")) for arg in argv]
    result = _cli(argv, tmp_path, _env(tmp_path))
    assert result.returncode == 2 and result.stdout == ""
    assert error in result.stderr, result.stderr
