"""Small file helpers the test modules share (imported as ``filekit``; no tests here).

* ``put(path, data, mode=None)`` — write bytes (or UTF-8 text) to ``path``, making its
  parent directories; returns ``path``.
* ``get(path)`` — the bytes of ``path``.
"""

from __future__ import annotations

import os


def put(path: str, data: bytes | str, mode: int | None = None) -> str:
    """Write ``data`` to ``path`` (parents made as needed), then ``chmod`` it to ``mode``."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data.encode() if isinstance(data, str) else data)
    if mode is not None:
        os.chmod(path, mode)
    return path


def get(path: str) -> bytes:
    """The bytes of the file at ``path``."""
    with open(path, "rb") as handle:
        return handle.read()
