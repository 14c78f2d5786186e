"""Approval of a sandbox escalation: the request a person sees and the ordered checks before
anything runs (the reference's ``approveEscalation``, docs/design/SANDBOX.md §1.5).

Library: ``create_context(sandbox=…, approval=callback)`` with ``callback`` an
``async (ApprovalRequest) -> "allowed-once" | "rejected" | "cancelled" | "unavailable"``.
No callback: every escalation is refused. A callback that raises or answers anything else counts
as ``"unavailable"``; an abort of the call's signal while it waits, as ``"cancelled"``. A
callback may also say whether it can ask anybody right now (a ``reachable()`` attribute:
``reachable`` below), so that no escalation is offered that cannot be granted (D37). The
reference's ``approval/asked``/``approval/decided`` audit events are not ported (no turn log).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

from ..core.session import Session
from ..core.signal import AbortSignal, run_under_signal
from ..fs.sandbox import (
    SandboxMode,
    approval_cancelled,
    approval_rejected,
    approval_unavailable,
    escalation_reason,
    no_agent,
    no_approver,
    not_wider,
    strictly_wider,
)

__all__ = ("ApprovalOutcome", "ApprovalRequest", "Approver", "EscalationRefused", "approve_escalation", "ask",
           "one_line", "reachable")

_SHOWN_ESCAPED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_LAYOUT = frozenset([0x061C, 0x200E, 0x200F, 0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])


def one_line(text: str) -> str:
    """``text`` as one line for a person to read: each control character (C0, DEL, C1), line or
    paragraph separator and bidirectional mark or override written as an escape (``\\n``,
    ``\\r``, ``\\t``, else ``\\uXXXX``), so model-written text cannot fake or hide a line of
    an approval prompt. Pure; the identity on ordinary text."""
    out = []
    for ch in text:
        code = ord(ch)
        if code < 0x20 or 0x7F <= code < 0xA0 or code in _LAYOUT:
            out.append(_SHOWN_ESCAPED.get(ch) or f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


ApprovalOutcome = Literal["allowed-once", "rejected", "cancelled", "unavailable"]
OUTCOMES: tuple[str, ...] = get_args(ApprovalOutcome)


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequest:
    """What the approval callback is asked about."""

    tool_name: str
    call_id: str
    reason: str
    """exactly ``escalate sandbox to <mode>: <justification>`` (the reference's ``reason``)"""
    requested_mode: SandboxMode
    justification: str
    session: Session
    """the calling session (the reference's ``agent``)"""
    summary: str
    """what the call does, in the tool's own words (``Write /w/a.txt``): the real path, not only
    the model's justification (ours, not the reference's); each line is ``one_line``"""
    signal: AbortSignal | None = None


Approver = Callable[[ApprovalRequest], Awaitable[str]]


def reachable(approver: Approver | None) -> bool:
    """Whether ``approver`` can ask a person now: ``False`` for no approver; its ``reachable()``
    when it has one (the MCP server's asks only a client that declared elicitation); else
    ``True``."""
    if approver is None:
        return False
    probe = getattr(approver, "reachable", None)
    return True if probe is None else bool(probe())


class EscalationRefused(Exception):
    """An escalation that is not granted: a *plain* error (reported without ``{name, code}``, as
    the reference's plain ``Error``), raised before anything ran."""


async def ask(approver: Approver, request: ApprovalRequest) -> ApprovalOutcome:
    """``approver(request)``, settled: its answer when it is one of the four outcomes;
    ``"unavailable"`` when it raises or answers anything else; ``"cancelled"`` when
    ``request.signal`` is aborted first (the callback is then cancelled)."""
    outcome = await run_under_signal(lambda: approver(request), signal=request.signal)
    if outcome.aborted:
        return "cancelled"
    value: Any = outcome.value
    if outcome.error is not None or not isinstance(value, str) or value not in OUTCOMES:
        return "unavailable"
    return value  # type: ignore[return-value]


async def approve_escalation(
    requested: SandboxMode,
    justification: str,
    effective: SandboxMode,
    *,
    approver: Approver | None,
    session: Session | None,
    tool_name: str,
    call_id: str,
    summary: str,
    signal: AbortSignal | None = None,
) -> SandboxMode:
    """The mode one call may run in, or a refusal — checked in the reference's order.

    :return: ``requested``, granted for this one call (``allowed-once``)
    :raises EscalationRefused: ``sandbox escalation to "<m>" is not strictly wider than this
        call's current "<e>" mode`` (nobody is asked); ``… requires approval, but no approval
        service is composed``; ``… but the call has no agent to route it through`` (no session);
        ``the user rejected escalating this operation to "<m>"``; ``approval for escalating to
        "<m>" was cancelled``; ``… requires approval, but no approval channel is available``
    """
    if not strictly_wider(requested, effective):
        raise EscalationRefused(not_wider(requested, effective))
    if approver is None:
        raise EscalationRefused(no_approver(requested))
    if session is None:
        raise EscalationRefused(no_agent(requested))
    request = ApprovalRequest(tool_name=tool_name, call_id=call_id, reason=escalation_reason(requested, justification),
                              requested_mode=requested, justification=justification, session=session,
                              summary=summary, signal=signal)
    decided = await ask(approver, request)
    if decided == "allowed-once":
        return requested
    if decided == "rejected":
        raise EscalationRefused(approval_rejected(requested))
    if decided == "cancelled":
        raise EscalationRefused(approval_cancelled(requested))
    raise EscalationRefused(approval_unavailable(requested))
