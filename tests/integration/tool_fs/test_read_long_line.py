"""D35: reading past a huge line. The reference shows a one-line 5 MB file's first 2,000
characters and offers no way to see more (line offsets cannot: there is one line). In the
default profile ``read`` takes ``column``, whose description says how a cut line goes on
(``... (line truncated to N chars)`` shown from column c: read on at c + N; the suffix itself
stays the reference's, as the shared conformance cases pin it); chaining those reads walks the
whole line, on every path (the whole-text and streamed windows, the memory provider)."""

from __future__ import annotations

import os
from typing import Any

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.fs_memory import MemoryFileSystem

pytestmark = pytest.mark.anyio

LINE = "".join(f"{i:07d}," for i in range(625_000))  # 5,000,000 characters, each position distinct
TEXT = LINE + "\nsecond line\n"
SUFFIX = "... (line truncated to 2000 chars)"


def shown_lines(result: Any) -> list[str]:
    body = result.text.split("<content>\n", 1)[1].split("\n\n(", 1)[0]
    return body.split("\n")


def put(ws: str, text: str = TEXT) -> None:
    with open(os.path.join(ws, "big.txt"), "w", encoding="utf-8") as handle:
        handle.write(text)


@pytest.mark.parametrize("config", [{}, {"read_stream_min_size": 1024}], ids=["whole", "streamed"])
async def test_D35_a_cut_line_says_how_to_read_on_and_column_reads_on(ws, config):
    put(ws)
    ctx = dsh_fs.create_context(cwd=ws, **config)
    first = await ctx.tools.execute("read", {"file_path": "big.txt"})
    line, second = shown_lines(first)
    assert line == "1: " + LINE[:2000] + SUFFIX
    assert second == "2: second line"
    seen, column = [LINE[:2000]], 2001
    for _ in range(4):  # a few steps forward, then jump near the end
        result = await ctx.tools.execute("read", {"file_path": "big.txt", "column": column, "limit": 1})
        (shown,) = shown_lines(result)
        assert shown.startswith("1: ") and shown.endswith(SUFFIX)
        text = shown[len("1: ") : -len(SUFFIX)]
        assert text == LINE[column - 1 : column - 1 + 2000]
        seen.append(text)
        column += 2000
    assert "".join(seen) == LINE[: column - 1]
    tail = await ctx.tools.execute("read", {"file_path": "big.txt", "column": len(LINE) - 99})
    assert shown_lines(tail) == ["1: " + LINE[-100:], "2: second line"]


async def test_D35_a_column_past_the_end_of_its_line_is_refused(ws):
    put(ws)
    ctx = dsh_fs.create_context(cwd=ws)
    result = await ctx.tools.execute("read", {"file_path": "big.txt", "offset": 2, "column": 12})
    assert result.error is not None and result.error.code == "FS_NOT_FOUND"
    assert result.text == f'Error: column 12 is out of range for line 2 of "{ws}/big.txt" (11 characters)'
    bad = await ctx.tools.execute("read", {"file_path": "big.txt", "column": 0})
    assert bad.text == "Error: column must be a positive integer"


async def test_D35_column_reads_record_the_observation_as_any_read(ws):
    put(ws, "x" * 3000 + "\n")
    ctx, session = dsh_fs.create_context(cwd=ws), Session(cwd=ws)
    await ctx.tools.execute("read", {"file_path": "big.txt", "column": 2001}, session=session)
    edited = await ctx.tools.execute("edit", {"file_path": "big.txt", "old_string": "x" * 3000, "new_string": "y"},
                                     session=session)
    assert not edited.is_error, edited.text


async def test_D35_the_memory_provider_reads_on_too():
    fs = MemoryFileSystem({"/w/big.txt": TEXT}, cwd="/w")
    ctx = dsh_fs.create_context(provider=fs, cwd="/w")
    result = await ctx.tools.execute("read", {"file_path": "big.txt", "column": 4001, "limit": 1})
    (shown,) = shown_lines(result)
    assert shown == "1: " + LINE[4000:6000] + SUFFIX


async def test_D35_the_reference_profile_has_no_column_and_the_reference_suffix(ws):
    put(ws)
    ctx = dsh_fs.create_context(cwd=ws, profile="reference")
    assert "column" not in ctx.tools.get("read").schema()["parameters"]["properties"]
    line, _ = shown_lines(await ctx.tools.execute("read", {"file_path": "big.txt"}))
    assert line == "1: " + LINE[:2000] + "... (line truncated to 2000 chars)"
    default = dsh_fs.create_context(cwd=ws)
    assert default.tools.get("read").schema()["parameters"]["properties"]["column"] == {
        "type": "number",
        "description": '1-based first character of the first line to return. A line shown cut with "... (line '
                       'truncated to N chars)" goes on at column + N. Defaults to 1.',
    }
