"""Sandbox escalations approved by the person at the MCP client, through elicitation
(docs/SANDBOX.md; docs/design/SANDBOX.md §6).

``server.call_tool`` keeps the request's ``ServerRequestContext`` in ``REQUEST`` while the call
runs; ``approve_by_elicitation`` (the ``approval`` callback ``options.build_context`` composes
under ``--sandbox``) sends ``elicitation/create`` (form mode, an empty form: the person accepts,
declines or cancels) related to that request, with the message ``<reason>\\n<summary>``
(``ApprovalRequest.message``: the reason as ``fs_sandbox.approval.one_line``, so the model's
justification cannot fake a line, and at most ``REASON_SHOWN_MAX`` characters of it, cut with a
note, so it cannot push the files out of sight;
``escalate sandbox to <mode>: <justification>``, then each file the call changes by its real
place, e.g. ``Write /w/.git/config`` for the model's ``docs/config``: ``fs_sandbox.changes``).

``accept`` → ``allowed-once``, ``decline`` → ``rejected``, ``cancel`` → ``cancelled``. A client
without the ``elicitation`` capability, no back channel, an error answer or a malformed
one → ``unavailable``. No server-side timeout: the person decides; the call's
``notifications/cancelled`` aborts it (``cancelled``, ``fs_sandbox.approval.ask``).

A 2026-07-28 request (stateless: no server-to-client requests) asks through the protocol's
multi-round-trip flow (SEP-2322): ``server.call_tool`` keeps the call in ``ROUND``; the first
round records the same ``elicitation/create`` as an input request (key ``APPROVAL_KEY``) and the
call answers ``InputRequiredResult`` instead of its result (nothing ran: approval comes before
any change); the client asks the person and retries the call with ``input_responses`` and the
echoed ``request_state``, a MAC of the tool name, the arguments and the message under a key of
this process and a nonce of the question, so an answer counts only for the very call it was
asked about, and only once (``allowed-once``: a forged, stale, foreign or replayed state →
``unavailable``; the last ``SPENT_MAX`` questions are remembered).

No SDK import at module level (``dsh-fs mcp`` answers ``initialize`` before importing it, M2).
"""

from __future__ import annotations

import contextvars
import hashlib
import hmac
import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..fs_sandbox.approval import ApprovalOutcome, ApprovalRequest

__all__ = ("APPROVAL_KEY", "REQUEST", "ROUND", "Round", "STATELESS_PROTOCOL", "approve_by_elicitation", "can_elicit")

REQUEST: contextvars.ContextVar[Any] = contextvars.ContextVar("dsh_fs_mcp_request", default=None)
"""the ``ServerRequestContext`` of the ``tools/call`` being run (``None`` outside one)"""

STATELESS_PROTOCOL = "2026-07-28"
"""the first protocol version whose server-to-client requests are ``InputRequiredResult`` round trips"""

_OUTCOMES: dict[str, ApprovalOutcome] = {"accept": "allowed-once", "decline": "rejected", "cancel": "cancelled"}

APPROVAL_KEY = "dsh-fs/approval"
"""the key of the approval's elicitation in ``InputRequiredResult.input_requests``"""

_EMPTY_FORM: dict[str, Any] = {"type": "object", "properties": {}}
_STATE_KEY = secrets.token_bytes(32)
"""this process's key of ``request_state`` (a restarted server asks again)"""


@dataclass(slots=True)
class Round:
    """One ``tools/call`` of a 2026-07-28 request, as ``server.call_tool`` keeps it in ``ROUND``.

    :param name: the tool called
    :param arguments: its arguments as sent
    :param responses: the request's ``input_responses`` (``None``: the first round)
    :param state: the request's ``request_state`` as echoed
    """

    name: str
    arguments: Any
    responses: Mapping[str, Any] | None
    state: str | None
    pending: Any = None
    """the ``InputRequiredResult`` to answer instead of the call's result (set by the approval)"""

    def seal(self, message: str, nonce: str | None = None) -> str:
        """``request_state`` for asking ``message`` about this call: ``<nonce>.<hex
        HMAC-SHA256 of the nonce, the tool name, the arguments and the message>``.

        :param nonce: the question's nonce (``None``: a new one, for a first round)
        """
        nonce = secrets.token_hex(16) if nonce is None else nonce
        text = json.dumps([nonce, self.name, self.arguments, message], sort_keys=True, default=repr)
        mac = hmac.new(_STATE_KEY, text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
        return f"{nonce}.{mac}"


class _Spent:
    """The nonces of the answers already counted (this process), so that one answer approves
    one call (``allowed-once``): the same ``request_state`` sent again is no approval. At most
    ``SPENT_MAX`` are kept; past that the oldest is forgotten, and so is every question asked
    before it: a state whose nonce was issued before the oldest kept one is refused too."""

    def __init__(self) -> None:
        self._issued: dict[str, int] = {}
        self._spent: dict[str, None] = {}
        self._counter = 0
        self._floor = 0  # questions issued before this count are refused

    def issue(self, state: str) -> str:
        self._counter += 1
        self._issued[state.partition(".")[0]] = self._counter
        while len(self._issued) > SPENT_MAX:
            oldest = next(iter(self._issued))
            self._floor = self._issued.pop(oldest) + 1
            self._spent.pop(oldest, None)
        return state

    def take(self, nonce: str) -> bool:
        """Count the answer to the question ``nonce``: ``False`` when it was counted already,
        never issued here, or forgotten."""
        issued = self._issued.get(nonce)
        if issued is None or issued < self._floor or nonce in self._spent:
            return False
        self._spent[nonce] = None
        return True


SPENT_MAX = 4096
"""the most approval questions of 2026-07-28 requests remembered (``_Spent``)"""

_SPENT = _Spent()


ROUND: contextvars.ContextVar[Round | None] = contextvars.ContextVar("dsh_fs_mcp_round", default=None)
"""the call being run when its request is 2026-07-28 (``None`` otherwise)"""


def _in_rounds(message: str) -> ApprovalOutcome:
    """The multi-round-trip approval (module docstring): the person's answer of a later round,
    or, in the first, the question recorded in ``ROUND`` (``cancelled`` for the call itself,
    whose result the server replaces by the ``InputRequiredResult``)."""
    from mcp import types  # the SDK is loaded: this runs inside a request

    current = ROUND.get()
    if current is None:
        return "unavailable"
    answer = (current.responses or {}).get(APPROVAL_KEY)
    if answer is None:
        ask = types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=_EMPTY_FORM))
        sealed = _SPENT.issue(current.seal(message))
        current.pending = types.InputRequiredResult(input_requests={APPROVAL_KEY: ask}, request_state=sealed)
        return "cancelled"
    state = current.state
    if not isinstance(state, str) or "." not in state:
        return "unavailable"
    nonce = state.partition(".")[0]
    if not hmac.compare_digest(state, current.seal(message, nonce)) or not _SPENT.take(nonce):
        return "unavailable"
    action = answer.get("action") if isinstance(answer, Mapping) else getattr(answer, "action", None)
    return _OUTCOMES.get(action, "unavailable")  # type: ignore[arg-type]


def can_elicit(rctx: Any) -> bool:
    """Whether the client of the request context ``rctx`` declared ``elicitation`` (the person
    can be asked); ``False`` outside a request (``None``: the lean and early paths serve only
    clients without it under a sandbox)."""
    if rctx is None:
        return False
    capabilities = rctx.session.client_capabilities
    return capabilities is not None and capabilities.elicitation is not None


def _reachable() -> bool:
    """``approve_by_elicitation.reachable``: whether the call being run can ask its person
    (``fs_sandbox.approval.reachable``; D37 offers no escalation otherwise)."""
    return can_elicit(REQUEST.get())


async def approve_by_elicitation(request: ApprovalRequest) -> ApprovalOutcome:
    """Ask the person at the client whether ``request`` may run once in the wider mode.

    :return: ``allowed-once`` / ``rejected`` / ``cancelled`` as they answered; ``unavailable``
        when they cannot be asked (see the module docstring); never raises for a client failure
    """
    rctx = REQUEST.get()
    if not can_elicit(rctx):
        return "unavailable"
    session = rctx.session
    message = request.message
    if str(rctx.protocol_version) >= STATELESS_PROTOCOL:
        return _in_rounds(message)
    try:
        result = await session.elicit_form(message, _EMPTY_FORM, related_request_id=rctx.request_id)
    except Exception:  # MCPError (an error answer), NoBackChannelError, a validation error
        return "unavailable"
    return _OUTCOMES.get(getattr(result, "action", None), "unavailable")  # type: ignore[arg-type]


approve_by_elicitation.reachable = _reachable  # type: ignore[attr-defined]
