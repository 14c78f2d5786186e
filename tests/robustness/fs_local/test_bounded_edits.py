"""Edits that ask for too much (tracker issue 12, items 3 and 4; DEVIATIONS D16).

* Memory: the issue's own example — 1 MB of ``a``, ``replace_all`` of ``a`` by 1000
  characters (a 1 GB result) — is refused with the size before anything is built: the
  registry call's peak allocation stays near the file's size, the file is untouched, and the
  MCP server answers with the error and keeps serving (it used to die of OOM).
* Time: a streamed edit of a huge file is linear in the file, whatever the number of
  matches (the carriage-return scan ran once per match over the whole piece: ~200 s for
  33 MiB of ``aaaa``). Measured without a clock: the Python lines the streamed matcher
  executes are traced and counted — they grow with the number of pieces, not with the
  matches in them (and in proportion to the matches only where each match's raw span must
  be mapped: a multi-line ``old_string`` in a file mixing CRLF and LF).
"""

from __future__ import annotations

import json
import os
import tracemalloc
from typing import Any

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.fs import literal_edit_stream
from dsh_fs.fs_local import LocalFileSystem, large_edit
from robustkit import RawMcp, call, needs_mcp, temp_entries
from stepcount import traced_lines

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

LIMIT = 268435456  # the default write_max_size, 256 MiB


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_a_replace_all_that_would_exhaust_memory_is_refused(ws: str, profile: str) -> None:
    path = os.path.join(ws, "a.txt")
    with open(path, "wb") as handle:
        handle.write(b"a" * 1_000_000)
    ctx = dsh_fs.create_context(cwd=ws, profile=profile, policy=False)
    tracemalloc.start()
    try:
        result = await call(ctx, "edit", {"file_path": "a.txt", "old_string": "a", "new_string": "b" * 1000,
                                          "replace_all": True}, Session(cwd=ws))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.error is not None and result.error.code == "FS_IO_ERROR"
    assert result.text == (f'Error: cannot edit "{path}": the file would be 1000000000 bytes, '
                           f"more than the limit of {LIMIT} bytes")
    assert peak < 16 * 1024 * 1024, peak  # the file (1 MB) a few times over, never the result
    with open(path, "rb") as handle:
        assert handle.read() == b"a" * 1_000_000
    assert temp_entries(ws) == []


@needs_mcp
def test_the_mcp_server_answers_the_oversized_edit_and_keeps_serving(ws: str) -> None:
    path = os.path.join(ws, "a.txt")
    with open(path, "wb") as handle:
        handle.write(b"a" * 1_000_000)
    server = RawMcp(ws)
    try:
        read = server.call('"read"', json.dumps({"file_path": "a.txt", "limit": 1}))
        assert read["result"]["isError"] is False
        edit = server.call('"edit"', json.dumps({"file_path": "a.txt", "old_string": "a", "new_string": "b" * 1000,
                                                 "replace_all": True}))
        assert edit["result"]["isError"] is True
        assert edit["result"]["content"][0]["text"] == (
            f'Error: cannot edit "{path}": the file would be 1000000000 bytes, more than the limit of {LIMIT} bytes')
        again = server.call('"read"', json.dumps({"file_path": "a.txt", "limit": 1}))
        assert again["result"]["isError"] is False  # still serving
    finally:
        server.close()


def streamed_edit_lines(ws: str, data: bytes, old: str, new: str, name: str) -> int:
    """Lines traced in the streamed matcher and driver for one ``replace_all`` edit (64 KiB pieces)."""
    path = os.path.join(ws, name)
    with open(path, "wb") as handle:
        handle.write(data)
    fs = LocalFileSystem(cwd=ws, stream_edit_min_size=1)
    target = dsh_fs.Target(key=dsh_fs.TargetKey(os.path.realpath(path)), display_path=path)
    request = dsh_fs.EditRequest(old_string=old, new_string=new, replace_all=True)

    def run() -> None:
        large_edit.edit_large_file(target, request, files_probe(path), signal=None, rules=fs.rules, chunk=64 * 1024)

    return traced_lines(run, literal_edit_stream, large_edit)[1]


def files_probe(path: str) -> Any:
    from dsh_fs.fs_local import files

    return files.probe(path, "edit", path)


SIZE = 4 * 1024 * 1024


@pytest.mark.parametrize(
    ("unit", "old", "new"),
    [
        (b"aaaa", "aaaa", "bbbbbbbb"),  # the case: a match every 4 bytes, the output doubles
        (b"x = 1\r\n", "1", "2"),  # CRLF file, old_string without a line break: matched on the raw bytes
        (b"x = 1\r\n", "1\nx", "2\nx"),  # CRLF-only file: the line breaks of old_string matched as CRLF
    ],
)
def test_a_streamed_edit_does_not_work_per_match(ws: str, unit: bytes, old: str, new: str) -> None:
    """The same file size with 10 matches and with a match every few bytes (a million of
    them): the traced Python work differs by a constant — the first pass notes the first
    ``_RECORD`` match positions, one by one — plus a bounded number of lines per piece."""
    few = streamed_edit_lines(ws, unit * 10 + b"_" * (SIZE - len(unit) * 10), old, new, "few.txt")
    many = streamed_edit_lines(ws, unit * (SIZE // len(unit)), old, new, "many.txt")
    pieces = SIZE // (64 * 1024)
    assert many <= few + 5 * large_edit._RECORD + 60 * pieces, (few, many)


def test_mapped_spans_are_linear_in_the_matches(ws: str) -> None:
    """A multi-line old_string in a file mixing CRLF and LF maps each match to its raw span:
    twice the matches cost at most about twice the work, never the square."""
    unit = b"ab\r\nab\n"
    small = streamed_edit_lines(ws, unit * 20_000, "b\na", "X\nY", "small.txt")
    large = streamed_edit_lines(ws, unit * 40_000, "b\na", "X\nY", "large.txt")
    assert large <= 2.2 * small, (small, large)


FACES_ON_A_HUGE_FILE = r"""
import anyio, json, resource, sys
import dsh_fs
ws = sys.argv[1]
faces = ["str_replace_based_edit_tool", "str_replace_editor", "apply_patch"]
contexts = {p: dsh_fs.create_context(root=ws, cwd=ws, policy=False, profile=p, faces=faces)
            for p in ("default", "reference")}
out = {}
async def main():
    s = dsh_fs.Session(cwd=ws)
    await contexts["default"].tools.execute("read", {"file_path": "small.txt"}, session=s)  # warm every path
    base = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0])  # VmHWM: this process's own peak (ru_maxrss counts the test runner that spawned it)
    calls = [
        ("view", "str_replace_based_edit_tool", {"command": "view", "path": "big.txt", "view_range": [1, 3]}),
        ("view-all", "str_replace_based_edit_tool", {"command": "view", "path": "big.txt"}),
        ("ref-view", "str_replace_editor", {"command": "view", "path": ws + "/big.txt", "view_range": [1, 3]}),
        ("insert", "str_replace_based_edit_tool", {"command": "insert", "path": "big.txt", "insert_line": 1,
                                                   "insert_text": "x"}),
        ("ref-insert", "str_replace_editor", {"command": "insert", "path": ws + "/big.txt", "insert_line": 1,
                                              "new_str": "x"}),
        ("patch", "apply_patch", {"input": "*** Begin Patch\n*** Update File: big.txt\n@@\n-line 0000001\n+one\n"
                                           "*** End Patch\n"}),
    ]
    for profile, ctx in contexts.items():
        for name, tool, args in calls:
            if (profile, name) == ("reference", "view-all"):
                continue  # Anthropic's view is whole in the reference profile (unbounded by contract)
            r = await ctx.tools.execute(tool, args, session=s)
            out[profile + " " + name] = [r.error.code if r.error else None, r.text[:400]]
    out["grown_kib"] = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) - base
anyio.run(main)
print(json.dumps(out))
"""


def test_E24_the_faces_never_hold_a_multiple_of_a_huge_file(ws: str) -> None:
    """A 64 MiB file: views of three lines (both faces, both profiles) and a whole clipped view
    hold only what they show; ``insert`` and a one-line ``apply_patch`` update are refused before
    reading, naming the limit. The child's peak RSS grows by less than half the file."""
    import subprocess
    import sys

    from robustkit import child_env

    line = 13  # "line 0000001\n"
    with open(os.path.join(ws, "big.txt"), "w") as handle:
        for start in range(0, 64 * 1024 * 1024 // line, 100_000):
            handle.write("".join(f"line {i:07d}\n" for i in range(start + 1, start + 100_001)))
    with open(os.path.join(ws, "small.txt"), "w") as handle:
        handle.write("x\n")
    size = os.path.getsize(os.path.join(ws, "big.txt"))
    before = os.stat(os.path.join(ws, "big.txt"))
    proc = subprocess.run([sys.executable, "-c", FACES_ON_A_HUGE_FILE, ws], capture_output=True, text=True,
                          timeout=120, env=child_env())
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    for profile in ("default", "reference"):
        assert out[f"{profile} view"] == [None, "1: line 0000001\n2: line 0000002\n3: line 0000003"]
        assert out[f"{profile} ref-view"][0] is None and out[f"{profile} ref-view"][1].endswith(
            "     1  line 0000001\n     2  line 0000002\n     3  line 0000003\n")
        for name in ("insert", "ref-insert"):
            assert out[f"{profile} {name}"] == ["FS_IO_ERROR", (
                f'Error: cannot insert into "{ws}/big.txt": the file is {size} bytes, more than the limit of '
                "16777216 bytes insert changes; change it with str_replace")]
        assert out[f"{profile} patch"] == ["FS_IO_ERROR", (
            f"Error: Failed to read file to update {ws}/big.txt: the file is {size} bytes, more than the limit of "
            "16777216 bytes apply_patch updates; change it with edit")]
    assert out["default view-all"][1].startswith("1: line 0000001\n")  # E20: clipped
    assert out["grown_kib"] * 1024 < size / 2, out["grown_kib"]
    after = os.stat(os.path.join(ws, "big.txt"))
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
