"""Small file helpers the test modules share (imported as ``filekit``; no tests here).

* ``put(path, data, mode=None)`` — write bytes (or UTF-8 text) to ``path``, making its
  parent directories; returns ``path``.
* ``get(path)`` — the bytes of ``path``.
* ``many_empty_files(root, n)`` — ``root`` filled with ``n`` empty files and one directory.
* ``await traced_peak(work)`` — the peak of Python allocations while ``await work()`` runs.
"""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import Awaitable, Callable
from typing import Any


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


def many_empty_files(root: str, n: int) -> str:
    """``root`` with ``n`` empty files ``f000000.txt``… and a directory ``sub``; returns ``root``."""
    for i in range(n):
        os.close(os.open(os.path.join(root, f"f{i:06d}.txt"), os.O_CREAT | os.O_WRONLY, 0o644))
    os.mkdir(os.path.join(root, "sub"))
    return root


async def traced_peak(work: Callable[[], Awaitable[Any]]) -> tuple[int, Any]:
    """``(peak bytes of Python allocations, value)`` of ``await work()``, traced by tracemalloc."""
    tracemalloc.start()
    try:
        value = await work()
        return tracemalloc.get_traced_memory()[1], value
    finally:
        tracemalloc.stop()
