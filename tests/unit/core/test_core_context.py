"""The kernel ``Context`` (plugins, services, events) and the provider seam contract.

Covers REFERENCE-SPEC §7.1 (``packages/fs/fs/tests/service.spec.ts``): every seam test runs
against the in-memory fake (``MemoryFs``, as in the reference) and, where it says something
about providers in general, against ``LocalFileSystem`` too. Plus the kernel mechanics the
seam relies on (§1.3 single provider, §1.4 emit/waterfall semantics, plugin scopes).

Not covered here: the local provider's own behaviour (tests/integration/fs_local/test_local_provider.py),
the policy (test_policy.py) and the tools (test_tools.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest

import dsh_fs
from dsh_fs import Context, HarnessError, Profile
from dsh_fs.core.context import ScopeState
from dsh_fs.fs import FileSystem, FsError, FsErrorCode, TargetKey, Version
from dsh_fs.fs_local import LocalFileSystem

pytestmark = pytest.mark.anyio


# ------------------------------------------------------------------------------------------
# helpers: one deployment per provider kind, populated with the same tree
# ------------------------------------------------------------------------------------------

TREE = {"a.txt": "hello\nworld\n", "sub/b.md": "b", "sub/c.txt": "", "dir/inner.txt": "x"}


def _provider_ctx(kind: str, ws: str, memory_fs: type) -> tuple[Context, str]:
    """A context whose ``fs`` is ``kind`` and holds ``TREE`` under the returned base path."""
    ctx = Context()
    if kind == "memory":
        base = "/abs"
        ctx.plugin(memory_fs, cwd=base, files={f"{base}/{k}": v for k, v in TREE.items()},
                   dirs=(f"{base}/sub", f"{base}/dir"))
        return ctx, base
    for rel, text in TREE.items():
        path = os.path.join(ws, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    ctx.plugin(LocalFileSystem, cwd=ws)
    return ctx, ws


@pytest.fixture(params=["memory", "local"])
def provider(request: pytest.FixtureRequest, ws: str, memory_fs: type) -> tuple[Context, str]:
    return _provider_ctx(request.param, ws, memory_fs)


# ------------------------------------------------------------------------------------------
# §7.1 FileSystem provider seam
# ------------------------------------------------------------------------------------------

async def test_registers_as_ctx_fs_and_serves_the_primitives(memory_fs: type) -> None:
    """registers as ctx.fs and serves the primitives"""
    ctx = Context()
    assert not ctx.has("fs")
    scope = ctx.plugin(memory_fs, files={"/abs/a.txt": "hi\n"})
    assert scope.state is ScopeState.ACTIVE
    assert ctx.has("fs") and isinstance(ctx.fs, FileSystem)
    target = await ctx.fs.resolve("a.txt")
    assert target.display_path == "/abs/a.txt" and target == await ctx.fs.resolve("/abs/./a.txt")
    info = await ctx.fs.stat(target)
    assert info is not None and (info.type, info.size) == ("file", 3)
    assert await ctx.fs.read_text(target) == "hi\n"


async def test_throws_when_a_second_implementation_is_loaded(memory_fs: type, ws: str) -> None:
    """throws when a second implementation is loaded (duplicate service)"""
    ctx = Context()
    ctx.plugin(memory_fs)
    first = ctx.fs
    with pytest.raises(HarnessError) as caught:
        ctx.plugin(LocalFileSystem, cwd=ws)
    assert caught.value.code == "DUPLICATE_SERVICE"
    assert str(caught.value) == 'service "fs" is already provided'
    assert ctx.fs is first
    assert [s.name for s in ctx.scopes] == ["fs-memory-fake"]


async def test_removes_the_service_when_the_providing_fiber_is_disposed(memory_fs: type, ws: str) -> None:
    """removes the service when the providing fiber is disposed"""
    ctx = Context()
    scope = ctx.plugin(memory_fs)
    scope.dispose()
    assert scope.state is ScopeState.DISPOSED
    assert not ctx.has("fs")
    with pytest.raises(AttributeError, match='no service "fs" is provided'):
        ctx.fs  # noqa: B018
    scope.dispose()  # idempotent
    ctx.plugin(LocalFileSystem, cwd=ws)  # the slot is free again
    assert isinstance(ctx.fs, LocalFileSystem)


async def test_stream_text_yields_the_same_text_read_text_returns(provider: tuple[Context, str]) -> None:
    """streamText yields the same text readText returns"""
    ctx, _ = provider
    target = await ctx.fs.resolve("a.txt")
    streamed = [chunk async for chunk in ctx.fs.stream_text(target)]
    assert "".join(streamed) == await ctx.fs.read_text(target) == "hello\nworld\n"


async def test_list_dir_returns_child_entry_targets_without_reading_file_content(memory_fs: type) -> None:
    """listDir returns child entry targets without reading file content (exact entry dicts)"""
    ctx = Context()
    ctx.plugin(memory_fs, files={"/abs/sub/b.md": "b", "/abs/sub/c.txt": ""}, dirs=("/abs/sub", "/abs/sub/d"))
    entries = await ctx.fs.list_dir(await ctx.fs.resolve("sub"))
    memory = ctx.fs.memory  # the fake's provider, unrecorded: keys and versions to expect
    key = {p: (await memory.resolve(p)).key for p in ("/abs/sub/b.md", "/abs/sub/c.txt", "/abs/sub/d")}
    version = {p: (await memory.stat(await memory.resolve(p))).version for p in key}
    assert [e.as_dict() for e in entries] == [
        {"name": "b.md", "type": "file", "target": {"targetKey": key["/abs/sub/b.md"], "displayPath": "/abs/sub/b.md"},
         "version": version["/abs/sub/b.md"], "size": 1},
        {"name": "c.txt", "type": "file", "target": {"targetKey": key["/abs/sub/c.txt"], "displayPath": "/abs/sub/c.txt"},
         "version": version["/abs/sub/c.txt"], "size": 0},
        {"name": "d", "type": "directory", "target": {"targetKey": key["/abs/sub/d"], "displayPath": "/abs/sub/d"},
         "version": version["/abs/sub/d"]},
    ]
    assert ctx.fs.count("read_text") == ctx.fs.count("stream_text") == 0


async def test_list_dir_entry_shape_of_the_local_provider(ws: str, memory_fs: type) -> None:
    """listDir entry dicts (local provider): absent keys omitted, sizes only for files"""
    ctx, base = _provider_ctx("local", ws, memory_fs)
    entries = [e.as_dict() for e in await ctx.fs.list_dir(await ctx.fs.resolve("sub"))]
    assert [sorted(e) for e in entries] == [["name", "size", "target", "type", "version"]] * 2
    assert [(e["name"], e["type"], e["size"], e["target"]) for e in entries] == [
        ("b.md", "file", 1, {"targetKey": f"{base}/sub/b.md", "displayPath": f"{base}/sub/b.md"}),
        ("c.txt", "file", 0, {"targetKey": f"{base}/sub/c.txt", "displayPath": f"{base}/sub/c.txt"}),
    ]
    top = [e.as_dict() for e in await ctx.fs.list_dir(await ctx.fs.resolve("."))]
    dir_entry = next(e for e in top if e["name"] == "dir")
    assert dir_entry["type"] == "directory" and "size" not in dir_entry and isinstance(dir_entry["version"], str)


async def test_stat_returns_none_for_an_absent_target(provider: tuple[Context, str]) -> None:
    """stat returns undefined for an absent target"""
    ctx, _ = provider
    assert await ctx.fs.stat(await ctx.fs.resolve("missing.txt")) is None


async def test_lstat_returns_path_metadata_before_resolving_a_target(provider: tuple[Context, str]) -> None:
    """lstat returns path metadata before resolving a target"""
    ctx, _ = provider
    info = await ctx.fs.lstat("a.txt")
    assert info is not None
    assert (info.type, info.size) == ("file", 12)
    assert isinstance(info.version, str) and info.version
    assert await ctx.fs.lstat("missing.txt") is None


# ------------------------------------------------------------------------------------------
# §7.1 branded id factories, FsError
# ------------------------------------------------------------------------------------------

def test_target_key_and_version_brand_a_string_at_compile_time() -> None:
    """FsTargetKey and FsVersion brand a string at compile time (identity at runtime)"""
    assert TargetKey("/a/b") == "/a/b" and type(TargetKey("/a/b")) is str
    assert Version("1:2:3:4:5") == "1:2:3:4:5" and type(Version("v")) is str


def test_fs_error_carries_a_stable_code_and_harness_error_name() -> None:
    """FsError carries a stable code and HarnessError name"""
    err = FsError('cannot read "/f": not found', FsErrorCode.NOT_FOUND)
    assert isinstance(err, HarnessError) and isinstance(err, Exception)
    assert err.code == "FS_NOT_FOUND" and type(err.code) is str
    assert err.name == "FsError"
    assert str(err) == err.message == 'cannot read "/f": not found'
    assert FsError("m", "FS_STALE_VERSION").fs_code is FsErrorCode.STALE_VERSION
    assert sorted(c.value for c in FsErrorCode) == sorted(
        "FS_NOT_FOUND FS_NOT_DIRECTORY FS_NOT_TEXT FS_NOT_REGULAR_FILE FS_PERMISSION_DENIED FS_IO_ERROR "
        "FS_STALE_VERSION FS_NOT_OBSERVED FS_AMBIGUOUS_EDIT FS_EDIT_NOT_FOUND FS_ABORTED FS_SANDBOX_DENIED".split()
    )
    with pytest.raises(ValueError):
        FsError("m", "FS_SOMETHING_ELSE")


def test_fs_error_chains_an_underlying_cause() -> None:
    """FsError chains an underlying cause through ErrorOptions"""
    cause = OSError(2, "No such file or directory")
    err = FsError("boom", FsErrorCode.IO_ERROR, cause=cause)
    assert err.cause is cause and err.__cause__ is cause
    assert FsError("boom", FsErrorCode.IO_ERROR).cause is None


# ------------------------------------------------------------------------------------------
# kernel: services and plugin scopes
# ------------------------------------------------------------------------------------------

class Recorder:
    """A plugin that needs ``fs`` and registers a listener, a prompt section and a disposer."""

    name = "recorder"
    inject = ("fs",)
    applied: list[str] = []

    @classmethod
    def apply(cls, scope: Any, /, label: str = "x") -> None:
        cls.applied.append(label)
        scope.on("evt", lambda *a: None)
        scope.effect(scope.system_prompt.add("recorder", f"section {label}", order=5))


def test_kernel_services_always_exist_and_profile_parses() -> None:
    ctx = Context()
    assert ctx.has("tools") and ctx.has("system_prompt") and not ctx.has("fs")
    assert ctx.profile is Profile.DEFAULT
    assert Context(profile="reference").profile is Profile.REFERENCE
    assert Profile.parse(Profile.REFERENCE) is Profile.REFERENCE
    with pytest.raises(ValueError, match='profile must be "default" or "reference"'):
        Context(profile="strict")


def test_plugin_waits_for_injected_services_and_follows_their_lifetime(memory_fs: type) -> None:
    Recorder.applied = []
    ctx = Context()
    scope = ctx.plugin(Recorder, label="one")
    assert scope.state is ScopeState.PENDING and Recorder.applied == []
    assert ctx.listeners("evt") == ()
    provider = ctx.plugin(memory_fs)
    assert scope.state is ScopeState.ACTIVE and Recorder.applied == ["one"]
    assert len(ctx.listeners("evt")) == 1 and "section one" in ctx.system_prompt.render()
    provider.dispose()  # the injected service goes away: back to pending, registrations removed
    assert scope.state is ScopeState.PENDING
    assert ctx.listeners("evt") == () and "section one" not in ctx.system_prompt.render()
    ctx.plugin(memory_fs)
    assert scope.state is ScopeState.ACTIVE and Recorder.applied == ["one", "one"]
    with scope:
        pass
    assert scope.state is ScopeState.DISPOSED and ctx.listeners("evt") == ()
    assert "recorder" not in ctx.system_prompt.names()


def test_a_plugin_whose_apply_raises_is_unloaded_with_its_registrations() -> None:
    class Broken:
        name = "broken"

        @staticmethod
        def apply(scope: Any, /) -> None:
            scope.on("evt", lambda *a: None)
            scope.provide("thing", object())
            raise ValueError("refused")

    ctx = Context()
    with pytest.raises(ValueError, match="refused"):
        ctx.plugin(Broken)
    assert ctx.listeners("evt") == () and not ctx.has("thing") and ctx.scopes == ()


# ------------------------------------------------------------------------------------------
# kernel: lifecycle (async disposers, ``ctx.aclose``, ``scope.adispose``)
# ------------------------------------------------------------------------------------------

class Holder:
    """A plugin holding a resource: a sync and an async disposer, recorded in ``log``."""

    name = "holder"
    log: list[str] = []

    @classmethod
    def apply(cls, scope: Any, /, label: str = "x") -> None:
        async def release() -> None:
            await anyio.lowlevel.checkpoint()
            cls.log.append(f"aclose {label}")

        scope.effect(lambda: cls.log.append(f"sync {label}"))
        scope.effect(release)


async def test_aclose_disposes_every_scope_newest_first_and_awaits_async_disposers() -> None:
    Holder.log = []
    ctx = Context()
    first, second = ctx.plugin(Holder, label="one"), ctx.plugin(Holder, label="two")
    await ctx.aclose()
    assert Holder.log == ["sync two", "sync one", "aclose two", "aclose one"]
    assert first.state is second.state is ScopeState.DISPOSED and ctx.scopes == ()
    await ctx.aclose()  # idempotent
    assert len(Holder.log) == 4
    ctx.plugin(Holder, label="three")  # the context stays usable
    async with ctx:
        pass
    assert Holder.log[-2:] == ["sync three", "aclose three"]


async def test_a_sync_dispose_leaves_async_disposers_to_the_context() -> None:
    Holder.log = []
    ctx = Context()
    scope = ctx.plugin(Holder)
    scope.dispose()
    assert Holder.log == ["sync x"]  # nothing awaited (and no coroutine was created)
    await ctx.aclose()
    assert Holder.log == ["sync x", "aclose x"]
    other = ctx.plugin(Holder, label="y")
    await other.adispose()
    assert Holder.log[-2:] == ["sync y", "aclose y"] and other.state is ScopeState.DISPOSED


class Releasing:
    """A plugin whose only registration is the async disposer ``release(label)`` it is given."""

    name = "releasing"

    @staticmethod
    def apply(scope: Any, /, release: Callable[[str], Any], label: str = "x") -> None:
        scope.effect(lambda: release(label))  # a sync callable returning a coroutine: awaited too


async def test_aclose_runs_every_disposer_and_reports_the_first_failure() -> None:
    ctx = Context()
    closed: list[str] = []

    async def release(label: str) -> None:
        closed.append(label)
        raise RuntimeError(f"close {label} failed")

    ctx.plugin(Releasing, release=release, label="a")
    ctx.plugin(Releasing, release=release, label="b")
    with pytest.raises(RuntimeError, match="close b failed"):
        await ctx.aclose()
    assert closed == ["b", "a"] and ctx.scopes == ()


async def test_aclose_finishes_closing_when_the_caller_is_cancelled() -> None:
    ctx = Context()
    closed: list[str] = []

    async def release(label: str) -> None:
        await anyio.sleep(0.05)
        closed.append(label)

    ctx.plugin(Releasing, release=release)
    with anyio.CancelScope() as cancel:
        cancel.cancel()
        await ctx.aclose()
    assert closed == ["x"]


async def test_a_provider_plugin_is_closed_by_the_context(ws: str) -> None:
    closed: list[str] = []

    class Closing(LocalFileSystem):
        name = "fs-closing"

        async def aclose(self) -> None:
            closed.append(self.cwd)

    ctx = Context()
    ctx.plugin(Closing, cwd=ws)
    async with ctx:
        assert isinstance(ctx.fs, Closing)
    assert closed == [ws] and not ctx.has("fs")
    provided = Closing(cwd=ws)
    async with dsh_fs.create_context(provider=provided):  # the context owns a provider it is given
        pass
    assert closed == [ws, ws]
    async with Closing(cwd=ws) as fs:  # a provider is an async context manager on its own
        assert isinstance(fs, Closing)
    assert closed == [ws, ws, ws]


# ------------------------------------------------------------------------------------------
# kernel: events (§1.4)
# ------------------------------------------------------------------------------------------

def test_emit_calls_listeners_in_order_and_propagates_exceptions() -> None:
    ctx = Context()
    seen: list[tuple[str, tuple[Any, ...]]] = []
    ctx.on("e", lambda *a: seen.append(("first", a)))
    ctx.on("e", lambda *a: seen.append(("zero", a)), prepend=True)

    def boom(*a: Any) -> None:
        raise RuntimeError("listener failed")

    off = ctx.on("e", boom)
    ctx.on("e", lambda *a: seen.append(("after", a)))
    with pytest.raises(RuntimeError, match="listener failed"):
        ctx.emit("e", 1, 2)
    assert seen == [("zero", (1, 2)), ("first", (1, 2))]
    off()
    seen.clear()
    ctx.emit("e", 3)
    assert [name for name, _ in seen] == ["zero", "first", "after"]
    ctx.emit("nobody-listens")  # no listeners: nothing happens


def test_emit_does_not_await_a_returned_coroutine() -> None:
    ctx = Context()
    ran: list[bool] = []

    async def recorder(*a: Any) -> None:
        ran.append(True)

    ctx.on("e", recorder)
    ctx.emit("e", "x")  # must neither run the body nor leave an un-awaited coroutine warning
    assert ran == []


async def test_waterfall_runs_the_default_without_listeners() -> None:
    ctx = Context()
    assert await ctx.waterfall("w", "t", default=lambda: "default") == "default"


async def test_waterfall_first_listener_wins_and_next_chains() -> None:
    ctx = Context()
    order: list[str] = []

    async def first(target: str, nxt: Callable[[], Any]) -> Any:
        order.append("first")
        return ("first", await nxt())

    def second(target: str, nxt: Callable[[], Any]) -> Any:  # sync listeners are allowed
        order.append("second")
        return "second"

    def never(target: str, nxt: Callable[[], Any]) -> Any:
        order.append("never")
        return "never"

    ctx.on("w", second)
    ctx.on("w", first, prepend=True)
    assert await ctx.waterfall("w", "t", default=lambda: "default") == ("first", "second")
    assert order == ["first", "second"]

    order.clear()
    ctx2 = Context()

    async def passthrough(target: str, nxt: Callable[[], Any]) -> Any:
        return await nxt()

    ctx2.on("w", passthrough)
    assert await ctx2.waterfall("w", "t", default=lambda: None) is None
    ctx2.on("w", never)
    assert await ctx2.waterfall("w", "t", default=lambda: None) == "never"


async def test_waterfall_listener_exceptions_propagate() -> None:
    ctx = Context()

    async def refuse(target: str, nxt: Callable[[], Any]) -> Any:
        raise FsError("edit requires reading \"/f\" first", FsErrorCode.NOT_OBSERVED)

    ctx.on("w", refuse)
    with pytest.raises(FsError) as caught:
        await ctx.waterfall("w", "t", default=lambda: None)
    assert caught.value.code == "FS_NOT_OBSERVED"
