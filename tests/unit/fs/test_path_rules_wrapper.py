"""``fs_rules.filesystem.RuledFileSystem`` on the memory provider, member by member: the
verdicts of ``resolve``/``lstat``, reads of a target that did not come from ``resolve``,
listings and walks (a denied directory pruned), every change (``check_*`` included), a
narrowed view keeping the deployment's bases, and what is passed on. The tools over it:
tests/integration/fs_rules/."""

from __future__ import annotations

import pytest

from dsh_fs.fs.errors import FsError
from dsh_fs.fs.path_rules import PathRules
from dsh_fs.fs.types import EditRequest, Target, TargetKey
from dsh_fs.fs_memory import MemoryFileSystem
from dsh_fs.fs_rules.filesystem import RuledFileSystem

pytestmark = pytest.mark.anyio

FILES = {"ok.txt": "ok\n", ".env": "K=1\n", "keys/a.txt": "a\n", "keys/sub/b.txt": "b\n", "ro/c.txt": "c\n",
         "d/e/f.txt": "f\n"}


def wrapper(**options: object) -> RuledFileSystem:
    return RuledFileSystem(MemoryFileSystem(dict(FILES)), rules=PathRules.of(deny=[".env", "keys/"],
                                                                             read_only=["ro/"]), **options)  # type: ignore[arg-type]


async def refused(awaitable: object, text: str) -> None:
    with pytest.raises(FsError) as info:
        await awaitable  # type: ignore[misc]
    assert str(info.value) == text
    assert info.value.code == "FS_PERMISSION_DENIED"


def forged(fs: MemoryFileSystem, rel: str) -> Target:
    """A target of ``rel`` made without ``resolve`` (as a listing hands them out)."""
    return Target(key=TargetKey(fs._key(rel)), display_path="/" + rel)


async def test_resolve_and_lstat() -> None:
    fs = wrapper()
    assert (await fs.resolve("ok.txt")).display_path == "/ok.txt"
    await refused(fs.resolve(".env"), 'cannot resolve "/.env": permission denied — the path rules deny access to it')
    await refused(fs.resolve("keys/sub/b.txt"), 'cannot resolve "/keys/sub/b.txt": permission denied — the path rules deny access to it')
    assert (await fs.resolve("ro/c.txt")).display_path == "/ro/c.txt"
    await refused(fs.lstat(".ENV"), 'cannot stat "/.ENV": permission denied — the path rules deny access to it')
    assert (await fs.lstat("ok.txt")) is not None
    assert (await fs.lstat("missing")) is None
    with pytest.raises(FsError, match="non-empty"):
        await fs.lstat("  ")  # inner's own answer when resolve fails


async def test_reads_of_a_target_judge_it_again() -> None:
    fs = wrapper()
    inner = fs.inner
    assert isinstance(inner, MemoryFileSystem)
    secret = forged(inner, ".env")
    message = 'cannot {} "/.env": permission denied — the path rules deny access to it'
    info = await inner.stat(await inner.resolve("ok.txt"))
    assert info is not None
    await refused(fs.stat(secret), message.format("stat"))
    await refused(fs.read_text(secret), message.format("read"))
    await refused(fs.is_current(secret, info.version), message.format("stat"))
    await refused(fs.read_text_at(secret, info.version), message.format("read"))
    await refused(fs.read_bytes(secret, max_bytes=10), message.format("read"))
    await refused(fs.read_window(secret, None, info=info), message.format("read"))  # type: ignore[arg-type]
    await refused(fs.real_place(secret), message.format("resolve"))
    with pytest.raises(FsError, match="deny access"):
        [c async for c in fs.stream_text(secret)]
    with pytest.raises(FsError, match="deny access"):
        [c async for c in fs.stream_bytes(secret)]
    ok = await fs.resolve("ok.txt")
    assert await fs.read_text(ok) == "ok\n"
    assert "".join([c async for c in fs.stream_text(ok)]) == "ok\n"
    assert b"".join([c async for c in fs.stream_bytes(ok)]) == b"ok\n"
    assert await fs.read_bytes(ok, max_bytes=10) == b"ok\n"
    assert await fs.is_current(ok, (await fs.stat(ok)).version)  # type: ignore[union-attr]
    assert await fs.read_text_at(ok, (await fs.stat(ok)).version) == "ok\n"  # type: ignore[union-attr]
    assert await fs.real_place(ok) == "/ok.txt"  # memory: a name is the file (the default's display path)


async def test_listings_leave_denied_entries_out() -> None:
    fs = wrapper()
    names = [e.name for e in await fs.list_dir(await fs.resolve("/"))]
    assert names == ["d", "ok.txt", "ro"]
    inner = fs.inner
    assert isinstance(inner, MemoryFileSystem)
    await refused(fs.list_dir(forged(inner, "keys")), 'cannot list "/keys": permission denied — the path rules deny access to it')
    walked = [e.rel async for e in fs.walk(await fs.resolve("/"))]
    assert sorted(walked) == ["d", "d/e", "d/e/f.txt", "ok.txt", "ro", "ro/c.txt"]
    await refused(fs.walk(forged(inner, "keys")).__anext__(), 'cannot list "/keys": permission denied — the path rules deny access to it')


async def test_a_denied_directory_is_pruned_from_a_walk() -> None:
    """Entries below a denied directory are never judged (the rules would deny them anyway;
    a rule whose parent is denied but the child re-included still leaves the child out)."""
    fs = RuledFileSystem(MemoryFileSystem(dict(FILES)), rules=PathRules.of(deny=["keys", "!keys/sub/b.txt"]))
    walked = sorted([e.rel async for e in fs.walk(await fs.resolve("/"))])
    assert not [rel for rel in walked if rel.startswith("keys")]
    assert "keysx" not in walked


async def test_every_change_is_judged() -> None:
    fs = wrapper()
    ok, ro = await fs.resolve("ok.txt"), await fs.resolve("ro/c.txt")
    inner = fs.inner
    assert isinstance(inner, MemoryFileSystem)
    secret = forged(inner, ".env")
    deny = 'cannot {} "/.env": permission denied — the path rules deny access to it'
    frozen = 'cannot {} "/ro/c.txt": permission denied — the path rules make it read-only'
    for target, text in ((secret, deny), (ro, frozen)):
        await refused(fs.write_text(target, "x"), text.format("write"))
        await refused(fs.edit_text(target, EditRequest(old_string="c", new_string="x")), text.format("edit"))
        await refused(fs.delete(target), text.format("delete"))
        await refused(fs.rename(target, ok), text.format("rename"))
        await refused(fs.rename(ok, target), text.format("rename"))
        await refused(fs.check_replaceable(target, "edit"), text.format("edit"))
        await refused(fs.check_creatable(target), text.format("write"))
        await refused(fs.check_renamable(target, ok), text.format("rename"))
        await refused(fs.check_renamable(ok, target), text.format("rename"))
    assert inner.files() == FILES if hasattr(inner, "files") else True
    await fs.check_replaceable(ok, "write")
    await fs.check_creatable(await fs.resolve("new.txt"))
    new = await fs.resolve("moved.txt")
    await fs.check_renamable(ok, new)
    await fs.write_text(ok, "changed\n")
    await fs.edit_text(ok, EditRequest(old_string="changed", new_string="edited"))
    await fs.rename(ok, new)
    await fs.delete(new)
    assert await fs.stat(new) is None


async def test_passed_on() -> None:
    memory = MemoryFileSystem(dict(FILES))
    fs = RuledFileSystem(memory, rules=PathRules.of(deny=["/d/e/f.txt"]))
    assert fs.rules.denies and fs.inner is memory
    assert fs.workspace_roots() == memory.workspace_roots()
    assert fs.root == memory.root and fs.cwd == memory.cwd
    assert fs.host_path(await fs.resolve("ok.txt")) is None
    assert fs.sandbox_mode is None
    assert fs.narrowed(["/d"]) is None  # memory cannot narrow
    from dsh_fs.fs.path_rules import RuleView

    view = await fs.path_rules()
    assert isinstance(view, RuleView) and view.rules is fs.rules
    assert "RuledFileSystem(" in repr(fs)
    await fs.aclose()


async def test_a_narrowed_view_keeps_the_deployments_bases(tmp_path: object) -> None:
    from dsh_fs.fs_local import LocalFileSystem

    root = str(tmp_path)
    (tmp_path / "d" / "e").mkdir(parents=True)  # type: ignore[operator]
    (tmp_path / "d" / "e" / "f.txt").write_text("f")  # type: ignore[operator]
    (tmp_path / "ok.txt").write_text("ok\n")  # type: ignore[operator]
    local = LocalFileSystem(cwd=root, root=root)
    fs = RuledFileSystem(local, rules=PathRules.of(deny=["/d/e/f.txt"]))
    assert fs.host_path(await fs.resolve("ok.txt")) == f"{root}/ok.txt"
    view = fs.narrowed([f"{root}/d"])
    assert isinstance(view, RuledFileSystem)
    # the patterns stay relative to the deployment's root, not the view's narrower one
    await refused(view.resolve(f"{root}/d/e/f.txt"),
                  f'cannot resolve "{root}/d/e/f.txt": permission denied — the path rules deny access to it')
    assert await view.path_rules() is await fs.path_rules()
    await view.aclose()
    assert await fs.read_text(await fs.resolve("ok.txt")) == "ok\n"  # the view never closes the provider
    await fs.aclose()


async def test_no_roots_judges_against_the_base(tmp_path: object) -> None:
    from dsh_fs.fs_local import LocalFileSystem

    root = str(tmp_path)
    (tmp_path / "top").write_text("x")  # type: ignore[operator]
    fs = RuledFileSystem(LocalFileSystem(cwd=root), rules=PathRules.of(deny=["/top"]), base=root)
    assert fs.workspace_roots() == ()
    await refused(fs.resolve("top"), f'cannot resolve "{root}/top": permission denied — the path rules deny access to it')
    other = RuledFileSystem(LocalFileSystem(cwd=root), rules=PathRules.of(deny=["/top"]), base="/elsewhere")
    assert (await other.resolve("top")).display_path == f"{root}/top"
    await fs.aclose()
    await other.aclose()


async def test_a_symlink_is_judged_by_its_real_path_against_the_bases_keys(tmp_path: object) -> None:
    """An anchored pattern catches a link to the file it names: the link's key (its real path)
    is judged relative to the root's key."""
    import os

    from dsh_fs.fs_local import LocalFileSystem

    root = os.path.realpath(str(tmp_path))
    with open(f"{root}/secret", "w") as f:
        f.write("s")
    os.symlink("secret", f"{root}/innocent")
    fs = RuledFileSystem(LocalFileSystem(cwd=root, root=root), rules=PathRules.of(deny=["/secret"]))
    await refused(fs.resolve("innocent"), f'cannot resolve "{root}/innocent": permission denied — the path rules deny access to it')
    view = await fs.path_rules()
    assert view.display.bases == (root,) and view.real.bases == (root,)
    await fs.aclose()


async def test_the_bases_keys_fall_back_to_the_bases() -> None:
    from dsh_fs.testing.recording import RecordingFileSystem

    recording = RecordingFileSystem(MemoryFileSystem(dict(FILES)))
    recording.failures["resolve"] = FsError("cannot resolve", "FS_NOT_FOUND")
    fs = RuledFileSystem(recording, rules=PathRules.of(deny=["x"]), base="/base")
    view = await fs.path_rules()
    assert view.display.bases == view.real.bases == recording.workspace_roots()


async def test_owned_and_plugged_in() -> None:
    from dsh_fs.core.context import Context
    from dsh_fs.testing.recording import RecordingFileSystem

    recording = RecordingFileSystem(MemoryFileSystem(dict(FILES)))
    fs = RuledFileSystem(recording, rules=PathRules.of(deny=["x"]))
    await fs.aclose()
    assert recording.calls[-1] == ("aclose",)
    ctx = Context()
    inner = RecordingFileSystem(MemoryFileSystem(dict(FILES)))
    ctx.plugin(RuledFileSystem, inner=inner, rules=PathRules.of(deny=[".env"]))
    assert isinstance(ctx.fs, RuledFileSystem) and ctx.fs.inner is inner
    await ctx.aclose()
    assert inner.calls[-1] == ("aclose",)


class Spy(MemoryFileSystem):
    """A memory provider that says what reached it: streams closed early, check calls, window
    reads, closes, and a narrowed view (itself)."""

    def __init__(self, files: dict[str, str]) -> None:
        super().__init__(files)
        self.seen: list[object] = []

    async def stream_text(self, target: Target, *, signal: object = None):  # type: ignore[override]
        try:
            yield "one"
            yield "two"
        finally:
            self.seen.append("text closed")

    async def stream_bytes(self, target: Target, *, signal: object = None):  # type: ignore[override]
        try:
            yield b"one"
            yield b"two"
        finally:
            self.seen.append("bytes closed")

    async def walk(self, target: Target, *, signal: object = None):  # type: ignore[override]
        try:
            async for entry in super().walk(target, signal=signal):  # type: ignore[arg-type]
                yield entry
        finally:
            self.seen.append("walk closed")

    async def read_window(self, target: Target, window: object, *, info: object, streamed: bool = False,
                          signal: object = None) -> object:  # type: ignore[override]
        self.seen.append(("window", streamed))
        return "the window"

    async def check_replaceable(self, target: Target, verb: str, *, size: int | None = None,
                                signal: object = None) -> None:  # type: ignore[override]
        self.seen.append(("check_replaceable", verb, size))

    async def check_creatable(self, target: Target, *, size: int | None = None, signal: object = None) -> None:  # type: ignore[override]
        self.seen.append(("check_creatable", size))

    async def check_renamable(self, source: Target, dest: Target, *, signal: object = None) -> None:  # type: ignore[override]
        self.seen.append(("check_renamable", source.display_path, dest.display_path))

    async def aclose(self) -> None:
        self.seen.append("closed")

    def narrowed(self, roots: object) -> "Spy":  # type: ignore[override]
        return self


async def test_what_reaches_the_provider() -> None:
    spy = Spy(dict(FILES))
    fs = RuledFileSystem(spy, rules=PathRules.of(deny=[".env"]))
    ok = await fs.resolve("ok.txt")
    text = fs.stream_text(ok)
    assert await text.__anext__() == "one"
    await text.aclose()  # type: ignore[attr-defined]
    data = fs.stream_bytes(ok)
    assert await data.__anext__() == b"one"
    await data.aclose()  # type: ignore[attr-defined]
    walked = fs.walk(await fs.resolve("/"))
    await walked.__anext__()
    await walked.aclose()  # type: ignore[attr-defined]
    assert spy.seen == ["text closed", "bytes closed", "walk closed"]
    info = await fs.stat(ok)
    assert await fs.read_window(ok, None, info=info) == "the window"  # type: ignore[arg-type]
    assert spy.seen[-1] == ("window", False)
    await fs.read_window(ok, None, info=info, streamed=True)  # type: ignore[arg-type]
    assert spy.seen[-1] == ("window", True)
    new = await fs.resolve("new.txt")
    await fs.check_replaceable(ok, "delete", size=3)
    await fs.check_creatable(new, size=4)
    await fs.check_renamable(ok, new)
    assert spy.seen[-3:] == [("check_replaceable", "delete", 3), ("check_creatable", 4),
                             ("check_renamable", "/ok.txt", "/new.txt")]
    outcome = await fs.edit_text(ok, EditRequest(old_string="ok", new_string="fine"))
    assert outcome.after == "fine\n"
    view = fs.narrowed(["/d"])
    assert isinstance(view, RuledFileSystem)
    await view.aclose()
    assert "closed" not in spy.seen  # a view never closes the provider
    await fs.aclose()
    assert spy.seen[-1] == "closed"


async def test_listing_places_leave_denied_entries_out() -> None:
    """``iter_dir`` (the bounded listings' batches) as ``list_dir``: denied entries left out, a
    denied directory refused."""
    fs = wrapper()
    names = [e.name async for batch in fs.iter_dir(await fs.resolve("/")) for e in batch]
    assert names == ["d", "ok.txt", "ro"]
    inner = fs.inner
    assert isinstance(inner, MemoryFileSystem)
    with pytest.raises(FsError, match='cannot list "/keys": permission denied — the path rules deny access to it'):
        [b async for b in fs.iter_dir(forged(inner, "keys"))]
