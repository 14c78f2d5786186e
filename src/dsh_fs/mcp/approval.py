"""Sandbox escalations approved by the person at the MCP client, through elicitation
(docs/SANDBOX.md; docs/design/SANDBOX.md §6).

``server.call_tool`` keeps the request's ``ServerRequestContext`` in ``REQUEST`` while the call
runs; ``approve_by_elicitation`` (the ``approval`` callback ``options.build_context`` composes
under ``--sandbox``) sends ``elicitation/create`` (form mode, an empty form: the person accepts,
declines or cancels) related to that request, with the message ``<reason>\\n<summary>``
(the reason as ``fs_sandbox.approval.one_line``: the model's justification cannot fake a line;
``escalate sandbox to <mode>: <justification>`` and the call's title, e.g. ``Write /w/a.txt``).

``accept`` → ``allowed-once``, ``decline`` → ``rejected``, ``cancel`` → ``cancelled``. A client
without the ``elicitation`` capability, a 2026-07-28 connection (elicitation there is an
``InputRequiredResult`` round trip: not built), no back channel, an error answer or a malformed
one → ``unavailable``. No server-side timeout: the person decides; the call's
``notifications/cancelled`` aborts it (``cancelled``, ``fs_sandbox.approval.ask``).

No SDK import at module level (``dsh-fs mcp`` answers ``initialize`` before importing it, M2).
"""

from __future__ import annotations

import contextvars
from typing import Any

from ..fs_sandbox.approval import ApprovalOutcome, ApprovalRequest, one_line

__all__ = ("REQUEST", "STATELESS_PROTOCOL", "approve_by_elicitation")

REQUEST: contextvars.ContextVar[Any] = contextvars.ContextVar("dsh_fs_mcp_request", default=None)
"""the ``ServerRequestContext`` of the ``tools/call`` being run (``None`` outside one)"""

STATELESS_PROTOCOL = "2026-07-28"
"""the first protocol version whose server-to-client requests are ``InputRequiredResult`` round trips"""

_OUTCOMES: dict[str, ApprovalOutcome] = {"accept": "allowed-once", "decline": "rejected", "cancel": "cancelled"}


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
    if str(rctx.protocol_version) >= STATELESS_PROTOCOL:
        return "unavailable"
    try:
        result = await session.elicit_form(one_line(request.reason) + "\n" + request.summary,
                                           {"type": "object", "properties": {}},
                                           related_request_id=rctx.request_id)
    except Exception:  # MCPError (an error answer), NoBackChannelError, a validation error
        return "unavailable"
    return _OUTCOMES.get(getattr(result, "action", None), "unavailable")  # type: ignore[arg-type]
