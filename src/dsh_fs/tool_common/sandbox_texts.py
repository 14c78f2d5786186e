"""The sandbox escalation the tools offer: the two fields' texts, their pairing, the denial and
escalation markers, the approval texts and the ``sandbox:policy`` sentence (pure, I/O-free).

Follows the reference's ``fs-sandbox`` and ``tool-fs/src/sandbox.ts`` (``toninfo/deepseek-harness``
at ``48fb3b528b91c94ef429fc2bbc6b8e8f5157e7bb``; texts re-checked at ``261b726e0c6a8d1f4d8160f6538860efe5dccf9e``;
docs/SANDBOX.md): a one-time wider retry through ``sandbox_permissions`` + ``justification``
that a person approves. The modes themselves are ``dsh_fs.fs.sandbox``.

Every text below is the reference's, byte for byte (docs/design/SANDBOX.md §1.3–§1.6).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.errors import ToolInputError
from ..fs.sandbox import SandboxMode

__all__ = (
    "ESCALATION_TARGETS",
    "JUSTIFICATION_DESCRIPTION",
    "NOT_AVAILABLE",
    "SANDBOX_PERMISSIONS_DESCRIPTION",
    "approval_cancelled",
    "approval_rejected",
    "approval_unavailable",
    "check_escalation_args",
    "denial_marker",
    "escalation_hint",
    "escalation_reason",
    "no_agent",
    "no_approver",
    "not_wider",
    "policy_context",
)

ESCALATION_TARGETS: tuple[SandboxMode, ...] = ("workspace-write", "danger-full-access")
"""the modes a call may ask for (the ``sandbox_permissions`` enum)"""

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
