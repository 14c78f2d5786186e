"""A stale refusal shows what changed since the owner last saw the file (DEVIATIONS D30,
default profile): two agents race and the loser's retry, built only from the diff in its
refusal, succeeds on the first try; the diff is capped and says so; what was not seen whole
gets no diff; a legacy encoding is decoded as ``read`` decodes it; the faces do the same; the
``reference`` profile's refusal is byte-exact. Through the registry, on the local disk and the
in-memory provider.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.fs_memory import MemoryFileSystem
from dsh_fs.tool_fs.stale_diff import HEADER, MAX_BYTES, MAX_LINES
from filekit import put

pytestmark = pytest.mark.anyio

CONFIG = "".join(f"setting_{i} = {i}\n" for i in range(1000)) + "timeout = 30\n" + "".join(
    f"option_{i} = {i}\n" for i in range(999))


def retry_from(refusal: str, wanted_old: str) -> str:
    """What a model does with the diff alone: the ``+`` line that replaced the line it wanted
    to change (the ``-`` line equal to ``wanted_old``) is the text to edit now."""
    lines = refusal.split("\n")
    assert lines[1] == HEADER, refusal
    minus = lines.index("-" + wanted_old)
    return next(line[1:] for line in lines[minus:] if line.startswith("+") and not line.startswith("+++"))


async def edit(ctx: dsh_fs.Context, session: Session, path: str, old: str, new: str) -> Any:
    return await ctx.tools.execute("edit", {"file_path": path, "old_string": old, "new_string": new}, session=session)


def local(ws: str, profile: str) -> tuple[dsh_fs.Context, str, Callable[[], bytes]]:
    put(f"{ws}/config.py", CONFIG)
    return (dsh_fs.create_context(cwd=ws, root=ws, profile=profile), ws,
            lambda: open(f"{ws}/config.py", "rb").read())


def memory(ws: str, profile: str) -> tuple[dsh_fs.Context, str, Callable[[], bytes]]:
    fs = MemoryFileSystem({"config.py": CONFIG}, profile=profile)
    return dsh_fs.create_context(provider=fs, profile=profile), "/", lambda: fs.get("config.py") or b""


@pytest.mark.parametrize("provider", [local, memory])
async def test_D30_two_agents_race_and_the_losers_retry_from_the_diff_succeeds_first_try(ws: str, provider: Any) -> None:
    ctx, cwd, content = provider(ws, "default")
    winner, loser = Session(cwd=cwd), Session(cwd=cwd)
    for agent in (winner, loser):
        assert not (await ctx.tools.execute("read", {"file_path": "config.py", "limit": 2000}, session=agent)).is_error
    assert not (await edit(ctx, winner, "config.py", "timeout = 30", "timeout = 60")).is_error
    refused = await edit(ctx, loser, "config.py", "timeout = 30", "timeout = 45")
    assert refused.error is not None and refused.error.code == "FS_STALE_VERSION"
    display = f"{cwd.rstrip('/')}/config.py"
    assert refused.text == (
        f'Error: cannot edit "{display}": file changed since it was read — re-read the file, then retry\n'
        f"{HEADER}\n--- {display} (as you saw it)\n+++ {display} (now)\n@@ -998,7 +998,7 @@\n"
        " setting_997 = 997\n setting_998 = 998\n setting_999 = 999\n-timeout = 30\n+timeout = 60\n"
        " option_0 = 0\n option_1 = 1\n option_2 = 2")
    retried = await edit(ctx, loser, "config.py", retry_from(refused.text, "timeout = 30"), "timeout = 45")
    assert not retried.is_error, retried.text
    assert content() == CONFIG.replace("timeout = 30", "timeout = 45").encode()


@pytest.mark.parametrize("provider", [local, memory])
async def test_D30_the_reference_profile_refusal_is_byte_exact(ws: str, provider: Any) -> None:
    ctx, cwd, content = provider(ws, "reference")
    winner, loser = Session(cwd=cwd), Session(cwd=cwd)
    for agent in (winner, loser):
        await ctx.tools.execute("read", {"file_path": "config.py", "limit": 2000}, session=agent)
    assert not (await edit(ctx, winner, "config.py", "timeout = 30", "timeout = 60")).is_error
    refused = await edit(ctx, loser, "config.py", "timeout = 60", "timeout = 45")
    assert refused.text == f'Error: cannot edit "{cwd.rstrip("/")}/config.py": file changed since it was read'
    assert not ctx.has("seen_texts")


async def test_D30_a_write_refusal_shows_the_diff_and_the_retry_goes_through(ws: str, make_ctx: Callable[..., Any]) -> None:
    path = put(f"{ws}/notes.md", "# Notes\n\n- one\n")
    ctx, session = make_ctx(), Session(cwd=ws)
    await ctx.tools.execute("read", {"file_path": "notes.md"}, session=session)
    put(path, "# Notes\n\n- one\n- two\n")
    refused = await ctx.tools.execute("write", {"file_path": "notes.md", "content": "# Notes\n\n- one\n- three\n"},
                                      session=session)
    assert refused.text.split("\n")[1:] == [
        HEADER, f"--- {ws}/notes.md (as you saw it)", f"+++ {ws}/notes.md (now)", "@@ -1,3 +1,4 @@",
        " # Notes", " ", " - one", "+- two"]
    again = await ctx.tools.execute("write", {"file_path": "notes.md", "content": "# Notes\n\n- one\n- two\n- three\n"},
                                    session=session)
    assert not again.is_error and open(path).read() == "# Notes\n\n- one\n- two\n- three\n"


async def test_D30_a_long_diff_is_cut_and_not_counted_as_seen(ws: str, make_ctx: Callable[..., Any]) -> None:
    before = "".join(f"line {i}\n" for i in range(600))
    path = put(f"{ws}/big.txt", before)
    ctx, session = make_ctx(), Session(cwd=ws)
    await ctx.tools.execute("read", {"file_path": "big.txt"}, session=session)
    put(path, "".join(f"line {i}\n" if i % 3 else f"LINE {i} changed\n" for i in range(600)))
    refused = await edit(ctx, session, "big.txt", "line 1\n", "first\n")
    lines = refused.text.split("\n")
    assert lines[1] == HEADER
    shown = lines[2:-1]
    assert len(shown) <= MAX_LINES and len("\n".join(shown).encode()) + 1 <= MAX_BYTES
    assert re.fullmatch(r"\(diff cut after \d+ lines; read the file to see the rest\)", lines[-1])
    assert int(lines[-1].split()[3]) == len(shown)
    again = await edit(ctx, session, "big.txt", "line 1\n", "first\n")  # not seen whole: still stale
    assert again.error is not None and again.error.code == "FS_STALE_VERSION"


@pytest.mark.parametrize("how", ["partial read", "a later version seen in part", "cut line"])
async def test_D30_no_diff_without_the_whole_text_seen(ws: str, make_ctx: Callable[..., Any], how: str) -> None:
    path = put(f"{ws}/a.txt", "one\ntwo\nthree\n" + ("x" * 3000 + "\n" if how == "cut line" else ""))
    ctx, session = make_ctx(), Session(cwd=ws)
    if how == "partial read":
        await ctx.tools.execute("read", {"file_path": "a.txt", "offset": 2}, session=session)
    else:
        await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session)
    if how == "a later version seen in part":  # the text kept is no longer the one last observed
        put(path, "one\ntwo\nthree\nfour\n")
        await ctx.tools.execute("read", {"file_path": "a.txt", "limit": 1}, session=session)
    put(path, "one\ntwo\nTHREE\n")
    refused = await edit(ctx, session, "a.txt", "two", "2")
    assert refused.text == f'Error: cannot edit "{ws}/a.txt": file changed since it was read — re-read the file, then retry'


async def test_D30_a_legacy_encoding_is_decoded_as_read_decodes_it(ws: str) -> None:
    path = f"{ws}/menu.txt"
    with open(path, "wb") as f:
        f.write("café\ncrème\n".encode("cp1252"))
    ctx, session = dsh_fs.create_context(cwd=ws, root=ws, encodings=["cp1252"]), Session(cwd=ws)
    await ctx.tools.execute("read", {"file_path": "menu.txt"}, session=session)
    with open(path, "wb") as f:
        f.write("café\ncrème brûlée\n".encode("cp1252"))
    refused = await edit(ctx, session, "menu.txt", "café", "thé")
    assert refused.text.split("\n")[-3:] == [" café", "-crème", "+crème brûlée"]
    retried = await edit(ctx, session, "menu.txt", "café", "thé")
    assert not retried.is_error, retried.text
    assert open(path, "rb").read() == "thé\ncrème brûlée\n".encode("cp1252")


@pytest.mark.parametrize("face", ["str_replace_editor", "str_replace_based_edit_tool"])
async def test_D30_the_text_editors_show_what_changed_since_their_view(ws: str, make_ctx: Callable[..., Any],
                                                                       face: str) -> None:
    path = put(f"{ws}/a.py", "def f():\n    return 1\n")
    ctx, session = make_ctx(faces=[face]), Session(cwd=ws)
    assert not (await ctx.tools.execute(face, {"command": "view", "path": path}, session=session)).is_error
    put(path, "def f():\n    return 2\n")
    refused = await ctx.tools.execute(face, {"command": "str_replace", "path": path, "old_str": "return 1",
                                             "new_str": "return 3"}, session=session)
    assert refused.text.split("\n")[-3:] == [" def f():", "-    return 1", "+    return 2"]
    assert refused.text.split("\n")[1].endswith(HEADER)
    retried = await ctx.tools.execute(face, {"command": "str_replace", "path": path, "old_str": "return 2",
                                             "new_str": "return 3"}, session=session)
    assert not retried.is_error, retried.text


async def test_D30_apply_patch_after_its_own_write_shows_what_changed(ws: str, make_ctx: Callable[..., Any]) -> None:
    ctx, session = make_ctx(faces=["apply_patch"]), Session(cwd=ws)
    add = "*** Begin Patch\n*** Add File: m.txt\n+alpha\n+beta\n*** End Patch\n"
    assert not (await ctx.tools.execute("apply_patch", {"input": add}, session=session)).is_error
    put(f"{ws}/m.txt", "alpha\nBETA\n")
    update = "*** Begin Patch\n*** Update File: m.txt\n alpha\n-beta\n+gamma\n*** End Patch\n"
    refused = await ctx.tools.execute("apply_patch", {"input": update}, session=session)
    assert refused.text.split("\n")[-3:] == [" alpha", "-beta", "+BETA"]


async def test_D30_a_file_read_page_by_page_gets_its_diff(ws: str, make_ctx: Callable[..., Any]) -> None:
    path = put(f"{ws}/long.py", CONFIG)
    ctx, session = make_ctx(read_max_bytes=4096), Session(cwd=ws)
    offset, pages = 1, 0
    while True:  # as a model follows read's "Use offset=N to continue"
        text = (await ctx.tools.execute("read", {"file_path": "long.py", "offset": offset}, session=session)).text
        pages += 1
        more = re.search(r"Use offset=(\d+) to continue", text)
        if more is None:
            break
        offset = int(more.group(1))
    assert pages > 2
    put(path, CONFIG.replace("timeout = 30", "timeout = 60"))
    refused = await edit(ctx, session, "long.py", "timeout = 30", "timeout = 45")
    assert "-timeout = 30\n+timeout = 60" in refused.text
    retried = await edit(ctx, session, "long.py", retry_from(refused.text, "timeout = 30"), "timeout = 45")
    assert not retried.is_error, retried.text
