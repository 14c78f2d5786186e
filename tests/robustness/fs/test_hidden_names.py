"""Invisible and bidirectional characters in names are shown escaped (deviations D22 and L3).

A hostile repository names ``report\\u202egnp.exe`` (shown raw: ``reportexe.png``) and
``a\\u200bb.txt`` beside a real ``ab.txt`` (shown raw: two ``ab.txt``). ``glob``, ``grep`` (D22,
both profiles) and ``list`` (L3, default profile) print such a name as a JSON string literal
with each format character escaped — through the registry, over MCP and from the CLI. Names
without one are printed as they are.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import anyio
import pytest

import dsh_fs
from dsh_fs import Session

BIDI = "report\u202egnp.exe"
ZERO_WIDTH = "a\u200bb.txt"
OTHERS = ["\u2066iso\u2069.txt", "wj\u2060.txt", "bom\ufeff.txt", "zwj\u200d\u200c.txt", "lrm\u200e.txt"]
NAMES = [BIDI, ZERO_WIDTH, "ab.txt", *OTHERS]


@pytest.fixture
def hostile(tmp_path: Path) -> str:
    root = os.path.realpath(tmp_path / "repo")
    os.mkdir(root)
    for name in NAMES:
        Path(root, name).write_text("alpha\n", encoding="utf-8")
    return root


def _no_hidden(text: str) -> None:
    hidden = [hex(ord(ch)) for ch in text if unicodedata.category(ch) in ("Cf", "Zl", "Zp")]
    assert not hidden, (hidden, text)


def _decoded(line: str) -> str:
    return json.loads(line) if line.startswith('"') else line


async def _texts(root: str, profile: str) -> dict[str, str]:
    ctx = dsh_fs.create_context(cwd=root, profile=profile, list_tool=True)
    session = Session(root)
    async with ctx:
        out = {}
        for name, args in (("glob", {"pattern": "*"}), ("grep", {"pattern": "alpha"}), ("list", {})):
            result = await ctx.tools.execute(name, args, session=session)
            assert not result.is_error, result.text
            out[name] = result.text
    return out


def _check_glob_and_grep(glob: str, grep: str) -> None:
    for text in (glob, grep):
        _no_hidden(text)
        assert '"report\\u202egnp.exe"' in text and '"a\\u200bb.txt"' in text
    assert sorted(_decoded(line) for line in glob.split("\n")) == sorted(NAMES)
    headers = [group.split("\n")[0] for group in grep.split("\n\n")[1:]]
    assert sorted(_decoded(header) for header in headers) == sorted(NAMES)
    assert "ab.txt" in glob.split("\n")  # an ordinary name stays as it is


def _listed(text: str) -> list[str]:
    body = text.split("<content>\n", 1)[1].split("\n\n", 1)[0]
    return [_decoded(line.removesuffix(" (6 bytes)")) for line in body.split("\n")]


@pytest.mark.parametrize("profile", ["default", "reference"])
def test_D22_glob_and_grep_escape_format_characters(hostile: str, profile: str) -> None:
    texts = anyio.run(_texts, hostile, profile)
    _check_glob_and_grep(texts["glob"], texts["grep"])


def test_L3_list_escapes_format_characters(hostile: str) -> None:
    text = anyio.run(_texts, hostile, "default")["list"]
    _no_hidden(text)
    assert '"report\\u202egnp.exe"' in text and '"a\\u200bb.txt"' in text and "\nab.txt (6 bytes)\n" in text
    assert sorted(_listed(text)) == sorted(NAMES)


def test_L3_the_reference_profile_lists_names_as_the_reference_does(hostile: str) -> None:
    text = anyio.run(_texts, hostile, "reference")["list"]
    assert BIDI in text.split("\n") and ZERO_WIDTH in text.split("\n")


def test_over_mcp(hostile: str) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from httpkit import STARTUP_TIMEOUT, server_argv

    async def main() -> dict[str, str]:
        params = StdioServerParameters(command=sys.executable, args=server_argv(hostile)[1:], cwd=hostile)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=STARTUP_TIMEOUT) as session:
                await session.initialize()
                out = {}
                for name, args in (("glob", {"pattern": "*"}), ("grep", {"pattern": "alpha"}), ("list", {})):
                    result = await session.call_tool(name, args)
                    assert not result.is_error
                    out[name] = result.content[0].text
                return out

    texts = anyio.run(main)
    _check_glob_and_grep(texts["glob"], texts["grep"])
    _no_hidden(texts["list"])
    assert sorted(_listed(texts["list"])) == sorted(NAMES)


def test_from_the_cli(hostile: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_FS_")}

    def run(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", *args], cwd=hostile, env=env,
                              capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr
        return done.stdout.decode("utf-8").rstrip("\n")

    _check_glob_and_grep(run("glob", "*"), run("grep", "alpha"))
    listed = run("list")
    _no_hidden(listed)
    assert sorted(_listed(listed)) == sorted(NAMES)
