"""``LocalSpillStore``: spill artifacts as private files on this machine's disk.

Layout: ``<root>/s-<hash of the session id>/<random>-<suggested name>``; directories 0700,
files 0600, created exclusively (``O_EXCL | O_NOFOLLOW``: a planted file or symlink is never
written through). The locator is the file's absolute path; the retrieval hint is the
reference's (``RETRIEVAL_HINT``).

Lifetime:

* no ``root`` (the library default, ``dsh-fs mcp``): a private directory made with
  ``mkdtemp`` (``<tmp>/dsh-fs-spill-XXXXXXXX``) on first save, removed with everything in it by
  ``close()`` — when the plugin's scope is disposed, or when the process exits;
* an explicit ``root`` (the CLI uses ``<state dir>/spill``): kept across processes, so a
  later ``dsh-fs read`` can page a result; artifacts older than ``max_age`` seconds are deleted
  (checked on save, at most once per ``SWEEP_INTERVAL_S`` per process).

The ``read`` and ``grep`` tools reach an artifact through ``reader`` even when the workspace
provider cannot (a containment root, S3): only files of the calling session's own directory
are served, read-only, through a ``LocalFileSystem`` confined to that directory.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
import stat as stat_mod
import tempfile
import threading
import time
import weakref
from typing import TYPE_CHECKING, ClassVar

import anyio.to_thread

from ..core.profile import Profile
from .store import RETRIEVAL_HINT, SpillRef, SpillRequest, SpillStore, SpillWriter

if TYPE_CHECKING:
    from ..fs.filesystem import FileSystem

__all__ = ("DEFAULT_MAX_AGE_S", "LocalSpillStore", "SWEEP_INTERVAL_S", "safe_name")

DEFAULT_MAX_AGE_S = 7 * 24 * 3600.0
"""artifacts under an explicit root older than this (seconds) are deleted"""

SWEEP_INTERVAL_S = 3600.0
"""at most one age sweep per store per this many seconds"""

_SAFE = re.compile(r"[A-Za-z0-9._-]")
_NAME = re.compile(r"[0-9a-f]{16}-[A-Za-z0-9._~-]+")
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def safe_name(raw: str) -> str:
    """``raw`` as one safe path segment, injectively: ``[A-Za-z0-9._-]`` kept, every other
    UTF-16 unit (and ``~``) as ``~XXXX``; ``.``/``..``/empty escaped (the reference's
    ``encodeSegment``). Capped at 100 characters."""
    if raw in ("", ".", ".."):
        return {"": "~", ".": "~002E", "..": "~002E~002E"}[raw]
    units = raw.encode("utf-16-be", "surrogatepass")
    out = []
    for i in range(0, len(units), 2):
        unit = int.from_bytes(units[i : i + 2], "big")
        out.append(chr(unit) if _SAFE.fullmatch(chr(unit)) else f"~{unit:04X}")  # a surrogate is escaped
    return "".join(out)[:100]


def _session_dir_name(session_id: str) -> str:
    return "s-" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _remove_tree(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


class _LocalWriter(SpillWriter):
    """Writes ``.<name>.part`` next to the artifact (a name outside the artifacts' form, so
    the reader never serves an unfinished one); ``commit`` writes the head, copies the part
    behind it and removes the part."""

    def __init__(self, directory: str, name: str) -> None:
        self._final = os.path.join(directory, name)
        self._part = os.path.join(directory, f".{name}.part")
        fd = os.open(self._part, _FILE_FLAGS, 0o600)
        self._file = os.fdopen(fd, "wb", buffering=1 << 16)
        self._size = 0
        self._done = False

    @property
    def size(self) -> int:
        return self._size

    def write(self, text: str) -> None:
        data = text.encode("utf-8", "surrogatepass")
        self._file.write(data)
        self._size += len(data)

    def _finish(self, head: bytes) -> SpillRef:
        self._file.close()
        try:
            fd = os.open(self._final, _FILE_FLAGS, 0o600)
        except BaseException:
            self._cleanup(final=False)  # a file planted at the name is not ours to remove
            raise
        try:
            with os.fdopen(fd, "wb") as out, open(self._part, "rb") as body:
                out.write(head)
                shutil.copyfileobj(body, out, 1 << 20)
        except BaseException:
            self._cleanup(final=True)
            raise
        self._cleanup(final=False)
        return SpillRef(locator=self._final, bytes=len(head) + self._size, retrieval_hint=RETRIEVAL_HINT)

    def _cleanup(self, *, final: bool) -> None:
        self._file.close()
        for path in (self._part, self._final) if final else (self._part,):
            try:
                os.unlink(path)
            except OSError:
                pass

    async def commit(self, *, head: str = "") -> SpillRef:
        if self._done:
            raise RuntimeError("spill writer already finished")
        self._done = True
        return await anyio.to_thread.run_sync(self._finish, head.encode("utf-8", "surrogatepass"))

    async def discard(self) -> None:
        self._done = True
        self._cleanup(final=False)


class LocalSpillStore(SpillStore):
    """Spill artifacts as private local files (see the module docstring).

    :param root: where artifacts live; ``None``: a private temporary directory, deleted on
        ``close()`` and at process exit
    :param max_age: seconds after which an artifact under an explicit ``root`` is deleted
    :param profile: the profile of the provider ``reader`` returns (read texts follow it)
    """

    name: ClassVar[str] = "spill-local"

    def __init__(
        self,
        *,
        root: str | os.PathLike[str] | None = None,
        max_age: float = DEFAULT_MAX_AGE_S,
        profile: Profile | str | None = None,
    ) -> None:
        self.profile = Profile.parse(profile)
        self._explicit = root is not None
        self._root: str | None = os.path.abspath(os.fspath(root)) if root is not None else None
        self.max_age = max_age
        self._lock = threading.Lock()
        self._swept_at = 0.0
        self._finalizer: weakref.finalize | None = None
        self._closed = False

    @property
    def root(self) -> str | None:
        """The artifact directory (``None`` until a private one is first needed)."""
        return self._root

    def _ensure_root(self) -> str:
        with self._lock:
            if self._closed:
                raise OSError("the spill store is closed")
            if self._root is None:
                self._root = os.path.realpath(tempfile.mkdtemp(prefix="dsh-fs-spill-"))
                # also run at interpreter exit (``weakref.finalize`` does that itself)
                self._finalizer = weakref.finalize(self, _remove_tree, self._root)
            elif self._explicit:
                os.makedirs(self._root, mode=0o700, exist_ok=True)
            return self._root

    def _sweep(self, root: str) -> None:
        """Delete artifacts older than ``max_age`` under an explicit root (rate-limited)."""
        now = time.time()
        if not self._explicit or now - self._swept_at < SWEEP_INTERVAL_S:
            return
        self._swept_at = now
        limit = now - self.max_age
        try:
            sessions = os.scandir(root)
        except OSError:
            return
        with sessions:
            for session in sessions:
                if not session.name.startswith("s-") or not session.is_dir(follow_symlinks=False):
                    continue
                try:
                    with os.scandir(session.path) as files:
                        for item in files:
                            if item.is_file(follow_symlinks=False) and item.stat(follow_symlinks=False).st_mtime < limit:
                                os.unlink(item.path)
                    os.rmdir(session.path)  # only succeeds when empty
                except OSError:
                    continue

    def open_writer(self, request: SpillRequest) -> SpillWriter:
        root = self._ensure_root()
        self._sweep(root)
        directory = os.path.join(root, _session_dir_name(request.session_id))
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            st = os.lstat(directory)
            if not stat_mod.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
                raise OSError(f"{directory} is not a directory of this user") from None
        return _LocalWriter(directory, f"{secrets.token_hex(8)}-{safe_name(request.suggested_name)}")

    def reader(self, path: str, *, session_id: str | None) -> "FileSystem | None":
        """A ``LocalFileSystem`` confined to the session's directory when ``path`` is exactly
        one of its finished artifacts (a regular file, named as this store names them; a
        writer's in-progress ``.<name>.part`` is not of that form)."""
        root = self._root
        if root is None or session_id is None or not path.startswith(root + os.sep):
            return None
        directory = os.path.join(root, _session_dir_name(session_id))
        if os.path.dirname(path) != directory or not _NAME.fullmatch(os.path.basename(path)):
            return None
        try:
            if not stat_mod.S_ISREG(os.lstat(path).st_mode):
                return None
        except OSError:
            return None
        from ..fs_local import LocalFileSystem

        return LocalFileSystem(cwd=directory, root=directory, profile=self.profile)

    def close(self) -> None:
        """Delete a private root and everything in it (idempotent); an explicit root stays."""
        with self._lock:
            self._closed = True
            finalizer, self._finalizer = self._finalizer, None
        if finalizer is not None:
            finalizer()
