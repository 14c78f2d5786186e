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
from ..tool_common.shown import is_hidden, unicode_escape
from ..fs.sandbox import SandboxMode, strictly_wider
from ..tool_common.sandbox_texts import (
    approval_cancelled,
    approval_rejected,
    approval_unavailable,
    escalation_reason,
    no_agent,
    no_approver,
    not_wider,
)

__all__ = ("ApprovalOutcome", "ApprovalRequest", "Approver", "EscalationRefused", "REASON_SHOWN_MAX",
           "approve_escalation", "ask", "one_line", "reachable", "shown_reason")

_SHOWN_ESCAPED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_BLANK_LOOKING = frozenset([0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2800, 0x3164, 0xFFA0])
"""characters outside ``Cf`` that show as nothing or as a blank (combining grapheme joiner, Hangul
fillers, Khmer inherent vowels, the Braille blank)"""


def _hidden_from_a_person(ch: str) -> bool:
    """A control, separator or format character (``tool_common.shown.is_hidden``: bidi marks, overrides
    and isolates, zero-width characters, U+2060, U+FEFF), a blank-looking letter
    (``_BLANK_LOOKING``), or a space other than U+0020 (no-break, ideographic, …)."""
    if ch == " ":
        return False
    return is_hidden(ch) or ord(ch) in _BLANK_LOOKING or ch.isspace()


def one_line(text: str) -> str:
    """``text`` as one line for a person to read, nothing in it hidden: each control character
    (C0, DEL, C1), line or paragraph separator, format character (bidi marks, embeddings,
    overrides and isolates, U+200B–U+200D, U+2060, U+FEFF, …), blank-looking letter (U+2800,
    U+3164, …) and space other than U+0020 is written as an escape (``\\n``, ``\\r``,
    ``\\t``, else ``\\uXXXX``, a UTF-16 pair beyond U+FFFF), and so is each U+0020 of a run
    of two or more and at either end, so model-written text cannot fake or hide a line of an
    approval prompt, nor push the rest of a path out of sight. Pure; the identity on ordinary
    text (words with single spaces)."""
    if (text.isprintable() and "  " not in text and not text.startswith(" ") and not text.endswith(" ")
            and _BLANK_LOOKING.isdisjoint(map(ord, text))):
        return text
    return "".join(_shown(text))


def _shown(text: str) -> list[str]:
    """``one_line``'s text of each character of ``text``, one piece a character."""
    out = []
    last = len(text) - 1
    for index, ch in enumerate(text):
        if ch == " ":
            alone = 0 < index < last and text[index - 1] != " " and text[index + 1] != " "
            out.append(" " if alone else "\\u0020")
        elif _hidden_from_a_person(ch):
            out.append(_SHOWN_ESCAPED.get(ch) or unicode_escape(ch))
        else:
            out.append(ch)
    return out


REASON_SHOWN_MAX = 500
"""the most characters of an escalation's reason (as ``one_line`` prints it) a person is shown
above the files the call will change (``shown_reason``)"""


def shown_reason(reason: str, limit: int = REASON_SHOWN_MAX) -> str:
    """``reason`` as a person is shown it above the files: ``one_line(reason)``, and when that is
    longer than ``limit`` characters, its first ``limit`` at most (never half an escape) then
    `` … [cut: <n> more characters]`` (``<n>``: the characters of ``reason`` not shown). The
    justification is the model's text: however long, it cannot push the files out of sight.
    Pure; reads at most ``limit + 1`` characters of ``reason``.

    :param limit: characters shown at most before the cut note (≥ 0)
    """
    shown = one_line(reason[: limit + 1])
    if len(shown) <= limit and len(reason) <= limit:
        return shown
    kept, used = [], 0
    for piece in _shown(reason[: limit + 1])[:limit]:
        if used + len(piece) > limit:
            break
        kept.append(piece)
        used += len(piece)
    return "".join(kept) + f" … [cut: {len(reason) - len(kept)} more characters]"


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
    """what the call does: ``Write /w/a.txt`` (``Edit``), or ``apply_patch`` then an ``A``, ``M``
    or ``D`` line per file; each file by its real place (``changes.describe``: the cwd, ``..`` and
    symlinks resolved), each line as ``one_line`` (ours, not the reference's)"""
    signal: AbortSignal | None = None

    @property
    def message(self) -> str:
        """What a person is asked: ``shown_reason(reason)`` (at most ``REASON_SHOWN_MAX``
        characters, cut with a note: a long justification never pushes the files down), then
        ``summary`` from the next line (the MCP server's elicitation message)."""
        return shown_reason(self.reason) + "\n" + self.summary


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
    summary: str | Callable[[], Awaitable[str]],
    signal: AbortSignal | None = None,
) -> SandboxMode:
    """The mode one call may run in, or a refusal — checked in the reference's order.

    :param summary: the request's ``summary``, or a coroutine function giving it, awaited only
        once the checks before asking have passed (it resolves the call's paths)
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
    if not isinstance(summary, str):
        summary = await summary()
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
