"""Many processes on one file (tracker issue 4, item 2; DEVIATIONS A4, A5).

Several agent processes — plain Python processes with their own deployment and ``Session``,
and ``dsh-fs mcp`` stdio servers driven by the MCP SDK's ``ClientSession`` — read-then-edit
one file. Each edit replaces a marker line by a unique token plus the marker. Every edit
reported successful is in the final file exactly once, every one that lost the race got
``FS_STALE_VERSION``: zero lost updates. In lockstep (everyone reads, then everyone edits)
exactly one edit per round wins.

A same-size in-place rewrite by another process that restores the mtime (A5) after an
agent's read makes the agent's edit stale, including when every stat field is unchanged
(a rewrite inside one timestamp tick, simulated exactly with the version token).
"""

from __future__ import annotations

import collections
import os
import sys
from typing import Any

import anyio
import pytest

import dsh_fs
from dsh_fs import EditRequest, FsError, FsErrorCode, Session
from dsh_fs.fs.types import EditIntent, ReplaceIfVersion
from dsh_fs.fs_local import LocalFileSystem
from dsh_fs.fs_local import versions
from robustkit import Lines, call, mcp_call as _mcp_call, mcp_clients, needs_mcp, python_argv

MARKER = "<<<MARKER>>>\n"
FILE = "shared.txt"
STALE_TEXT = 'Error: cannot edit "{path}": file changed since it was read — re-read the file, then retry'
"""a stale refusal's first line (the default profile's D30 adds what changed on the next lines)"""


def _seed(ws: str) -> str:
    path = os.path.join(ws, FILE)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("header\n" + MARKER + "footer\n")
    return path


def _tokens(path: str) -> list[str]:
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    assert lines[0] == "header" and lines[-3:] == [MARKER.rstrip("\n"), "footer", ""], lines[-3:]
    return lines[1:-3]


@pytest.fixture
def workers(ws: str) -> Any:
    procs = [Lines(python_argv("robustness/fs_local/edit_worker.py", ws, FILE)) for _ in range(4)]
    try:
        yield procs
    finally:
        for proc in procs:
            proc.close()


@pytest.mark.timeout(120)
def test_lockstep_rounds_have_one_winner_and_stale_losers(ws: str, workers: list[Lines]) -> None:
    path = _seed(ws)
    winners = []
    for r in range(12):
        for w in workers:
            w.send({"op": "read"})
        assert all(w.recv()["ok"] for w in workers)
        for i, w in enumerate(workers):
            w.send({"op": "edit", "token": f"r{r}-w{i}"})
        replies = [w.recv() for w in workers]
        ok = [f"r{r}-w{i}" for i, reply in enumerate(replies) if reply["ok"]]
        assert len(ok) == 1, replies
        winners += ok
        for reply in replies:
            if not reply["ok"]:
                assert reply["code"] == "FS_STALE_VERSION", reply
                assert reply["text"].partition("\n")[0] == STALE_TEXT.format(path=path)  # then D30's diff
    assert _tokens(path) == winners


@pytest.mark.timeout(180)
def test_free_running_loops_lose_no_update(ws: str, workers: list[Lines]) -> None:
    path = _seed(ws)
    for i, w in enumerate(workers):
        w.send({"op": "loop", "n": 40, "prefix": f"w{i}"})
    replies = [w.recv(timeout=150) for w in workers]
    ok = [token for reply in replies for token in reply["ok"]]
    failed = [entry for reply in replies for entry in reply["failed"]]
    assert len(ok) + len(failed) == 4 * 40
    assert all(code == "FS_STALE_VERSION" for _, code in failed), failed
    found = _tokens(path)
    assert collections.Counter(found) == collections.Counter(ok), "a reported edit is missing (lost update)"
    for i, reply in enumerate(replies):  # each agent's own edits keep their order
        mine = [t for t in found if t.startswith(f"w{i}-")]
        assert mine == reply["ok"]
    print(f"{len(ok)} edits won, {len(failed)} lost the race (stale)")


# -- the same through dsh-fs mcp servers -------------------------------------------------------

@needs_mcp
@pytest.mark.anyio
@pytest.mark.timeout(180)
async def test_mcp_servers_lockstep_and_loops(ws: str) -> None:
    path = _seed(ws)
    edit = {"file_path": FILE, "old_string": MARKER}
    async with mcp_clients(ws, 3) as clients:
        winners: list[str] = []
        for r in range(6):
            reads = [await _mcp_call(c, "read", {"file_path": FILE, "limit": 1}) for c in clients]
            assert all(reply["ok"] for reply in reads), reads
            replies: list[dict[str, Any]] = [{}] * len(clients)

            async def one(i: int) -> None:
                replies[i] = await _mcp_call(clients[i], "edit", {**edit, "new_string": f"m{r}-{i}\n{MARKER}"})

            async with anyio.create_task_group() as tg:
                for i in range(len(clients)):
                    tg.start_soon(one, i)
            ok = [f"m{r}-{i}" for i, reply in enumerate(replies) if reply["ok"]]
            assert len(ok) == 1, replies
            winners += ok
            for reply in replies:
                if not reply["ok"]:
                    assert reply["code"] == "FS_STALE_VERSION", reply
                    assert reply["text"].partition("\n")[0] == STALE_TEXT.format(path=path)  # then D30's diff
        assert _tokens(path) == winners

        won: list[str] = []
        lost: list[Any] = []

        async def loop(i: int) -> None:
            for n in range(25):
                token = f"c{i}-{n}"
                seen = await _mcp_call(clients[i], "read", {"file_path": FILE, "limit": 1})
                assert seen["ok"], seen
                reply = await _mcp_call(clients[i], "edit", {**edit, "new_string": f"{token}\n{MARKER}"})
                (won.append(token) if reply["ok"] else lost.append(reply["code"]))

        async with anyio.create_task_group() as tg:
            for i in range(len(clients)):
                tg.start_soon(loop, i)
    assert all(code == "FS_STALE_VERSION" for code in lost), lost
    assert collections.Counter(_tokens(path)) == collections.Counter(winners + won)


@needs_mcp
@pytest.mark.anyio
@pytest.mark.timeout(180)
async def test_mcp_servers_and_python_agents_together(ws: str, workers: list[Lines]) -> None:
    path = _seed(ws)
    for i, w in enumerate(workers[:2]):
        w.send({"op": "loop", "n": 30, "prefix": f"p{i}"})
    won: list[str] = []
    lost: list[Any] = []
    async with mcp_clients(ws, 3) as clients:
        async def loop(i: int) -> None:
            for n in range(20):
                token = f"m{i}-{n}"
                seen = await _mcp_call(clients[i], "read", {"file_path": FILE, "limit": 1})
                assert seen["ok"], seen
                args = {"file_path": FILE, "old_string": MARKER, "new_string": f"{token}\n{MARKER}"}
                reply = await _mcp_call(clients[i], "edit", args)
                (won.append(token) if reply["ok"] else lost.append(reply["code"]))

        async with anyio.create_task_group() as tg:
            for i in range(len(clients)):
                tg.start_soon(loop, i)
    replies = [await anyio.to_thread.run_sync(lambda w=w: w.recv(timeout=150)) for w in workers[:2]]
    won += [t for reply in replies for t in reply["ok"]]
    lost += [code for reply in replies for _, code in reply["failed"]]
    assert len(won) + len(lost) == 3 * 20 + 2 * 30
    assert all(code == "FS_STALE_VERSION" for code in lost), lost
    assert collections.Counter(_tokens(path)) == collections.Counter(won)


# -- A5: a same-size rewrite inside one clock tick ---------------------------------------------

REWRITER = """
import json, os, sys
for line in sys.stdin:
    path = json.loads(line)
    st = os.stat(path)
    with open(path, "r+b") as f:
        data = f.read()
        f.seek(0)
        f.write(data.replace(b"alpha", b"omega"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    print(json.dumps(len(data)), flush=True)
"""


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_same_size_rewrite_with_restored_mtime_is_stale(ws: str) -> None:
    rewriter = Lines([sys.executable, "-c", REWRITER])
    ctx = dsh_fs.create_context(cwd=ws)
    path = os.path.join(ws, "a5.txt")
    unchanged_fields = 0
    try:
        for i in range(20):
            with open(path, "w") as handle:
                handle.write(f"alpha {i}\nline two\n")
            session = Session(cwd=ws)
            assert not (await call(ctx, "read", {"file_path": "a5.txt"}, session)).is_error
            before = os.stat(path)
            rewriter.send(path)
            assert rewriter.recv() == os.path.getsize(path)
            after = os.stat(path)
            unchanged_fields += versions.fields_of(before) == versions.fields_of(after)
            assert after.st_mtime_ns == before.st_mtime_ns and after.st_size == before.st_size
            result = await call(ctx, "edit", {"file_path": "a5.txt", "old_string": "two", "new_string": "2"}, session)
            assert result.error is not None and result.error.code == "FS_STALE_VERSION", result.text
            assert result.text.partition("\n")[0] == STALE_TEXT.format(path=path)  # then D30's diff
            with open(path) as handle:
                assert handle.read() == f"omega {i}\nline two\n"
    finally:
        rewriter.close()
    print(f"{unchanged_fields}/20 rewrites left every stat field unchanged")


@pytest.mark.anyio
async def test_identical_stat_fields_still_stale_by_content(ws: str) -> None:
    """The exact same-tick case: the expected token's stat fields equal the current ones, only
    the content differs (the token carries the digest of what was read)."""
    path = os.path.join(ws, "tick.txt")
    with open(path, "w") as handle:
        handle.write("alpha\nline two\n")
    fs = LocalFileSystem(cwd=ws)
    target = await fs.resolve("tick.txt")
    info = await fs.stat(target)
    assert info is not None
    read_token = str(info.version)
    assert read_token.count(":") == 5, "a just-changed file's token carries a content digest (A5)"
    st = os.stat(path)
    with open(path, "r+b") as handle:
        handle.write(b"omega")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    same_tick = versions.fields_of(os.stat(path)) + ":" + read_token.rsplit(":", 1)[1]

    request = EditRequest(old_string="two", new_string="2")
    with pytest.raises(FsError) as caught:
        await fs.edit_text(target, request, EditIntent(version=dsh_fs.Version(same_tick)))
    assert caught.value.code == FsErrorCode.STALE_VERSION
    assert caught.value.message == f'cannot edit "{path}": file changed since it was read'
    with pytest.raises(FsError) as caught:
        await fs.write_text(target, "clobber\n", ReplaceIfVersion(version=dsh_fs.Version(same_tick)))
    assert caught.value.code == FsErrorCode.STALE_VERSION
    with open(path) as handle:
        assert handle.read() == "omega\nline two\n"

    # control: the honest token of the current content passes the same guard
    current = await fs.stat(target)
    assert current is not None
    await fs.edit_text(target, request, EditIntent(version=current.version))
    with open(path) as handle:
        assert handle.read() == "omega\nline 2\n"
