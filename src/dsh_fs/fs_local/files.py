"""One file on the local disk: what every local operation shares (REFERENCE-SPEC §2.3–§2.5,
§2.8; DEVIATIONS A2, A5, D3), synchronous.

* ``probe`` / ``Probe`` — a following stat and the file's version (A5), minted lazily;
  ``probe_no_follow`` — the ``lstat`` twin (``symlink`` type).
* ``open_regular`` — open a regular file for reading without ever blocking on a FIFO,
  beneath the workspace root when there is one.
* ``owner_to_keep`` and ``version_after_write`` — what a replacement keeps (D3) and reports.
* ``is_read_only`` — whether a replacement would overwrite a file the caller may not write (D17);
  ``keep_read_only`` refuses one, where the rules say so.
* ``STREAM_CHUNK`` — the bytes per read of ``stream_text``, which ``read_window``'s streamed
  validation must align to.

Used by ``fsio`` (the primitives), ``large_edit`` (streamed edits of huge files) and
``reads`` (windowed reads); it imports none of them. OS errors are mapped by ``oserrors``.
"""

from __future__ import annotations

import os
import stat as stat_mod
from dataclasses import dataclass
from typing import Literal

from ..fs.errors import Verb, not_found, not_regular_file, read_only
from ..fs.types import FileType, Info, PathInfo, Version
from . import containment, versions
from .oserrors import map_os_error
from .rules import LocalRules

__all__ = (
    "Probe",
    "STREAM_CHUNK",
    "UNPROBED",
    "file_type",
    "is_read_only",
    "keep_read_only",
    "open_regular",
    "open_regular_st",
    "owner_to_keep",
    "probe",
    "probe_no_follow",
    "version_after_write",
)

STREAM_CHUNK = 1024 * 1024
"""bytes per read of ``stream_text`` (one decoded chunk each), and so the validation
alignment of a streamed ``read_window`` (``scan``): a byte-capped streamed read must validate
exactly the chunks ``stream_text`` would have decoded"""


def file_type(mode: int) -> FileType:
    """The seam's type for an ``st_mode``: ``file``, ``directory`` or ``other``."""
    if stat_mod.S_ISREG(mode):
        return "file"
    if stat_mod.S_ISDIR(mode):
        return "directory"
    return "other"


@dataclass(slots=True)
class Probe:
    """Metadata of an existing path, with a lazily minted version."""

    path: str
    st: os.stat_result
    root: containment.Root | None = None
    """containment root: digests are read beneath it"""
    _version: str | None = None

    @property
    def type(self) -> FileType:
        return file_type(self.st.st_mode)

    @property
    def mode(self) -> int:
        """permission bits only (``st_mode & 0o777``, as the reference keeps them)"""
        return self.st.st_mode & 0o777

    @property
    def version(self) -> Version:
        """the A5 version (may read the file for a content digest, once)"""
        if self._version is None:
            self._version = versions.mint(self.st, self.path, root=self.root)
        return Version(self._version)

    def matches(self, expected: str, *, content: bool = False) -> bool:
        """Is this still version ``expected`` (A5-aware comparison; ``content``: D29, the same
        bytes under other stat fields count, ``versions.same_version``)?"""
        return versions.same_version(expected, self.st, self.path, root=self.root, content=content)

    def info(self) -> Info:
        """The seam's ``Info`` (size in bytes)."""
        return Info(version=self.version, type=file_type(self.st.st_mode), size=self.st.st_size)


UNPROBED: object = object()
"""``fsio.write_file`` / ``edit_file(existing=…)`` default: the operation probes the target itself"""


def probe(path: str, verb: Verb, display: str, *, root: containment.Root | None = None) -> Probe | None:
    """Following stat (beneath ``root``: final component not followed); ``None`` for
    ENOENT/ENOTDIR; other errors mapped (A2) with ``verb`` and ``display``."""
    try:
        return Probe(path, containment.stat_in(path, root=root), root)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise map_os_error(exc, verb, display) from exc
    except ValueError:
        return None


def probe_no_follow(path: str, display: str, *, root: containment.Root | None = None) -> PathInfo | None:
    """``lstat`` metadata of the unresolved ``path`` (type may be ``symlink``); ``None`` when
    absent. Beneath ``root`` its parent is resolved without leaving the root: a path whose
    resolution leaves it fails with the containment error."""
    try:
        st = containment.lstat_in(path, root=root)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise map_os_error(exc, "stat", display) from exc
    except ValueError:
        return None
    kind = "symlink" if stat_mod.S_ISLNK(st.st_mode) else file_type(st.st_mode)
    return PathInfo(version=Version(versions.mint(st, path, read=False)), type=kind, size=st.st_size)


def open_regular(path: str, verb: Verb, display: str, root: containment.Root | None) -> int:
    """A read-only descriptor of the regular file at ``path`` (beneath ``root`` when given),
    opened without ever blocking on a FIFO; the caller closes it.

    :raises FsError: ``not_found`` (ENOENT/ENOTDIR), ``not_regular_file`` (a directory, FIFO,
        socket or device), OS errors mapped (A2) — each with ``verb`` and ``display``
    """
    return open_regular_st(path, verb, display, root)[0]


def open_regular_st(path: str, verb: Verb, display: str, root: containment.Root | None) -> tuple[int, os.stat_result]:
    """``open_regular``, with the ``fstat`` of the descriptor that told it is a regular file.

    :raises FsError: as ``open_regular``
    """
    try:
        fd = containment.open_in(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY, root=root)
    except (FileNotFoundError, NotADirectoryError):
        raise not_found(verb, display) from None
    except IsADirectoryError:
        raise not_regular_file(verb, display) from None
    except OSError as exc:
        raise map_os_error(exc, verb, display) from exc
    try:
        st = os.fstat(fd)
        if not stat_mod.S_ISREG(st.st_mode):
            raise not_regular_file(verb, display)
    except OSError as exc:
        os.close(fd)
        raise map_os_error(exc, verb, display) from exc
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def owner_to_keep(existing: Probe | None, rules: LocalRules) -> tuple[int, int] | None:
    """D3: the ``(uid, gid)`` a replacement of ``existing`` should keep, or ``None`` when the
    new inode may simply be ours (a new file, the reference profile, or already ours)."""
    if existing is None or not rules.umask_mode:
        return None
    uid, gid = existing.st.st_uid, existing.st.st_gid
    if (uid, gid) == (os.geteuid(), os.getegid()):
        return None
    return uid, gid


def is_read_only(existing: Probe) -> bool:
    """D17: is ``existing`` a file the caller may read but not open for writing — so that
    replacing it (which needs only the directory's permission) would defeat its protection?

    Asked of the file alone, for the caller's *effective* ids (``faccessat(AT_EACCESS)``:
    owner, groups, POSIX ACLs): it is read-only when it has no write permission bit at all
    (``chmod 444``: nobody is meant to write it — root and callers with ``CAP_DAC_OVERRIDE``
    included, although the kernel would let them) or when the kernel would not let the
    caller write it. Not read-only: a file the caller cannot read either (the replace then
    fails reading it, plain ``permission denied``, A2), and a file on a read-only file system
    (the replace fails with the file system's own error, ``FS_IO_ERROR``).
    """
    effective = os.access in os.supports_effective_ids
    path = existing.path
    if existing.st.st_mode & 0o222 and os.access(path, os.W_OK, effective_ids=effective):
        return False
    if not os.access(path, os.R_OK, effective_ids=effective):
        return False
    try:
        return not os.statvfs(path).f_flag & os.ST_RDONLY
    except OSError:
        return True


def keep_read_only(existing: Probe, verb: Literal["write", "edit", "delete"], display: str, rules: LocalRules) -> None:
    """D17 (default profile): refuse replacing or deleting the read-only file ``existing``.

    :raises FsError: ``read_only(verb, display)`` when ``rules.keep_read_only`` and
        :func:`is_read_only`
    """
    if rules.keep_read_only and is_read_only(existing):
        raise read_only(verb, display)


def version_after_write(key: str, data: bytes | None, root: containment.Root | None) -> Version:
    """The version of ``key`` just after a write of ``data`` (``None``: the content is not in
    memory; a digest, if the A5 racy window needs one, re-reads the file)."""
    try:
        st = containment.stat_in(key, root=root)
    except OSError:
        return Version("missing:" + key)
    return Version(versions.mint(st, key, content=data if data is not None and st.st_size == len(data) else None))
