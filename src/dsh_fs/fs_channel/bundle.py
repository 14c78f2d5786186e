"""The helper bundle the near side brings to the far side: a zip of the Python modules the
helper runs (dsh-fs's kernel, seam, local provider, the search tools' host side, the helper
and this package, and the pure-Python libraries they import: anyio, sniffio,
typing_extensions, pathspec), with its SHA-256 (DEVIATIONS C1).

Built once per process from the installed files, byte for byte reproducible (sorted names,
fixed timestamps), so the far side's cache (``boot``) keeps one bundle per dsh-fs version and
the hash names exactly the code that runs. ``boot_program`` is the bootstrap's text, sent as
``python3 -I -c`` (a constant: no caller value is ever part of the command).
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import zipfile
from dataclasses import dataclass

__all__ = ("Bundle", "PACKAGES", "boot_program", "bundle")

PACKAGES: tuple[tuple[str, str], ...] = (
    ("dsh_fs", "__init__.py"),
    ("dsh_fs", "providers.py"),
    ("dsh_fs", "private_dirs.py"),
    ("dsh_fs", "core"),
    ("dsh_fs", "fs"),
    ("dsh_fs", "fs_local"),
    ("dsh_fs", "fs_channel"),
    ("dsh_fs", "far_helper"),
    ("dsh_fs", "tool_fs_search"),
    ("dsh_fs", "tool_fs"),
    ("dsh_fs", "tool_common"),
    ("dsh_fs", "fs_sandbox"),
    ("dsh_fs", "notebook"),
    ("dsh_fs", "spill"),
    ("anyio", ""),
    ("sniffio", ""),
    ("typing_extensions", ""),
    ("pathspec", ""),
)
"""(top-level module, path below it) of every part of the bundle: a directory is taken whole
(its ``.py`` files), a file alone; ``""`` is the whole package (or the one-file module)"""

_EPOCH = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True, slots=True)
class Bundle:
    """The helper's code as one zip."""

    data: bytes
    """the zip's bytes"""
    digest: str
    """its SHA-256, hex"""


def _module_file(name: str) -> str:
    module = __import__(name)
    return os.path.abspath(module.__file__ or "")


def _files() -> list[tuple[str, str]]:
    """(name in the zip, path on this disk) of every module of the bundle, sorted by name."""
    found: dict[str, str] = {}
    for package, part in PACKAGES:
        path = _module_file(package)
        if not path.endswith("__init__.py"):  # a module of one file
            found[os.path.basename(path)] = path
            continue
        top = os.path.dirname(path)
        start = os.path.join(top, part) if part else top
        if os.path.isfile(start):
            found[f"{package}/{part}"] = start
            continue
        for base, dirs, names in os.walk(start):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in names:
                if name.endswith(".py"):
                    path = os.path.join(base, name)
                    found[package + "/" + os.path.relpath(path, top).replace(os.sep, "/")] = path
    return sorted(found.items())


@functools.cache
def bundle() -> Bundle:
    """The bundle of the installed code (built on first use, then kept for the process)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, path in _files():
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            with open(path, "rb") as handle:
                archive.writestr(info, handle.read())
    data = out.getvalue()
    return Bundle(data=data, digest=hashlib.sha256(data).hexdigest())


@functools.cache
def boot_program() -> str:
    """The bootstrap program's text (``boot.py``), as sent to ``python3 -I -c``."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "boot.py"), encoding="utf-8") as handle:
        return handle.read()
