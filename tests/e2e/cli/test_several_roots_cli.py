"""``dsh-fs mcp --root A --root B`` and ``dsh-fs client-config --root A --root B`` (DEVIATIONS
D28): both roots served over a real stdio server with the SDK client, the session's cwd the
first; the bad ones (overlapping, a file, missing) refused before serving, exit 2."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

import anyio

import clikit
from mcp_support import stdio_session

pytestmark = pytest.mark.anyio


async def mcp_call(client: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """One ``tools/call``: ``{"ok", "code", "text"}`` (the code from ``_meta.dsh_fs.error``)."""
    with anyio.fail_after(60):
        result = await client.call_tool(tool, args)
    meta = (result.meta or {}).get("dsh_fs", {})
    text = "".join(getattr(block, "text", "") for block in result.content)
    return {"ok": not result.is_error, "code": meta.get("error", {}).get("code"), "text": text}


@pytest.fixture
def two(tmp_path: Any) -> tuple[str, str]:
    base = os.path.realpath(str(tmp_path))
    a, b = os.path.join(base, "a"), os.path.join(base, "b")
    for d, text in ((a, "in a\n"), (b, "in b\n")):
        os.mkdir(d)
        with open(os.path.join(d, "x.txt"), "w", encoding="utf-8") as handle:
            handle.write(text)
    return a, b


@pytest.mark.timeout(120)
async def test_mcp_serves_every_root_and_resolves_against_the_first(two: tuple[str, str]) -> None:
    a, b = two
    async with stdio_session(a, "--root", b) as client:
        relative = await mcp_call(client, "read", {"file_path": "x.txt"})
        assert relative["ok"] and relative["text"].startswith(f"<path>{a}/x.txt</path>") and "1: in a" in relative["text"]
        other = await mcp_call(client, "read", {"file_path": f"{b}/x.txt"})
        assert other["ok"] and "1: in b" in other["text"]
        wrote = await mcp_call(client, "write", {"file_path": f"{b}/new.txt", "content": "new\n"})
        assert wrote["ok"], wrote
        outside = await mcp_call(client, "read", {"file_path": "../x.txt"})
        base = os.path.dirname(a)
        assert (outside["code"], outside["text"]) == (
            "FS_PERMISSION_DENIED", f'Error: cannot resolve "{base}/x.txt": outside the workspace "{a}", "{b}"')
    with open(os.path.join(b, "new.txt"), encoding="utf-8") as handle:
        assert handle.read() == "new\n"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*clikit.PREFIX, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("kind", ["equal", "nested", "symlinked"])
def test_overlapping_roots_are_a_usage_error(two: tuple[str, str], kind: str) -> None:
    a, b = two
    if kind == "equal":
        second = a
    elif kind == "nested":
        os.mkdir(os.path.join(a, "sub"))
        second = os.path.join(a, "sub")
    else:
        second = os.path.join(os.path.dirname(a), "alias")
        os.symlink(a, second)
    done = _run("mcp", "--root", a, "--root", second)
    assert done.returncode == 2, done.stderr
    # click resolves the path it is given (resolve_path): the symlinked spelling is the real one
    shown = a if kind != "nested" else second
    assert done.stderr.splitlines()[-1] == f"Error: LocalFileSystem: roots {a} and {shown} overlap"


@pytest.mark.parametrize("kind", ["file", "missing"])
def test_a_root_that_is_a_file_or_missing_is_a_usage_error(two: tuple[str, str], kind: str) -> None:
    a, _ = two
    bad = os.path.join(a, "x.txt") if kind == "file" else os.path.join(a, "nope")
    done = _run("mcp", "--root", a, "--root", bad)
    assert done.returncode == 2
    why = "is a file" if kind == "file" else "does not exist"
    assert done.stderr.splitlines()[-1] == f"Error: Invalid value for '--root': Directory '{bad}' {why}."


def test_more_than_64_roots_is_a_usage_error(tmp_path: Any) -> None:
    base = os.path.realpath(str(tmp_path))
    args = []
    for i in range(65):
        os.mkdir(os.path.join(base, f"r{i}"))
        args += ["--root", os.path.join(base, f"r{i}")]
    done = _run("mcp", *args)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == "Error: LocalFileSystem: at most 64 roots"


def test_client_config_names_every_root(two: tuple[str, str]) -> None:
    a, b = two
    done = _run("client-config", "--root", a, "--root", b)
    assert done.returncode == 0, done.stderr
    args = json.loads(done.stdout)["mcpServers"]["dsh-fs"]["args"]
    assert args[-5:] == ["mcp", "--root", a, "--root", b]


def test_client_config_passes_mcp_options_after_a_double_dash(two: tuple[str, str]) -> None:
    a, _ = two
    done = _run("client-config", "--root", a, "--", "--images", "--session", "agent", "--sandbox", "read-only")
    assert done.returncode == 0, done.stderr
    args = json.loads(done.stdout)["mcpServers"]["dsh-fs"]["args"]
    assert args[-8:] == ["mcp", "--root", a, "--images", "--session", "agent", "--sandbox", "read-only"]
    for bad, said in ((["--bogus"], "Error: after --: No such option '--bogus'."),
                      (["--sandbox", "nope"], "Error: after --: Invalid value for '--sandbox'"),
                      (["--help"], "Error: --help after -- is not an option of the served command"),
                      (["extra"], "Error: after --: Got unexpected extra argument (extra)")):
        refused = _run("client-config", "--root", a, "--", *bad)
        assert refused.returncode == 2 and refused.stdout == "", bad
        assert refused.stderr.splitlines()[-1].startswith(said), refused.stderr
