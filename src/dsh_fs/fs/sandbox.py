"""Sandbox modes: the vocabulary the fence (``fs_sandbox.filesystem``) and the seam's message
catalog share (pure, I/O-free).

Follows the reference's ``fs-sandbox`` and ``tool-fs/src/sandbox.ts`` (``toninfo/deepseek-harness``
at ``48fb3b528b91c94ef429fc2bbc6b8e8f5157e7bb``; texts re-checked at ``261b726e0c6a8d1f4d8160f6538860efe5dccf9e``;
docs/SANDBOX.md): three modes and a fence on every mutation (``dsh_fs.fs_sandbox``). The texts
of the escalation the tools offer are ``dsh_fs.tool_common.sandbox_texts``.

The fence's text below is the reference's, byte for byte (docs/design/SANDBOX.md §1.3–§1.6).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

__all__ = (
    "MODES",
    "SandboxMode",
    "SandboxPolicy",
    "WIDER",
    "fence_denied_message",
    "parse_mode",
    "strictly_wider",
)

SandboxMode = Literal["read-only", "workspace-write", "danger-full-access"]
"""the reference's ``SandboxMode``"""

MODES: tuple[SandboxMode, ...] = get_args(SandboxMode)
"""``SANDBOX_MODES``, in the reference's order (narrowest first)"""

WIDER: Mapping[SandboxMode, tuple[SandboxMode, ...]] = {
    "read-only": ("workspace-write", "danger-full-access"),
    "workspace-write": ("danger-full-access",),
    "danger-full-access": (),
}
"""``WIDER_MODES``: the modes strictly wider than each mode"""


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """The policy one mutation runs under (the reference's ``SandboxExecutionPolicy``).

    :param mode: the call's mode (the deployment's, or an approved wider one)
    :param workspace_roots: the writable roots under ``workspace-write`` (display paths of the
        provider's workspace; the fence canonicalizes them); empty: the call's cwd
    """

    mode: SandboxMode
    workspace_roots: tuple[str, ...] = ()


def parse_mode(value: object) -> SandboxMode:
    """``value`` as a ``SandboxMode``.

    :raises ValueError: ``unknown sandbox mode "<v>" (expected one of ["read-only",…])``
    """
    if value not in MODES:
        allowed = json.dumps(list(MODES), separators=(",", ":"))
        shown = json.dumps(value) if isinstance(value, str) else repr(value)
        raise ValueError(f"unknown sandbox mode {shown} (expected one of {allowed})")
    return value  # type: ignore[return-value]


def strictly_wider(requested: SandboxMode, effective: SandboxMode) -> bool:
    """Whether ``requested`` is strictly wider than ``effective`` (``WIDER_MODES``)."""
    return requested in WIDER[effective]


# -- denial texts ---------------------------------------------------------------------------

def fence_denied_message(verb: str, display_path: str, mode: SandboxMode) -> str:
    """The fence's own text: ``cannot <verb> "<dp>": file access denied under <mode> mode``
    (``write`` for both ``write_text`` and ``edit_text``, as the reference)."""
    return f'cannot {verb} "{display_path}": file access denied under {mode} mode'
