"""The switch of the lean ``tools/call`` paths (``lean.py``, and the early calls of
``prelude.py``), readable without the MCP SDK. No SDK import here."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

__all__ = ("ENV_VAR", "lean_from_env")

ENV_VAR: Final = "DSH_FS_MCP_LEAN"
"""the environment variable that turns the lean path off (``0``, ``off``, ``false``, ``no``)"""

_OFF: Final = frozenset({"0", "off", "false", "no"})


def lean_from_env(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the lean path is on: unless ``DSH_FS_MCP_LEAN`` is ``0``/``off``/``false``/``no``
    (any case, surrounding blanks ignored)."""
    value = (os.environ if environ is None else environ).get(ENV_VAR, "")
    return value.strip().lower() not in _OFF
