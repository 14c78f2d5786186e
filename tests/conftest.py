"""Shared fixtures of the dsh-fs test suite (fixtures only; no tests here).

* ``anyio_backend`` — async tests run on asyncio (anyio's pytest plugin).
* ``_private_lock_dir`` (session, autouse) — the cross-process lock files (DEVIATIONS A4)
  go to a pytest temporary directory instead of the per-user default, so no test leaves
  files outside tmp dirs.
* ``ws`` — an empty workspace directory (its real path, so display paths are stable).
* ``make_ctx`` — the default deployment (local provider + policy + tools) over ``ws``.
* ``tree`` — a byte-level snapshot of a directory tree (files, modes, inodes, links, dirs),
  to prove that a failed call changed nothing.
* ``memory_fs`` — ``MemoryFs``, an in-memory ``FileSystem`` that records every primitive
  call (the reference's "fake provider" of REFERENCE-SPEC §7.1 and §7.5).
"""

from __future__ import annotations

import functools
import os
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

import dsh_fs
from dsh_fs.core.signal import AbortSignal
from dsh_fs.fs import FileSystem, FsError, FsErrorCode
from dsh_fs.fs.literal_edit import EditFailure, plan_edit
from dsh_fs.fs.paths import is_blank, node_resolve
from dsh_fs.fs.text import normalize
from dsh_fs.testing.snapshot import snapshot
from dsh_fs.fs.types import (
    CreateIfAbsent,
    DirEntry,
    EditIntent,
    EditOutcome,
    EditRequest,
    Info,
    PathInfo,
    ReplaceIfVersion,
    Target,
    TargetKey,
    Version,
    WriteIntent,
    WriteOutcome,
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def _private_lock_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = str(tmp_path_factory.mktemp("dsh-fs-locks"))
    previous = os.environ.get("DSH_FS_LOCK_DIR")
    os.environ["DSH_FS_LOCK_DIR"] = path
    try:
        yield path
    finally:
        if previous is None:
            os.environ.pop("DSH_FS_LOCK_DIR", None)
        else:
            os.environ["DSH_FS_LOCK_DIR"] = previous


@pytest.fixture
def ws(tmp_path: Any) -> str:
    """An empty workspace directory, as a real path."""
    path = os.path.realpath(os.path.join(str(tmp_path), "ws"))
    os.mkdir(path)
    return path


@pytest.fixture
def make_ctx(ws: str) -> Callable[..., dsh_fs.Context]:
    """``make_ctx(profile="default", policy=True, cwd=ws, **tool_config)`` → a fresh deployment."""

    def build(*, profile: str = "default", policy: bool = True, cwd: str | None = None, **config: Any) -> dsh_fs.Context:
        return dsh_fs.create_context(cwd=cwd if cwd is not None else ws, profile=profile, policy=policy, **config)

    return build


@pytest.fixture
def tree() -> Callable[[str], dict[str, tuple[Any, ...]]]:
    """``tree(root)`` → ``dsh_fs.testing.snapshot.snapshot(root, dir_times=False)``.

    Two equal snapshots mean no byte, mode, owner, inode or directory entry changed.
    """
    return functools.partial(snapshot, dir_times=False)


class MemoryFs(FileSystem):
    """An in-memory provider that records its calls (a test double, not a product).

    Paths resolve like the local provider (Node ``path.resolve``) with the display path as
    the key. Versions are ``v1``, ``v2``… (a new one on every mutation). Knobs:

    * ``sizes[key] = None | int`` — what ``stat`` reports as ``size`` (default: UTF-8 bytes);
    * ``failures[primitive] = exc`` — raise ``exc`` from that primitive;
    * ``chunk`` — characters per ``stream_text`` chunk.
    """

    name = "fs-memory-fake"

    def __init__(self, *, profile: Any = None, cwd: str = "/abs", files: dict[str, str] | None = None,
                 dirs: tuple[str, ...] = ()) -> None:
        self.cwd = cwd
        self.files: dict[str, str] = {}
        self.file_versions: dict[str, str] = {}
        self.dirs: set[str] = {"/", cwd, *dirs}
        self.sizes: dict[str, int | None] = {}
        self.failures: dict[str, BaseException] = {}
        self.calls: list[tuple[Any, ...]] = []
        self.chunk = 3
        self._counter = 0
        for path, text in (files or {}).items():
            self.put(path, text)

    # -- test helpers -------------------------------------------------------------------
    def key(self, path: str) -> str:
        return node_resolve(self.cwd, path)

    def put(self, path: str, text: str) -> str:
        """Create or replace a file behind the tools' back; returns its new version."""
        key = self.key(path)
        self._counter += 1
        self.files[key] = text
        self.file_versions[key] = f"v{self._counter}"
        return self.file_versions[key]

    def count(self, primitive: str) -> int:
        return sum(1 for call in self.calls if call[0] == primitive)

    def _fail(self, primitive: str) -> None:
        exc = self.failures.get(primitive)
        if exc is not None:
            raise exc

    @staticmethod
    def _abort(signal: AbortSignal | None, message: str) -> None:
        if signal is not None and signal.aborted:
            raise FsError(message, FsErrorCode.ABORTED)

    # -- the eight primitives -----------------------------------------------------------
    async def resolve(self, path: str, *, cwd: str | None = None, signal: AbortSignal | None = None) -> Target:
        self.calls.append(("resolve", path, cwd))
        self._abort(signal, "resolve aborted")
        if is_blank(path):
            raise FsError("file_path must be a non-empty string", FsErrorCode.NOT_FOUND)
        key = node_resolve(cwd or self.cwd, path)
        return Target(key=TargetKey(key), display_path=key)

    def _info(self, key: str) -> Info | None:
        if key in self.dirs:
            return Info(version=Version("dir"), type="directory", size=0)
        if key not in self.files:
            return None
        size = self.sizes.get(key, len(self.files[key].encode("utf-8")))
        return Info(version=Version(self.file_versions[key]), type="file", size=size)

    async def stat(self, target: Target, *, signal: AbortSignal | None = None) -> Info | None:
        self.calls.append(("stat", target.key))
        self._abort(signal, "stat aborted")
        self._fail("stat")
        return self._info(target.key)

    async def lstat(self, path: str, *, cwd: str | None = None, signal: AbortSignal | None = None) -> PathInfo | None:
        self.calls.append(("lstat", path))
        self._abort(signal, "lstat aborted")
        if is_blank(path):
            raise FsError("file_path must be a non-empty string", FsErrorCode.NOT_FOUND)
        info = self._info(node_resolve(cwd or self.cwd, path))
        return None if info is None else PathInfo(version=info.version, type=info.type, size=info.size)

    def _text(self, target: Target) -> str:
        if target.key in self.dirs:
            raise FsError(f'cannot read "{target.display_path}": not a regular file', FsErrorCode.NOT_REGULAR_FILE)
        if target.key not in self.files:
            raise FsError(f'cannot read "{target.display_path}": not found', FsErrorCode.NOT_FOUND)
        return self.files[target.key]

    async def read_text(self, target: Target, *, signal: AbortSignal | None = None) -> str:
        self.calls.append(("read_text", target.key))
        self._abort(signal, "read aborted")
        self._fail("read_text")
        return self._text(target)

    async def stream_text(self, target: Target, *, signal: AbortSignal | None = None) -> AsyncIterator[str]:
        self.calls.append(("stream_text", target.key))
        self._abort(signal, "read aborted")
        text = self._text(target)
        for i in range(0, len(text), self.chunk):
            yield text[i : i + self.chunk]
        yield ""

    async def list_dir(self, target: Target, *, signal: AbortSignal | None = None) -> list[DirEntry]:
        self.calls.append(("list_dir", target.key))
        self._abort(signal, "list aborted")
        if target.key not in self.dirs:
            if target.key in self.files:
                raise FsError(f'cannot list "{target.display_path}": not a directory', FsErrorCode.NOT_DIRECTORY)
            raise FsError(f'cannot list "{target.display_path}": not found', FsErrorCode.NOT_FOUND)
        prefix = target.key.rstrip("/") + "/"
        names = sorted(
            {k[len(prefix):].split("/")[0] for k in [*self.files, *self.dirs] if k.startswith(prefix) and k != prefix}
        )
        entries = []
        for name in names:
            key = prefix + name
            info = self._info(key)
            assert info is not None
            entries.append(DirEntry(
                name=name,
                type=info.type,
                target=Target(key=TargetKey(key), display_path=target.display_path.rstrip("/") + "/" + name),
                version=info.version,
                size=info.size if info.type == "file" else None,
            ))
        return entries

    async def write_text(self, target: Target, content: str, expected: WriteIntent | None = None, *,
                         signal: AbortSignal | None = None) -> WriteOutcome:
        self.calls.append(("write_text", target.key, content, expected))
        self._fail("write_text")
        key, dp = target.key, target.display_path
        if key in self.dirs:
            raise FsError(f'cannot write "{dp}": not a regular file', FsErrorCode.NOT_REGULAR_FILE)
        existing = key in self.files
        if isinstance(expected, ReplaceIfVersion):
            if not existing:
                raise FsError(f'cannot write "{dp}": file no longer exists', FsErrorCode.STALE_VERSION)
            if self.file_versions[key] != expected.version:
                raise FsError(f'cannot write "{dp}": file changed since it was read', FsErrorCode.STALE_VERSION)
        elif isinstance(expected, CreateIfAbsent) and existing:
            raise FsError(f'cannot overwrite existing "{dp}" without reading it first', FsErrorCode.NOT_OBSERVED)
        self._abort(signal, "write aborted")
        before = normalize(self.files[key]) if existing else None
        version = self.put(key, content)
        return WriteOutcome(operation="update" if existing else "create", version=Version(version),
                            before=before, after=normalize(content))

    async def edit_text(self, target: Target, edit: EditRequest, expected: EditIntent | None = None, *,
                        signal: AbortSignal | None = None) -> EditOutcome:
        self.calls.append(("edit_text", target.key, edit, expected))
        self._fail("edit_text")
        key, dp = target.key, target.display_path
        if key in self.dirs:
            raise FsError(f'cannot edit "{dp}": not a regular file', FsErrorCode.NOT_REGULAR_FILE)
        if key not in self.files or (expected is not None and self.file_versions[key] != expected.version):
            raise FsError(f'cannot edit "{dp}": file changed since it was read', FsErrorCode.STALE_VERSION)
        self._abort(signal, "edit aborted")
        try:
            plan = plan_edit(self.files[key], edit.old_string, edit.new_string, edit.replace_all, keep_bytes=False)
        except EditFailure as failure:
            if failure.kind == "ambiguous":
                raise FsError(
                    f'old_string matched {failure.count} times in "{dp}"; '
                    "provide a more specific old_string or set replace_all to true",
                    FsErrorCode.AMBIGUOUS_EDIT,
                ) from None
            if failure.kind == "empty":
                raise FsError("old_string must be a non-empty string", FsErrorCode.EDIT_NOT_FOUND) from None
            raise FsError(f'old_string was not found in "{dp}"', FsErrorCode.EDIT_NOT_FOUND) from None
        version = self.put(key, plan.text)
        return EditOutcome(version=Version(version), before=plan.before, after=plan.after)


@pytest.fixture
def memory_fs() -> type[MemoryFs]:
    """The ``MemoryFs`` class: ``ctx.plugin(memory_fs, files={"/abs/a.txt": "..."})``."""
    return MemoryFs
