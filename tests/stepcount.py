"""Work measured by counting, never by a clock (helper of the tests; no tests here).

``traced_lines(run, *modules)`` runs ``run()`` and returns how many Python lines of
``modules`` it executed (``sys.settrace``): a deterministic measure of Python-level work, for
tests that bound a search or a loop (the hint budget, streamed edits) without timing it.
C-speed work (``str``/``bytes`` methods) is not seen; the code under test accounts for it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

__all__ = ("traced_lines",)


def traced_lines(run: Callable[[], Any], *modules: ModuleType) -> tuple[Any, int]:
    """``(run(), lines of modules executed while it ran)``."""
    files = {module.__file__ for module in modules}
    count = 0

    def local(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename in files else None

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        result = run()
    finally:
        sys.settrace(previous)
    return result, count
