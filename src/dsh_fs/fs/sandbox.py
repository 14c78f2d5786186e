"""Sandbox modes: the vocabulary, the escalation rules and every model-facing text (pure, I/O-free).

Follows the reference's ``fs-sandbox`` and ``tool-fs/src/sandbox.ts`` (``toninfo/deepseek-harness``
at ``48fb3b528b91c94ef429fc2bbc6b8e8f5157e7bb``; texts re-checked at ``261b726e0c6a8d1f4d8160f6538860efe5dccf9e``;
docs/SANDBOX.md): three modes, a fence on every mutation (``dsh_fs.fs_sandbox``), and a one-time
wider retry through ``sandbox_permissions`` + ``justification`` that a person approves.

Every text below is the reference's, byte for byte (docs/design/SANDBOX.md §1.3–§1.6).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from ..core.errors import ToolInputError

__all__ = (
    "ESCALATION_TARGETS",
    "JUSTIFICATION_DESCRIPTION",
    "MODES",
    "NOT_AVAILABLE",
    "SANDBOX_PERMISSIONS_DESCRIPTION",
    "SandboxMode",
    "SandboxPolicy",
    "WIDER",
    "approval_cancelled",
    "approval_rejected",
    "approval_unavailable",
    "check_escalation_args",
    "denial_marker",
    "escalation_hint",
    "escalation_reason",
    "fence_denied_message",
    "no_agent",
    "no_approver",
    "not_wider",
    "parse_mode",
    "policy_context",
    "strictly_wider",
)

SandboxMode = Literal["read-only", "workspace-write", "danger-full-access"]
"""the reference's ``SandboxMode``"""

MODES: tuple[SandboxMode, ...] = get_args(SandboxMode)
"""``SANDBOX_MODES``, in the reference's order (narrowest first)"""

ESCALATION_TARGETS: tuple[SandboxMode, ...] = ("workspace-write", "danger-full-access")
"""the modes a call may ask for (the ``sandbox_permissions`` enum)"""

WIDER: Mapping[SandboxMode, tuple[SandboxMode, ...]] = {
    "read-only": ("workspace-write", "danger-full-access"),
    "workspace-write": ("danger-full-access",),
    "danger-full-access": (),
}
"""``WIDER_MODES``: the modes strictly wider than each mode"""

NOT_AVAILABLE = "sandbox_permissions is not available in this composition (no sandboxing filesystem to escalate)"
"""an escalation field where no sandbox is composed (reference ``stampMode``; deviation X1 in the
default profile)"""

SANDBOX_PERMISSIONS_DESCRIPTION = (
    "The wider sandbox mode this file operation needs. Only valid as a one-shot retry of an operation the sandbox "
    "just denied; requires justification and user approval."
)
JUSTIFICATION_DESCRIPTION = (
    "Required with sandbox_permissions: one sentence for the user explaining why this exact file operation needs "
    "the wider access."
)


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


def check_escalation_args(args: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The reference's ``validateEscalationArgs``: the pairing of the two escalation fields.

    :param args: the call's (schema-validated) arguments
    :return: ``(sandbox_permissions, justification)``, each ``None`` when absent
    :raises ToolInputError: in this order: ``invalid escalation: sandbox_permissions requires a
        justification``; ``invalid escalation: justification is only valid together with
        sandbox_permissions``; ``invalid justification: expected a non-empty sentence``
    """
    requested = args.get("sandbox_permissions")
    justification = args.get("justification")
    if requested is not None and justification is None:
        raise ToolInputError("invalid escalation: sandbox_permissions requires a justification")
    if justification is not None and requested is None:
        raise ToolInputError("invalid escalation: justification is only valid together with sandbox_permissions")
    if justification is not None and not str(justification).strip():
        raise ToolInputError("invalid justification: expected a non-empty sentence")
    return requested, justification


# -- denial texts ---------------------------------------------------------------------------

def fence_denied_message(verb: str, display_path: str, mode: SandboxMode) -> str:
    """The fence's own text: ``cannot <verb> "<dp>": file access denied under <mode> mode``
    (``write`` for both ``write_text`` and ``edit_text``, as the reference)."""
    return f'cannot {verb} "{display_path}": file access denied under {mode} mode'


def denial_marker(mode: SandboxMode) -> str:
    """``sandboxDenialMarker(mode)``: ``[sandbox: file access denied under <mode> mode]``."""
    return f"[sandbox: file access denied under {mode} mode]"


def escalation_hint(subject: str = "operation") -> str:
    """``escalationHintMarker(subject)`` (U+2014 em dash)."""
    return (
        f"[sandbox: escalation available \u2014 retry this exact {subject} once with sandbox_permissions "
        "(the narrowest wider mode that suffices) + justification; the approval prompt asks the user]"
    )


# -- approval texts (reference ``approveEscalation``) -------------------------------------------

def not_wider(requested: str, effective: str) -> str:
    return f'sandbox escalation to "{requested}" is not strictly wider than this call\'s current "{effective}" mode'


def no_approver(requested: str) -> str:
    return f'sandbox escalation to "{requested}" requires approval, but no approval service is composed'


def no_agent(requested: str) -> str:
    return f'sandbox escalation to "{requested}" requires approval, but the call has no agent to route it through'


def approval_rejected(requested: str) -> str:
    return f'the user rejected escalating this operation to "{requested}"'


def approval_cancelled(requested: str) -> str:
    return f'approval for escalating to "{requested}" was cancelled'


def approval_unavailable(requested: str) -> str:
    return f'sandbox escalation to "{requested}" requires approval, but no approval channel is available'


def escalation_reason(requested: str, justification: str) -> str:
    """The approval request's ``reason``: ``escalate sandbox to <mode>: <justification>``."""
    return f"escalate sandbox to {requested}: {justification}"


# -- the ``sandbox:policy`` system-prompt context (reference sandbox-policy, order 110) ----------

def policy_context(mode: SandboxMode, roots: Sequence[str], *, every_root: bool = False) -> str:
    """The standing-policy sentence for the system prompt.

    :param roots: the workspace roots (display paths); the reference names one (the session
        workspace, ``JSON.stringify``); ``every_root`` (deviation X3) names each, joined by ``, ``
    """
    if mode == "read-only":
        return (
            "Current DSH file policy: read-only. Any available operation enforced by the DSH file sandbox cannot "
            "modify files in the standing mode. Do not refuse a required modification from this policy alone: try "
            "an available tool normally and follow any denial and escalation guidance it returns."
        )
    if mode == "workspace-write":
        shown = roots if every_root else roots[:1]
        named = ", ".join(json.dumps(r, ensure_ascii=False) for r in shown)
        return (
            "Current DSH file policy: workspace-write. Any available operation enforced by the DSH file sandbox may "
            f"modify files under the session workspace: {named}. Some platform temporary areas may also be writable."
        )
    return (
        "Current DSH file policy: danger-full-access. The DSH file sandbox does not restrict file modifications by "
        "available operations."
    )
