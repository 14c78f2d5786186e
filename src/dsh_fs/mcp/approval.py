"""Sandbox escalations approved by the person at the MCP client, through elicitation
(docs/SANDBOX.md; docs/design/SANDBOX.md §6).

``server.call_tool`` keeps the request's ``ServerRequestContext`` in ``REQUEST`` while the call
runs; ``approve_by_elicitation`` (the ``approval`` callback ``options.build_context`` composes
under ``--sandbox``) sends ``elicitation/create`` (form mode, an empty form: the person accepts,
declines or cancels) related to that request, with the message ``<reason>\\n<summary>``
(the reason as ``fs_sandbox.approval.one_line``: the model's justification cannot fake a line;
``escalate sandbox to <mode>: <justification>`` and the call's title, e.g. ``Write /w/a.txt``).

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
this process, so an answer counts only for the very call it was asked about (a forged,
stale or foreign state → ``unavailable``).

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

from ..fs_sandbox.approval import ApprovalOutcome, ApprovalRequest, one_line

__all__ = ("APPROVAL_KEY", "REQUEST", "ROUND", "Round", "STATELESS_PROTOCOL", "approve_by_elicitation")

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

    def seal(self, message: str) -> str:
        """``request_state`` for asking ``message`` about this call (hex HMAC-SHA256)."""
        text = json.dumps([self.name, self.arguments, message], sort_keys=True, default=repr)
        return hmac.new(_STATE_KEY, text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


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
    sealed = current.seal(message)
    answer = (current.responses or {}).get(APPROVAL_KEY)
    if answer is None:
        ask = types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=_EMPTY_FORM))
        current.pending = types.InputRequiredResult(input_requests={APPROVAL_KEY: ask}, request_state=sealed)
        return "cancelled"
    if current.state is None or not hmac.compare_digest(current.state, sealed):
        return "unavailable"
    action = answer.get("action") if isinstance(answer, Mapping) else getattr(answer, "action", None)
    return _OUTCOMES.get(action, "unavailable")  # type: ignore[arg-type]


async def approve_by_elicitation(request: ApprovalRequest) -> ApprovalOutcome:
    """Ask the person at the client whether ``request`` may run once in the wider mode.

    :return: ``allowed-once`` / ``rejected`` / ``cancelled`` as they answered; ``unavailable``
        when they cannot be asked (see the module docstring); never raises for a client failure
    """
    rctx = REQUEST.get()
    if rctx is None:
        return "unavailable"
    session = rctx.session
    capabilities = session.client_capabilities
    if capabilities is None or capabilities.elicitation is None:
        return "unavailable"
    message = one_line(request.reason) + "\n" + request.summary
    if str(rctx.protocol_version) >= STATELESS_PROTOCOL:
        return _in_rounds(message)
    try:
        result = await session.elicit_form(message, _EMPTY_FORM, related_request_id=rctx.request_id)
    except Exception:  # MCPError (an error answer), NoBackChannelError, a validation error
        return "unavailable"
    return _OUTCOMES.get(getattr(result, "action", None), "unavailable")  # type: ignore[arg-type]
