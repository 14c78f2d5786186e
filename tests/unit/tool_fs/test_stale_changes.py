"""``tool_fs.stale_changes``: when a stale refusal gets what changed (DEVIATIONS D30) and when it
stays as it was: nothing kept, the file gone or no file, over ``NOW_MAX_BYTES``, changed again
while read, only its line breaks changed; ``saw`` keeps only a text, only where the service is.
On the in-memory provider, through the registry and directly."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.fs.errors import FsError, FsErrorCode, stale
from dsh_fs.tool_common.switches import ToolSwitches
from dsh_fs.fs_memory import MemoryFileSystem
from dsh_fs.tool_fs.stale_changes import NOW_MAX_BYTES, SERVICE, saw, with_changes, with_changes_at
from dsh_fs.tool_fs.stale_diff import HEADER

pytestmark = pytest.mark.anyio

DEFAULT = ToolSwitches.of(dsh_fs.Profile.parse("default"))


def ready(text: str = "a\nb\n") -> tuple[dsh_fs.Context, MemoryFileSystem, Session]:
    fs = MemoryFileSystem({"f.txt": text})
    return dsh_fs.create_context(provider=fs), fs, Session(cwd="/")


async def edit(ctx: dsh_fs.Context, session: Session) -> Any:
    return await ctx.tools.execute("edit", {"file_path": "f.txt", "old_string": "a", "new_string": "z"},
                                   session=session)


PLAIN = 'Error: cannot edit "/f.txt": file changed since it was read — re-read the file, then retry'


def test_the_bound() -> None:
    assert NOW_MAX_BYTES == 1024 * 1024 and SERVICE == "seen_texts"


@pytest.mark.parametrize(("size", "shown"), [(NOW_MAX_BYTES, True), (NOW_MAX_BYTES + 1, False)])
async def test_a_current_file_over_the_bound_gets_no_diff(size: int, shown: bool) -> None:
    ctx, fs, session = ready()
    await ctx.tools.execute("read", {"file_path": "f.txt"}, session=session)
    fs.put("f.txt", "a\n" + "x" * (size - 3) + "\n")
    text = (await edit(ctx, session)).text
    assert (f"\n{HEADER}\n" in text) is shown
    if not shown:
        assert text == PLAIN


@pytest.mark.parametrize("how", ["gone", "directory"])
async def test_no_file_there_gets_no_diff(how: str) -> None:
    ctx, fs, session = ready()
    await ctx.tools.execute("read", {"file_path": "f.txt"}, session=session)
    target = await fs.resolve("f.txt")
    await fs.delete(target)
    if how == "directory":
        fs.put("f.txt/inside", "x")
    done = await ctx.tools.execute("write", {"file_path": "f.txt", "content": "new\n"}, session=session)
    assert done.error is not None and HEADER not in done.text


async def test_only_line_breaks_changed_gets_no_diff() -> None:
    ctx, fs, session = ready()
    await ctx.tools.execute("read", {"file_path": "f.txt"}, session=session)
    fs.put("f.txt", "a\r\nb\r\n")
    assert (await edit(ctx, session)).text == PLAIN


async def test_changed_again_while_read_gets_no_diff() -> None:
    ctx, fs, session = ready()
    await ctx.tools.execute("read", {"file_path": "f.txt"}, session=session)
    fs.put("f.txt", "a\nc\n")

    async def moved_on(*args: Any, **kwargs: Any) -> None:
        return None

    fs.read_text_at = moved_on  # type: ignore[method-assign]
    assert (await edit(ctx, session)).text == PLAIN


async def test_only_a_stale_refusal_in_the_default_profile_with_a_text_kept() -> None:
    ctx, fs, session = ready()
    target = await fs.resolve("f.txt")
    execution = SimpleNamespace(session=session, signal=None, cwd="/")
    err = stale("edit", "/f.txt")
    assert await with_changes(ctx, fs, target, err, execution, DEFAULT) is err  # nothing kept
    saw(ctx, target, "m0", "a\nc", execution)
    other = FsError("x", FsErrorCode.NOT_FOUND)
    assert await with_changes(ctx, fs, target, other, execution, DEFAULT) is other
    reference = ToolSwitches.of(dsh_fs.Profile.parse("reference"))
    assert await with_changes(ctx, fs, target, err, execution, reference) is err
    shown = await with_changes(ctx, fs, target, err, execution, DEFAULT)
    assert shown is not err and shown.message == err.message and shown.changes is not None
    assert shown.changes.split("\n")[-2:] == ["-c", "+b"]
    assert shown.code == "FS_STALE_VERSION"
    again = await with_changes_at(ctx, fs, "/f.txt", err, SimpleNamespace(session=session, signal=None, cwd="/"),
                                  DEFAULT)
    assert again is err  # the whole diff was seen: the text now kept is the current one
    assert await with_changes_at(ctx, fs, "/f.txt", other, execution, DEFAULT) is other
    assert await with_changes_at(ctx, fs, "/f.txt", err, execution, reference) is err
    assert await with_changes_at(ctx, fs, "/../../x\0", err, execution, DEFAULT) is err  # does not resolve


async def test_saw_keeps_only_a_text_and_only_where_the_service_is() -> None:
    ctx, fs, session = ready()
    target = await fs.resolve("f.txt")
    execution = SimpleNamespace(session=session)
    saw(ctx, target, "m1", None, execution)
    assert getattr(ctx, SERVICE).get(session, target.key) is None
    saw(ctx, target, "m1", "text", execution)
    assert getattr(ctx, SERVICE).get(session, target.key) == "text"
    bare = dsh_fs.create_context(provider=MemoryFileSystem(profile="reference"), profile="reference")
    assert not bare.has(SERVICE)
    saw(bare, target, "m1", "text", execution)  # nothing to keep it in: nothing happens


async def test_a_file_that_cannot_be_read_as_text_gets_no_diff() -> None:
    ctx, fs, session = ready()
    await ctx.tools.execute("read", {"file_path": "f.txt"}, session=session)
    fs.put("f.txt", b"a\x00\xff\n")
    assert (await edit(ctx, session)).text == PLAIN


async def test_after_a_whole_diff_the_next_change_is_shown_from_there() -> None:
    ctx, fs, session = ready()
    await ctx.tools.execute("read", {"file_path": "f.txt"}, session=session)
    fs.put("f.txt", "a\nc\n")
    assert (await edit(ctx, session)).text.split("\n")[-2:] == ["-b", "+c"]
    fs.put("f.txt", "a\nd\n")
    assert (await edit(ctx, session)).text.split("\n")[-2:] == ["-c", "+d"]
