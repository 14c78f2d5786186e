"""Differential property test: the in-memory provider (which shares its text rules with the S3
provider through ``dsh_fs.fs.provider_rules``) and the local provider produce the same bytes,
outcomes and error messages for random files, edits and rewrites, in both profiles.

Display paths differ by provider (``/f.txt`` vs ``<tmp>/f.txt``), so messages are compared
with the display path replaced. Not covered: resolution, listing, races (the contract suite).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_fs.fs import EditRequest, FsError
from dsh_fs.fs_local import LocalFileSystem
from dsh_fs.fs_memory import MemoryFileSystem

PIECES = ["a", "b", "x y", "\n", "\r\n", "\r", "\t", "é", "😀", "\ufeff", " "]
text = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)
raw = st.one_of(
    text.map(lambda t: t.encode("utf-8")),
    st.tuples(st.booleans(), text).map(lambda p: (b"\xef\xbb\xbf" if p[0] else b"") + p[1].encode("utf-8")),
    st.binary(max_size=12),
)


async def _apply(fs: Any, display: str, op: tuple[Any, ...]) -> tuple[str, Any]:
    target = await fs.resolve("f.txt")
    try:
        if op[0] == "edit":
            out = await fs.edit_text(target, EditRequest(old_string=op[1], new_string=op[2], replace_all=op[3]))
            return "ok", (out.before, out.after)
        if op[0] == "write":
            out = await fs.write_text(target, op[1])
            return "ok", (out.operation, out.before, out.after)
        return "ok", await fs.read_text(target)
    except FsError as err:
        return err.code, str(err).replace(target.display_path, "<dp>")


@settings(max_examples=150, deadline=None)
@given(
    initial=raw,
    op=st.one_of(
        st.tuples(st.just("edit"), text, text, st.booleans()),
        st.tuples(st.just("write"), text),
        st.tuples(st.just("read")),
    ),
    profile=st.sampled_from(["default", "reference"]),
)
def test_memory_matches_local(initial: bytes, op: tuple[Any, ...], profile: str) -> None:
    async def run() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            ws = os.path.join(tmp, "ws")
            os.mkdir(ws)
            with open(os.path.join(ws, "f.txt"), "wb") as handle:
                handle.write(initial)
            local = LocalFileSystem(cwd=ws, profile=profile, lock_dir=os.path.join(tmp, "locks"))
            memory = MemoryFileSystem({"f.txt": initial}, profile=profile)
            got_local = await _apply(local, ws, op)
            got_memory = await _apply(memory, "/", op)
            assert got_memory == got_local
            with open(os.path.join(ws, "f.txt"), "rb") as handle:
                assert memory.get("f.txt") == handle.read()

    anyio.run(run)
