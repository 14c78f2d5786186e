"""``HistoryFileSystem`` directly: what it records for each mutation and each kind of file (a copy,
an absence, a big file's replacement or its refusal, a provider without raw reads), a store that
cannot record, the members it passes on, and the per-call views of a sandbox and of MCP roots."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from dsh_fs.fs.errors import FsError
from dsh_fs.fs.types import EditRequest
from dsh_fs.fs.witness import witness_commit
from dsh_fs.fs_local import LocalFileSystem
from dsh_fs.fs_memory import MemoryFileSystem
from dsh_fs.fs_sandbox.filesystem import SandboxedFileSystem
from dsh_fs.history import HistoryFileSystem, MemoryHistoryStore
from dsh_fs.history.model import digest_of

pytestmark = pytest.mark.anyio


def recorder(files: dict[str, str], **options: object) -> tuple[HistoryFileSystem, MemoryFileSystem]:
    memory = MemoryFileSystem({"ws/" + k: v for k, v in files.items()})
    return HistoryFileSystem(memory, MemoryHistoryStore(), **options), memory  # type: ignore[arg-type]


async def changes(fs: HistoryFileSystem, owner: str = "o") -> list[tuple[str, str, str | None, str | None]]:
    history = await fs.store.history(owner)
    return [(c.op, c.before.kind, c.before.reason, c.dest_path) for s in history.steps for c in s.changes]


def test_options() -> None:
    with pytest.raises(ValueError, match="max_file_bytes must not be negative"):
        HistoryFileSystem(MemoryFileSystem(), MemoryHistoryStore(), max_file_bytes=-1)
    fs = HistoryFileSystem(MemoryFileSystem(), MemoryHistoryStore())
    assert fs.max_file_bytes == 16 * 1024 * 1024 and fs.recording_for is None and fs.name == "fs-history"
    assert fs.for_tool_call("write", "o").recording_for == "o"
    assert repr(fs).startswith("HistoryFileSystem(")


async def test_each_mutation_and_its_before_state() -> None:
    fs, memory = recorder({"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
    view = fs.for_tool_call("apply_patch", "o", "call-1")
    await view.write_text(await fs.resolve("/ws/new.txt"), "n\n")
    await view.edit_text(await fs.resolve("/ws/a.txt"), EditRequest(old_string="a", new_string="A"))
    await view.delete(await fs.resolve("/ws/b.txt"))
    await view.rename(await fs.resolve("/ws/c.txt"), await fs.resolve("/ws/d/c.txt"))
    await view.write_bytes(await fs.resolve("/ws/raw"), b"\xff")
    assert await changes(fs) == [("write", "absent", None, None), ("edit", "blob", None, None),
                                 ("delete", "blob", None, None), ("rename", "blob", None, "/ws/d/c.txt"),
                                 ("write", "absent", None, None)]
    (step,) = (await fs.store.history("o")).steps
    assert (step.tool, step.call_id) == ("apply_patch", "call-1")
    assert step.changes[-1].after_digest == digest_of(b"\xff") and step.changes[0].after_digest is None
    assert all(c.after_version is not None for c in step.changes)
    assert await fs.store.blob(digest_of(b"b\n")) == b"b\n"
    await fs.write_text(await fs.resolve("/ws/outside.txt"), "o")  # the wrapper itself records nothing
    assert len((await fs.store.history("o")).steps) == 1 and memory.get("/ws/outside.txt") == b"o"


async def test_over_the_cap() -> None:
    fs, _memory = recorder({"big.txt": "0123456789 big file\n"}, max_file_bytes=8)
    view = fs.for_tool_call("edit", "o")
    target = await fs.resolve("/ws/big.txt")
    await view.edit_text(target, EditRequest(old_string="big", new_string="large"))
    await view.edit_text(target, EditRequest(old_string="0", new_string="zero", replace_all=True))
    await view.write_text(target, "now small\n")
    history = await fs.store.history("o")
    befores = [c.before for s in history.steps for c in s.changes]
    assert (befores[0].kind, befores[0].old, befores[0].new) == ("replacement", "big", "large")
    assert (befores[1].kind, befores[1].reason) == ("unrestorable", "22 bytes, over the 8-byte cap")
    assert (befores[2].kind, befores[2].reason) == ("unrestorable", "25 bytes, over the 8-byte cap")


async def test_a_provider_without_raw_reads_or_with_a_failing_read() -> None:
    fs, memory = recorder({"a.txt": "a\n"})

    async def cannot(*args: object, **kwargs: object) -> bytes:
        raise NotImplementedError

    memory.read_bytes = cannot  # type: ignore[method-assign]
    await fs.for_tool_call("write", "o").write_text(await fs.resolve("/ws/a.txt"), "b\n")
    assert await changes(fs) == [("write", "unrestorable", "the provider cannot read raw bytes", None)]

    async def failing(*args: object, **kwargs: object) -> bytes:
        raise FsError('cannot read "/ws/a.txt": permission denied', "FS_PERMISSION_DENIED")

    memory.read_bytes = failing  # type: ignore[method-assign]
    await fs.for_tool_call("write", "p").write_text(await fs.resolve("/ws/a.txt"), "c\n")
    assert await changes(fs, "p") == [("write", "unrestorable", 'cannot read "/ws/a.txt": permission denied', None)]

    async def grew(*args: object, **kwargs: object) -> bytes:
        raise FsError('cannot read "/ws/a.txt": content exceeds the 9-byte limit', "FS_IO_ERROR")

    memory.read_bytes = grew  # type: ignore[method-assign]
    await fs.for_tool_call("edit", "q").edit_text(await fs.resolve("/ws/a.txt"), EditRequest(old_string="c", new_string="d"))
    assert await changes(fs, "q") == [("edit", "replacement", None, None)]


async def test_a_directory_is_passed_on_unrecorded() -> None:
    fs, _memory = recorder({"dir/inner": "i"})
    with pytest.raises(FsError) as caught:
        await fs.for_tool_call("write", "o").write_text(await fs.resolve("/ws/dir"), "x")
    assert caught.value.code == "FS_NOT_REGULAR_FILE"
    with pytest.raises(FsError):
        await fs.for_tool_call("rename", "o").rename(await fs.resolve("/ws/dir"), await fs.resolve("/ws/other"))
    assert await changes(fs) == []


async def test_a_store_that_cannot_record_refuses_the_mutation() -> None:
    fs, memory = recorder({"a.txt": "a\n"})

    async def broken(*args: object) -> int:
        raise sqlite3.OperationalError("disk I/O error")

    fs.store.begin = broken  # type: ignore[method-assign]
    for op, run in (("write", lambda v, t: v.write_text(t, "b")), ("delete", lambda v, t: v.delete(t))):
        with pytest.raises(FsError) as caught:
            await run(fs.for_tool_call(op, "o"), await fs.resolve("/ws/a.txt"))
        assert caught.value.code == "FS_IO_ERROR"
        assert str(caught.value) == (f'cannot {op} "/ws/a.txt": the history could not record the change '
                                     "(disk I/O error)")
    with pytest.raises(FsError, match='^cannot rename "/ws/a.txt": the history could not record'):
        await fs.for_tool_call("r", "o").rename(await fs.resolve("/ws/a.txt"), await fs.resolve("/ws/b.txt"))
    assert memory.get("/ws/a.txt") == b"a\n" and memory.get("/ws/b.txt") is None


async def test_the_mode_of_a_local_file_is_kept(tmp_path: Path) -> None:
    (tmp_path / "x.sh").write_text("#!/bin/sh\n")
    os.chmod(tmp_path / "x.sh", 0o750)
    fs = HistoryFileSystem(LocalFileSystem(cwd=str(tmp_path), root=str(tmp_path)), MemoryHistoryStore())
    await fs.for_tool_call("write", "o").write_text(await fs.resolve("x.sh"), "#!/bin/sh\necho\n")
    (step,) = (await fs.store.history("o")).steps
    assert step.changes[0].before.mode == 0o750
    await fs.aclose()


async def test_members_passed_on() -> None:
    inner = MemoryFileSystem({"ws/a.txt": "a"})
    fs = HistoryFileSystem(inner, MemoryHistoryStore())
    assert fs.inner is inner and fs.sandbox_mode is None and fs.approval is None
    assert fs.root == inner.root and fs.cwd == inner.cwd
    assert fs.workspace_roots() == inner.workspace_roots() and fs.text_encodings == ()
    assert await fs.path_rules() is None and fs.search_host() is None
    target = await fs.resolve("/ws/a.txt")
    info = await fs.stat(target)
    assert info is not None and await fs.is_current(target, info.version)
    assert await fs.read_bytes(target, max_bytes=10, info=info) == b"a"
    assert await fs.read_text_at(target, info.version) == "a"
    await fs.check_replaceable(target, "write")
    await fs.check_creatable(await fs.resolve("/ws/new"))
    await fs.check_renamable(target, await fs.resolve("/ws/new"))


async def test_a_sandbox_inside_and_its_per_call_views(tmp_path: Path) -> None:
    sandbox = SandboxedFileSystem(LocalFileSystem(cwd=str(tmp_path), root=str(tmp_path)), mode="workspace-write")
    fs = HistoryFileSystem(sandbox, MemoryHistoryStore())
    assert fs.sandbox_mode == "workspace-write" and fs.approval is None
    assert await fs.canonical_base(str(tmp_path)) == os.path.realpath(tmp_path)
    view = fs.for_call("workspace-write", cwd=str(tmp_path)).for_tool_call("write", "o")
    assert isinstance(view, HistoryFileSystem) and view.inner.sandbox_mode == "workspace-write"
    await view.write_text(await view.resolve("a.txt"), "a")
    assert len((await fs.store.history("o")).steps) == 1
    narrowed = fs.narrowed([str(tmp_path)])
    assert isinstance(narrowed, HistoryFileSystem) and narrowed.store is fs.store
    assert HistoryFileSystem(MemoryFileSystem(), MemoryHistoryStore()).narrowed(["/x"]) is None  # cannot narrow
    await fs.aclose()


async def test_the_service_needs_a_recording_provider() -> None:
    import dsh_fs
    from dsh_fs.history.api import HistoryService, StepList

    steps = StepList([])
    assert (steps.dropped, steps.kept_bytes, steps.checkpoints) == (0, 0, ()) and steps == []
    ctx = dsh_fs.create_context(provider=MemoryFileSystem(), history=False)
    with pytest.raises(RuntimeError, match=r"the context's fs records no history \(create_context\(history=True\)\)"):
        await HistoryService(ctx).history("o")
    await ctx.aclose()


async def test_at_the_cap_a_copy_and_an_unknown_size_read_up_to_it() -> None:
    from dsh_fs.fs.errors import content_over_limit
    from dsh_fs.fs.types import Info

    fs, memory = recorder({"a.txt": "12345678", "b.txt": "123456789"}, max_file_bytes=8)
    await fs.for_tool_call("write", "o").write_text(await fs.resolve("/ws/a.txt"), "x")
    assert await changes(fs) == [("write", "blob", None, None)]
    real_stat = memory.stat

    async def sizeless(target, *, signal=None):  # type: ignore[no-untyped-def]
        info = await real_stat(target, signal=signal)
        return None if info is None else Info(version=info.version, type=info.type)

    async def too_long(target, *, max_bytes, size=None, info=None, signal=None):  # type: ignore[no-untyped-def]
        assert size is None
        raise content_over_limit(target.display_path, max_bytes)

    memory.stat = sizeless  # type: ignore[method-assign]
    memory.read_bytes = too_long  # type: ignore[method-assign]
    await fs.for_tool_call("write", "p").write_text(await fs.resolve("/ws/b.txt"), "y")
    assert await changes(fs, "p") == [("write", "unrestorable", "more than 8 bytes, over the 8-byte cap", None)]


async def test_closing(tmp_path: Path) -> None:
    import sqlite3 as sq

    import dsh_fs
    from dsh_fs.history.sqlite_store import SqliteHistoryStore

    closed: list[str] = []
    inner = MemoryFileSystem({"ws/a": "a"})

    async def close() -> None:
        closed.append("inner")

    inner.aclose = close  # type: ignore[method-assign]
    store = SqliteHistoryStore(tmp_path / "h.sqlite3", private=False)
    fs = HistoryFileSystem(inner, store)
    view = fs.for_tool_call("write", "o")
    await view.write_text(await fs.resolve("/ws/a"), "b")
    await view.aclose()  # a view owns nothing
    assert closed == [] and len((await store.history("o")).steps) == 1
    await fs.aclose()
    assert closed == ["inner"]
    with pytest.raises(sq.ProgrammingError):
        await store.history("o")
    ctx = dsh_fs.Context()
    other = MemoryFileSystem()
    other.aclose = close  # type: ignore[method-assign]
    ctx.plugin(HistoryFileSystem, inner=other, store=MemoryHistoryStore())
    assert isinstance(ctx.fs, HistoryFileSystem)
    await ctx.aclose()
    assert closed == ["inner", "inner"]


async def test_the_sandbox_approval_is_passed_on(tmp_path: Path) -> None:
    async def approve(request: object) -> str:
        return "rejected"

    sandbox = SandboxedFileSystem(LocalFileSystem(cwd=str(tmp_path), root=str(tmp_path)), mode="read-only", approval=approve)
    fs = HistoryFileSystem(sandbox, MemoryHistoryStore())
    assert fs.approval is approve
    await fs.aclose()


async def test_a_rewind_of_a_patch_move_is_recorded_by_display_paths() -> None:
    import dsh_fs

    memory = MemoryFileSystem({"ws/a.txt": "a\n"})
    ctx = dsh_fs.create_context(provider=memory, history=True, policy=False, faces=["apply_patch"])
    session = dsh_fs.Session(cwd="/ws")
    patch = "*** Begin Patch\n*** Update File: /ws/a.txt\n*** Move to: /ws/b.txt\n@@\n-a\n+a\n*** End Patch"
    assert not (await ctx.tools.execute("apply_patch", {"input": patch}, session=session)).is_error
    result = await ctx.rewind(session, to=0)
    # an unchanged move is one rename: moved back
    assert [(f.path, f.action, f.moved_from) for f in result.files] == [("/ws/a.txt", "move", "/ws/b.txt")]
    steps = await ctx.history(session)
    assert steps[-1].tool == "rewind" and set(steps[-1].paths) == {"/ws/a.txt", "/ws/b.txt"}
    assert memory.snapshot() == {"ws/a.txt": b"a\n"}
    await ctx.aclose()


async def test_reads_checks_and_an_unrecorded_move_are_passed_on() -> None:
    fs, memory = recorder({"a.txt": "a", "d/x": "x"})
    seen: list[str] = []
    for name in ("check_replaceable", "check_creatable", "check_renamable"):
        async def spy(*args: object, _name: str = name, **kwargs: object) -> None:
            seen.append(_name)
        setattr(memory, name, spy)
    a = await fs.resolve("/ws/a.txt")
    await fs.check_replaceable(a, "write")
    await fs.check_creatable(a)
    await fs.check_renamable(a, a)
    assert seen == ["check_replaceable", "check_creatable", "check_renamable"]
    assert b"".join([chunk async for chunk in fs.stream_bytes(a)]) == b"a"
    assert [e.name for e in await fs.list_dir(await fs.resolve("/ws"))] == ["a.txt", "d"]
    assert [e.name for batch in [b async for b in fs.iter_dir(await fs.resolve("/ws"))] for e in batch] == ["a.txt", "d"]
    moved = await fs.rename(a, await fs.resolve("/ws/b.txt"))
    assert moved.version and memory.get("/ws/b.txt") == b"a"
    assert await fs.store.history("o") == (await fs.store.history("nobody"))


class Witnessing(MemoryFileSystem):
    """A memory provider that witnesses its writes and edits (``fs.witness``) as the S3 one does;
    ``stale_first`` makes the next edit witness an older content first (a retry on fresher bytes)."""

    stale_first = False

    @property
    def witnessed_mutations(self) -> frozenset[str]:
        return frozenset({"write_text", "edit_text"})

    async def write_text(self, target, content, expected=None, *, signal=None):  # type: ignore[no-untyped-def]
        before = self.get(target.display_path)
        info = await self.stat(target)
        await witness_commit(before, None if info is None else str(info.version), content.encode())
        return await super().write_text(target, content, expected, signal=signal)

    async def edit_text(self, target, edit, expected=None, *, signal=None):  # type: ignore[no-untyped-def]
        before = self.get(target.display_path) or b""
        if self.stale_first:
            self.stale_first = False
            await witness_commit(b"older\n", "v0", b"older, edited\n")
        info = await self.stat(target)
        after = before.replace(edit.old_string.encode(), edit.new_string.encode(), 1)
        await witness_commit(before, None if info is None else str(info.version), after)
        return await super().edit_text(target, edit, expected, signal=signal)


async def test_a_witnessing_provider_is_not_read_again_and_its_bytes_are_recorded() -> None:
    memory = Witnessing({"ws/a.txt": "a\n"})
    store = MemoryHistoryStore()
    fs = HistoryFileSystem(memory, store)
    reads: list[str] = []
    real = memory.read_bytes

    async def counted(*args, **kw):  # type: ignore[no-untyped-def]
        reads.append("read_bytes")
        return await real(*args, **kw)

    memory.read_bytes = counted  # type: ignore[method-assign]
    view = fs.for_tool_call("edit", "o")
    await view.edit_text(await fs.resolve("/ws/a.txt"), EditRequest(old_string="a", new_string="A"))
    await view.write_text(await fs.resolve("/ws/new.txt"), "n\n")
    assert reads == []  # the recorder took the provider's own bytes
    (step,) = (await store.history("o")).steps
    edit, write = step.changes
    assert (edit.before.kind, edit.before.digest, edit.after_digest) == ("blob", digest_of(b"a\n"), digest_of(b"A\n"))
    assert (write.before.kind, write.after_digest, write.before_version) == ("absent", digest_of(b"n\n"), None)
    assert edit.after_version is not None and edit.before_version is not None
    assert await store.blob(digest_of(b"a\n")) == b"a\n"
    assert fs.witnessed_mutations == frozenset()  # the recorder takes the witness itself


async def test_a_witnessed_retry_replaces_the_change_begun_for_the_earlier_attempt() -> None:
    memory = Witnessing({"ws/a.txt": "a\n"})
    fs = HistoryFileSystem(memory, MemoryHistoryStore())
    memory.stale_first = True
    await fs.for_tool_call("edit", "o").edit_text(await fs.resolve("/ws/a.txt"), EditRequest(old_string="a",
                                                                                             new_string="A"))
    (step,) = (await fs.store.history("o")).steps
    assert [c.before.digest for c in step.changes] == [digest_of(b"a\n")]
    assert await fs.store.blob(digest_of(b"older\n")) is None  # the abandoned attempt's copy is gone


@pytest.mark.parametrize(("size", "edit", "kind"), [
    (2, EditRequest(old_string="a", new_string="A"), "blob"),
    (1, EditRequest(old_string="a", new_string="A"), "replacement"),
    (1, EditRequest(old_string="a", new_string="A", replace_all=True), "unrestorable"),
])
async def test_witnessed_bytes_over_the_cap(size: int, edit: EditRequest, kind: str) -> None:
    memory = Witnessing({"ws/a.txt": "a\n"})
    fs = HistoryFileSystem(memory, MemoryHistoryStore(), max_file_bytes=size)
    await fs.for_tool_call("edit", "o").edit_text(await fs.resolve("/ws/a.txt"), edit)
    (step,) = (await fs.store.history("o")).steps
    before = step.changes[0].before
    assert before.kind == kind
    if kind == "unrestorable":
        assert before.reason == "2 bytes, over the 1-byte cap"
    if kind == "replacement":
        assert (before.old, before.new) == ("a", "A")


async def test_a_witnessed_mutation_the_store_cannot_record_is_not_made() -> None:
    memory = Witnessing({"ws/a.txt": "a\n"})
    fs = HistoryFileSystem(memory, MemoryHistoryStore())

    async def broken(*args: object) -> int:
        raise RuntimeError("bucket unreachable")

    fs.store.begin = broken  # type: ignore[method-assign]
    with pytest.raises(FsError) as caught:
        await fs.for_tool_call("edit", "o").edit_text(await fs.resolve("/ws/a.txt"), EditRequest(old_string="a",
                                                                                                 new_string="A"))
    assert caught.value.code == "FS_IO_ERROR"
    assert str(caught.value) == 'cannot write "/ws/a.txt": the history could not record the change (bucket unreachable)'
    assert memory.get("/ws/a.txt") == b"a\n"


async def test_a_witnessed_mutation_refused_by_the_provider_leaves_no_change() -> None:
    memory = Witnessing({"ws/a.txt": "a\n"})
    fs = HistoryFileSystem(memory, MemoryHistoryStore())
    with pytest.raises(FsError) as caught:  # witnessed, then refused: not found
        await fs.for_tool_call("edit", "o").edit_text(await fs.resolve("/ws/a.txt"), EditRequest(old_string="zz",
                                                                                                 new_string="A"))
    assert caught.value.code == "FS_EDIT_NOT_FOUND"
    assert (await fs.store.history("o")).steps == ()


class Answering(MemoryFileSystem):
    """Every read member answers what it was asked, so a wrapper that drops or bends a call shows."""

    async def lstat(self, path, *, cwd=None, signal=None):  # type: ignore[no-untyped-def]
        return ("lstat", path, cwd)

    def stream_text(self, target, *, signal=None):  # type: ignore[no-untyped-def]
        return ("stream_text", target.display_path)

    async def read_window(self, target, window, *, info, streamed=False, signal=None):  # type: ignore[no-untyped-def]
        return ("read_window", window, info, streamed)

    def host_path(self, target):  # type: ignore[no-untyped-def]
        return ("host_path", target.display_path)

    async def real_place(self, target, *, signal=None):  # type: ignore[no-untyped-def]
        return ("real_place", target.display_path)

    async def path_rules(self, *, signal=None):  # type: ignore[no-untyped-def]
        return ("path_rules",)

    def search_host(self):  # type: ignore[no-untyped-def]
        return ("search_host",)

    def walk(self, target, *, signal=None):  # type: ignore[no-untyped-def]
        return ("walk", target.display_path)


async def test_every_read_member_answers_what_the_inner_provider_answers() -> None:
    fs = HistoryFileSystem(Answering({"ws/a.txt": "a"}), MemoryHistoryStore(), max_file_bytes=0)
    target = await fs.resolve("/ws/a.txt")
    assert fs.max_file_bytes == 0  # a cap of 0 is allowed: nothing is copied
    assert await fs.lstat("a.txt", cwd="/ws") == ("lstat", "a.txt", "/ws")
    assert fs.stream_text(target) == ("stream_text", "/ws/a.txt")  # type: ignore[comparison-overlap]
    assert await fs.read_window(target, "W", info="I") == ("read_window", "W", "I", False)  # type: ignore[arg-type]
    assert await fs.read_window(target, "W", info="I", streamed=True) == (  # type: ignore[arg-type]
        "read_window", "W", "I", True)
    assert fs.host_path(target) == ("host_path", "/ws/a.txt")  # type: ignore[comparison-overlap]
    assert await fs.real_place(target) == ("real_place", "/ws/a.txt")  # type: ignore[comparison-overlap]
    assert await fs.path_rules() == ("path_rules",)  # type: ignore[comparison-overlap]
    assert fs.search_host() == ("search_host",)  # type: ignore[comparison-overlap]
    assert fs.walk(target) == ("walk", "/ws/a.txt")  # type: ignore[comparison-overlap]
