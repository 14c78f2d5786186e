"""Where the shared conformance corpus is, and its judge (``../shared/conformance``; not a test module).

* ``SHARED`` — the shared folder beside the checkout (``$DSH_FS_SHARED`` overrides it);
* ``CONFORMANCE`` — its ``conformance`` folder (scenarios and ``judge.py``);
* ``judge_module()`` — the shared ``judge.py`` loaded as a module (``judge_expect``).
"""

from __future__ import annotations

import importlib.util
import os
from types import ModuleType

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SHARED = os.path.abspath(os.environ.get("DSH_FS_SHARED", os.path.join(ROOT, "..", "shared")))
CONFORMANCE = os.path.join(SHARED, "conformance")

__all__ = ("CONFORMANCE", "SHARED", "judge_module")


def judge_module() -> ModuleType:
    """The shared ``judge.py``, loaded afresh from ``CONFORMANCE``."""
    spec = importlib.util.spec_from_file_location("conformance_judge", os.path.join(CONFORMANCE, "judge.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
