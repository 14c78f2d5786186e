"""History and rewind through the registry (``create_context(history=True)``), on the local and
in-memory providers: every tool and face records one step per call, and a rewind restores,
removes and moves back, refuses what someone else changed, and is itself a step."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.faces import FACE_TOOLS
from dsh_fs.fs_memory import MemoryFileSystem
from dsh_fs.history import HistoryFileSystem, MemoryHistoryStore, RewindError
from dsh_fs.history.recorder import KINDS
from dsh_fs.history.sqlite_store import SqliteHistoryStore
from dsh_fs.fs.filesystem import FileSystem

pytestmark = pytest.mark.anyio

FACES = [f for f in FACE_TOOLS if f != "notebook_edit"]


class Tree:
    """A workspace on one provider: the context, its files and an outside writer."""

    def __init__(self, kind: str, tmp_path: Path, **config: Any) -> None:
        self.kind = kind
        if kind == "memory":
            self.memory = MemoryFileSystem()
            self.memory.mkdir("/ws")
            self.root = "/ws"
            self.ctx = dsh_fs.create_context(provider=self.memory, history=config.pop("history", True), faces=FACES,
                                             **config)
        else:
            self.root = str(tmp_path / "ws")
            os.mkdir(self.root)
            self.ctx = dsh_fs.create_context(root=self.root, history=config.pop("history", True), faces=FACES, **config)
        self.session = Session(cwd=self.root)

    def path(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    def files(self) -> dict[str, bytes]:
        if self.kind == "memory":
            return {k[len("ws/"):]: v for k, v in self.memory.snapshot().items() if k.startswith("ws/")}
        out = {}
        for here, _dirs, names in os.walk(self.root):
            for name in names:
                full = os.path.join(here, name)
                out[os.path.relpath(full, self.root)] = Path(full).read_bytes()
        return out

    def outside(self, rel: str, data: bytes | None) -> None:
        """Someone else (a person, a formatter) changes a file, not through the tools."""
        if self.kind == "memory":
            if data is None:
                self.memory.remove(self.path(rel))
            else:
                self.memory.put(self.path(rel), data)
            return
        if data is None:
            os.unlink(self.path(rel))
        else:
            os.makedirs(os.path.dirname(self.path(rel)), exist_ok=True)
            Path(self.path(rel)).write_bytes(data)

    async def call(self, tool: str, args: dict[str, Any], session: Session | None = None) -> str:
        result = await self.ctx.tools.execute(tool, args, session=session or self.session)
        assert not result.is_error, result.text
        return result.text

    async def read(self, rel: str) -> None:
        await self.call("read", {"file_path": self.path(rel)})


@pytest.fixture(params=["memory", "local", "local+sqlite"])
async def tree(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Tree]:
    kind, _, store = request.param.partition("+")
    history: Any = SqliteHistoryStore(tmp_path / "state" / "history.sqlite3", private=False) if store else True
    t = Tree(kind, tmp_path, history=history)
    yield t
    await t.ctx.aclose()


def test_every_seam_member_is_classified_and_recorded_or_passed_on() -> None:
    public = {name for name in dir(FileSystem) if not name.startswith("_")}
    assert public <= set(KINDS), f"classify in history.recorder.KINDS: {sorted(public - set(KINDS))}"
    for name, kind in KINDS.items():
        if kind in ("mutate", "read") and name in vars(FileSystem) and callable(vars(FileSystem)[name]):
            assert name in vars(HistoryFileSystem), f"HistoryFileSystem must record or pass on {name}"


async def test_each_tool_call_is_one_step_with_its_files(tree: Tree) -> None:
    await tree.call("write", {"file_path": tree.path("a.txt"), "content": "one\n"})
    await tree.call("edit", {"file_path": tree.path("a.txt"), "old_string": "one", "new_string": "two"})
    await tree.call("write", {"file_path": tree.path("b.txt"), "content": "bee\n"})
    await tree.read("b.txt")
    patch = (f"*** Begin Patch\n*** Delete File: {tree.path('a.txt')}\n*** Update File: {tree.path('b.txt')}\n"
             f"*** Move to: {tree.path('c.txt')}\n@@\n-bee\n+sea\n*** Add File: {tree.path('d.txt')}\n+dee\n*** End Patch")
    await tree.call("apply_patch", {"input": patch})
    await tree.call("str_replace_based_edit_tool", {"command": "create", "path": tree.path("e.txt"), "file_text": "e\n"})
    await tree.call("str_replace_editor", {"command": "str_replace", "path": tree.path("e.txt"), "old_str": "e",
                                           "new_str": "ee"})
    await tree.call("str_replace_editor", {"command": "insert", "path": tree.path("e.txt"), "insert_line": 1,
                                           "new_str": "x"})
    steps = await tree.ctx.history(tree.session)
    assert [s.number for s in steps] == [1, 2, 3, 4, 5, 6, 7]
    assert [s.tool for s in steps] == ["write", "edit", "write", "apply_patch", "str_replace_based_edit_tool",
                                      "str_replace_editor", "str_replace_editor"]
    assert steps[3].paths == (tree.path("a.txt"), tree.path("b.txt"), tree.path("c.txt"), tree.path("d.txt"))
    assert all(not s.pending for s in steps) and steps.dropped == 0
    assert [c.before.kind for c in steps[0].changes] == ["absent"]
    assert [c.before.kind for c in steps[1].changes] == ["blob"]
    assert all(s.owner == tree.session.id for s in steps)
    assert {s.tool for s in await tree.ctx.history(Session())} == set()


async def test_rewind_restores_each_steps_tree(tree: Tree) -> None:
    trees = [tree.files()]
    await tree.call("write", {"file_path": tree.path("a.txt"), "content": "one\r\ntwo\r\n"})
    trees.append(tree.files())
    await tree.call("edit", {"file_path": tree.path("a.txt"), "old_string": "one", "new_string": "uno"})
    trees.append(tree.files())
    await tree.call("write", {"file_path": tree.path("sub/b.txt"), "content": "bee\n"})
    trees.append(tree.files())
    await tree.read("sub/b.txt")
    patch = (f"*** Begin Patch\n*** Delete File: {tree.path('a.txt')}\n*** Update File: {tree.path('sub/b.txt')}\n"
             f"*** Move to: {tree.path('c.txt')}\n@@\n-bee\n+sea\n*** End Patch")
    await tree.call("apply_patch", {"input": patch})
    trees.append(tree.files())
    for point in (3, 1, 4, 0, 2, 4):
        result = await tree.ctx.rewind(tree.session, to=point)
        assert not result.refused and result.error is None, result
        assert tree.files() == trees[point], point
        trees.append(trees[point])


async def test_move_back_and_redo(tree: Tree) -> None:
    await tree.call("write", {"file_path": tree.path("a.txt"), "content": "a\n"})
    await tree.read("a.txt")
    patch = (f"*** Begin Patch\n*** Update File: {tree.path('a.txt')}\n*** Move to: {tree.path('m/a.txt')}\n@@\n-a\n+a\n"
             "*** End Patch")
    await tree.call("apply_patch", {"input": patch})
    moved = tree.files()
    result = await tree.ctx.rewind(tree.session, last=1)
    assert result.steps == (2,) and result.to == 1
    assert [(f.path, f.action, f.done) for f in result.files if f.action != "unchanged"][:1] == [
        (tree.path("a.txt"), "move", True)] or [f.action for f in result.files] == ["remove", "restore"]
    assert tree.files() == {"a.txt": b"a\n"}
    assert result.step == 3
    redo = await tree.ctx.rewind(tree.session, to=result.step - 1)
    assert not redo.refused and redo.error is None
    assert tree.files() == moved
    steps = await tree.ctx.history(tree.session)
    assert [s.tool for s in steps] == ["write", "apply_patch", "rewind", "rewind"]


async def test_dry_run_shows_diffs_and_writes_nothing(tree: Tree) -> None:
    await tree.call("write", {"file_path": tree.path("a.txt"), "content": "one\ntwo\n"})
    cp = await tree.ctx.checkpoint(tree.session, "start")
    await tree.call("edit", {"file_path": tree.path("a.txt"), "old_string": "two", "new_string": "deux"})
    await tree.call("write", {"file_path": tree.path("n.txt"), "content": "new\n"})
    before = tree.files()
    result = await tree.ctx.rewind(tree.session, to="start", dry_run=True)
    assert result.dry_run and not result.refused and result.to == 1 and result.steps == (2, 3)
    assert tree.files() == before
    by_path = {f.path: f for f in result.files}
    a, n = by_path[tree.path("a.txt")], by_path[tree.path("n.txt")]
    assert a.action == "restore" and not a.done
    assert a.diff == (f"--- {tree.path('a.txt')}\n+++ {tree.path('a.txt')}\n@@ -1,2 +1,2 @@\n one\n-deux\n+two\n")
    assert n.action == "remove" and n.diff == f"--- {tree.path('n.txt')}\n+++ /dev/null\n@@ -1 +0,0 @@\n-new\n"
    assert (await tree.ctx.rewind(tree.session, to=cp, dry_run=True)).to == 1
    steps = await tree.ctx.history(tree.session)
    assert steps[0].checkpoints == ("start",) and steps.checkpoints[0].id == cp


async def test_never_clobbers_what_someone_else_changed(tree: Tree) -> None:
    await tree.call("write", {"file_path": tree.path("a.txt"), "content": "mine\n"})
    await tree.call("write", {"file_path": tree.path("b.txt"), "content": "mine too\n"})
    tree.outside("a.txt", b"theirs\n")
    result = await tree.ctx.rewind(tree.session, to=0)
    assert result.refused and not result.dry_run and result.step is None
    assert tree.files() == {"a.txt": b"theirs\n", "b.txt": b"mine too\n"}
    (refused,) = result.refusals
    assert (refused.path, refused.action, refused.reason) == (tree.path("a.txt"), "refused",
                                                              "changed since this owner's last change")
    skipped = await tree.ctx.rewind(tree.session, to=0, skip_changed=True)
    assert not skipped.refused and [f.action for f in skipped.refusals] == ["skipped"]
    assert tree.files() == {"a.txt": b"theirs\n"}
    forced = await tree.ctx.rewind(tree.session, to=0, force=[tree.path("a.txt")])
    assert not forced.refused and [f.forced for f in forced.files if f.path == tree.path("a.txt")] == [True]
    assert tree.files() == {}
    again = await tree.ctx.rewind(tree.session, to=forced.step - 1)  # the forced rewind kept "theirs"
    assert tree.files() == {"a.txt": b"theirs\n"} and not again.refused


async def test_refused_whole_when_a_deleted_file_was_made_again(tree: Tree) -> None:
    tree.outside("a.txt", b"a\n")
    await tree.read("a.txt")
    await tree.call("str_replace_editor", {"command": "str_replace", "path": tree.path("a.txt"), "old_str": "a",
                                           "new_str": "b"})
    await tree.call("write", {"file_path": tree.path("z.txt"), "content": "z\n"})
    tree.outside("a.txt", None)
    result = await tree.ctx.rewind(tree.session, to=0)
    assert result.refused and [(f.action, f.reason) for f in result.refusals] == [
        ("refused", "deleted since this owner's last change")]
    assert tree.files() == {"z.txt": b"z\n"}


async def test_files_over_the_cap_are_unrestorable_or_kept_as_their_replacement(tmp_path: Path) -> None:
    store = MemoryHistoryStore()
    tree = Tree("local", tmp_path, history=store)
    tree.ctx.fs._max_file_bytes = 16
    tree.outside("big.txt", b"0123456789 abcdef 0123456789\n")
    tree.outside("big2.txt", b"0123456789 abcdef 0123456789\n")
    await tree.read("big.txt")
    await tree.read("big2.txt")
    await tree.call("edit", {"file_path": tree.path("big.txt"), "old_string": "abcdef", "new_string": "ABC"})
    await tree.call("write", {"file_path": tree.path("big2.txt"), "content": "small\n"})
    steps = await tree.ctx.history(tree.session)
    assert steps[0].changes[0].before.kind == "replacement"
    assert steps[1].changes[0].before.kind == "unrestorable"
    assert steps[1].changes[0].before.reason == "29 bytes, over the 16-byte cap"
    result = await tree.ctx.rewind(tree.session, to=0)
    assert result.refused and [f.reason for f in result.refusals] == ["not restorable: 29 bytes, over the 16-byte cap"]
    result = await tree.ctx.rewind(tree.session, to=0, skip_changed=True)
    assert not result.refused and result.error is None
    assert tree.files()["big.txt"] == b"0123456789 abcdef 0123456789\n"
    await tree.ctx.aclose()


async def test_the_byte_cap_drops_the_oldest_steps_and_says_so(tmp_path: Path) -> None:
    tree = Tree("memory", tmp_path, history=MemoryHistoryStore(max_owner_bytes=25))
    for i in range(5):
        tree.outside(f"f{i}.txt", b"x" * 10 + bytes([65 + i]))
        await tree.read(f"f{i}.txt")
        await tree.call("write", {"file_path": tree.path(f"f{i}.txt"), "content": "new\n"})
    steps = await tree.ctx.history(tree.session)
    assert steps.dropped == 3 and [s.number for s in steps] == [4, 5] and steps.kept_bytes == 22
    with pytest.raises(RewindError, match="the steps up to 3 were dropped"):
        await tree.ctx.rewind(tree.session, to=2)
    result = await tree.ctx.rewind(tree.session, last=5)
    assert result.to == 3 and result.steps == (4, 5)
    assert tree.files()["f3.txt"] == b"x" * 10 + b"D" and tree.files()["f2.txt"] == b"new\n"
    await tree.ctx.aclose()


async def test_sessions_have_separate_histories(tree: Tree) -> None:
    other = Session(cwd=tree.root)
    await tree.call("write", {"file_path": tree.path("a.txt"), "content": "a\n"})
    await tree.call("write", {"file_path": tree.path("b.txt"), "content": "b\n"}, session=other)
    assert [s.paths for s in await tree.ctx.history(tree.session)] == [(tree.path("a.txt"),)]
    assert [s.paths for s in await tree.ctx.history(other.id)] == [(tree.path("b.txt"),)]
    await tree.ctx.rewind(other, to=0)
    assert tree.files() == {"a.txt": b"a\n"}


async def test_a_failed_call_records_nothing(tree: Tree) -> None:
    tree.outside("a.txt", b"a\n")
    result = await tree.ctx.tools.execute("write", {"file_path": tree.path("a.txt"), "content": "x"}, session=tree.session)
    assert result.is_error
    result = await tree.ctx.tools.execute("edit", {"file_path": tree.path("a.txt"), "old_string": "zz", "new_string": "y"},
                                          session=tree.session)
    assert result.is_error
    assert list(await tree.ctx.history(tree.session)) == []


async def test_history_under_a_sandbox_and_path_rules(tmp_path: Path) -> None:
    tree = Tree("local", tmp_path, sandbox="workspace-write", read_only_paths=["locked.txt"])
    await tree.call("write", {"file_path": tree.path("a.txt"), "content": "a\n"})
    refused = await tree.ctx.tools.execute("write", {"file_path": tree.path("locked.txt"), "content": "x"},
                                           session=tree.session)
    assert refused.is_error
    assert [s.paths for s in await tree.ctx.history(tree.session)] == [(tree.path("a.txt"),)]
    await tree.ctx.rewind(tree.session, to=0)
    assert tree.files() == {}
    await tree.ctx.aclose()


async def test_without_history_no_service(tmp_path: Path) -> None:
    ctx = dsh_fs.create_context(root=str(tmp_path))
    assert not ctx.has("history") and not isinstance(ctx.fs, HistoryFileSystem)
    await ctx.aclose()
    with pytest.raises(ValueError, match="history= is True, False or a history.HistoryStore"):
        dsh_fs.create_context(root=str(tmp_path), history="yes")


async def test_api_argument_errors(tree: Tree) -> None:
    with pytest.raises(ValueError, match="a checkpoint needs a name"):
        await tree.ctx.checkpoint(tree.session, "")
    with pytest.raises(TypeError, match="takes a collection of paths"):
        await tree.ctx.rewind(tree.session, to=0, force="a.txt")
    with pytest.raises(TypeError, match="a Session or an owner name"):
        await tree.ctx.history(3)
    with pytest.raises(RewindError, match="no step 1"):
        await tree.ctx.rewind(tree.session, to=1)
