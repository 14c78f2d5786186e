"""The sandbox at the tool layer: the escalation fields, the per-call policy and the denial texts
(the reference's ``FsSandboxSurface``, ``tool-fs/src/sandbox.ts``; docs/design/SANDBOX.md §1.4, §3.2).

No provider import: a sandboxing provider is known by its ``sandbox_mode`` (set) and its
``for_call(mode, cwd=)`` and ``approval`` members (``filesystem.SandboxedFileSystem``).

Every executor that mutates calls ``call_fs`` first (before it resolves a path, as the
reference does), then uses the provider it returns for the whole call, and maps a
``FS_SANDBOX_DENIED`` through ``map_denial``. The fence itself is in the provider wrapper
(``filesystem.SandboxedFileSystem``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.context import Context
from ..core.errors import ToolInputError
from ..core.schema import Param
from ..core.session import ToolExecution
from ..fs.errors import FsError, FsErrorCode
from ..fs.filesystem import FileSystem
from ..tool_common.sandbox_texts import (
    ESCALATION_TARGETS,
    JUSTIFICATION_DESCRIPTION,
    NOT_AVAILABLE,
    SANDBOX_PERMISSIONS_DESCRIPTION,
    check_escalation_args,
    denial_marker,
    escalation_hint,
)
from ..tool_common.switches import ToolSwitches
from .approval import approve_escalation, reachable
from .changes import Change, describe

__all__ = ("call_fs", "confines", "escalation_offered", "escalation_params", "map_denial", "with_escalation",
           "without_escalation")


def confines(fs: object) -> bool:
    """Whether ``fs`` is a sandboxing provider (its ``sandbox_mode`` is set)."""
    return getattr(fs, "sandbox_mode", None) is not None


def escalation_params() -> dict[str, Param]:
    """``sandbox_permissions`` and ``justification``, the reference's schema fields (neither
    required), added after a mutating tool's own parameters under a sandbox."""
    return {
        "sandbox_permissions": Param(
            type="string", enum=ESCALATION_TARGETS, description=SANDBOX_PERMISSIONS_DESCRIPTION),
        "justification": Param(type="string", description=JUSTIFICATION_DESCRIPTION),
    }


def escalation_offered(fs: object, profile: object = None) -> bool:
    """Whether a mutating tool offers escalation now: ``fs`` confines, and (D37, default
    profile) an approval callback is composed that can ask a person now
    (``approval.reachable``: an MCP client without elicitation cannot be asked). The reference
    offers it under every sandbox.

    :param profile: the deployment's profile (``None``: default)
    """
    if not confines(fs):
        return False
    if not ToolSwitches.of(profile).escalation_only_when_grantable:  # type: ignore[arg-type]
        return True
    return reachable(getattr(fs, "approval", None))


def with_escalation(params: Mapping[str, Param], fs: object, profile: object = None) -> dict[str, Param]:
    """``params`` plus ``escalation_params()`` when ``fs`` confines (D37, default profile: and
    has an approval callback), else ``params`` unchanged. A callback that cannot ask some
    callers (``approval.reachable``) still gets the fields here: the surface that knows the
    caller leaves them out for it (``without_escalation``)."""
    if not confines(fs):
        return dict(params)
    if ToolSwitches.of(profile).escalation_only_when_grantable and getattr(fs, "approval", None) is None:  # type: ignore[arg-type]
        return dict(params)  # D37: nobody could ever grant it
    return {**params, **escalation_params()}


def without_escalation(schemas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """D37: the registry's ``schemas`` (``[{name, description, parameters}]``) with
    ``sandbox_permissions`` and ``justification`` left out of every tool's parameters, for a
    caller no approval can reach (new dicts where something was left out; the rest as given)."""
    out = []
    for schema in schemas:
        properties = schema["parameters"].get("properties", {})
        if "sandbox_permissions" not in properties and "justification" not in properties:
            out.append(schema)
            continue
        kept = {k: v for k, v in properties.items() if k not in ("sandbox_permissions", "justification")}
        out.append({**schema, "parameters": {**schema["parameters"], "properties": kept}})
    return out


async def call_fs(ctx: Context, tool_name: str, args: Mapping[str, Any], execution: ToolExecution, *,
                  escalates: bool, changes: Sequence[Change] = (), header: str | None = None,
                  step_name: str | None = None) -> FileSystem:
    """The provider one mutating call uses, with its policy bound; stored on ``execution.fs``.
    With a history (``create_context(history=True)``), the view records the call's mutations as
    one step of the session's history (docs/HISTORY.md).

    Under a sandbox: the escalation fields are checked (``check_escalation_args``); without them
    the call runs in the standing mode; with them, ``approve_escalation`` asks the composed
    approval callback before anything runs, and the view runs in the granted mode. A tool that
    ``escalates`` resolves relative paths against the canonical session cwd, as the reference's
    ``write``/``edit`` do (``policy.workspaceRoot``), except under X4 (the cwd as spelled). Without a
    sandbox: ``ctx.fs``; the fields are ignored (REFERENCE-SPEC: unknown keys are) except under
    deviation X1, which refuses them.

    :param tool_name: the calling tool (named in the approval request)
    :param escalates: whether this tool takes the escalation fields (``write``, ``edit``;
        ``apply_patch`` under X2); a tool that does not ignores them and runs in the standing mode
    :param changes: the files the call will change, as the model named them: the approval
        request's ``summary`` names each by its real place (``changes.describe``, resolved
        through the call's view just before the person is asked; X6 refuses a ``..`` after a
        missing name or a non-directory there)
    :param header: the summary's first line (``apply_patch``); default: none, or the tool's name
        when ``changes`` is empty
    :param step_name: the tool's name in the history when ``tool_name`` is not it (an editor face
        names its face here)
    :raises ToolInputError: the pairing errors; X1's ``not available`` text
    :raises EscalationRefused: an escalation not granted (``approval.approve_escalation``)
    :raises FsError: X6's refusal, or a changed path the provider cannot resolve (before
        anyone is asked)
    """
    fs = ctx.fs
    switches = ToolSwitches.of(ctx.profile)
    if not confines(fs):
        if escalates and switches.escalation_needs_sandbox:  # X1
            requested, justification = check_escalation_args(args)
            if requested is not None and justification is not None:
                raise ToolInputError(NOT_AVAILABLE)
        return _recorded(fs, step_name or tool_name, execution)
    mode = fs.sandbox_mode
    base = None
    if escalates and not switches.sandbox_cwd_as_spelled:  # X4 off: the reference
        base = await fs.canonical_base(execution.cwd, signal=execution.signal)
    if escalates:
        requested, justification = check_escalation_args(args)
        if requested is not None and justification is not None:
            standing = fs.for_call(mode, cwd=execution.cwd, base=base)

            async def summary() -> str:
                return await describe(standing, changes, cwd=execution.cwd, header=header or (
                    None if changes else tool_name), dotdot_checked=switches.dotdot_checked, signal=execution.signal)

            mode = await approve_escalation(
                requested, justification, mode, approver=fs.approval, session=execution.session,
                tool_name=tool_name, call_id=execution.call_id, summary=summary, signal=execution.signal)
    view = fs.for_call(mode, cwd=execution.cwd, base=base)
    execution.fs = view
    return _recorded(view, step_name or tool_name, execution)


def _recorded(fs: Any, tool_name: str, execution: ToolExecution) -> FileSystem:
    """``fs``, or (a provider that records the history, ``history.recorder.HistoryFileSystem``)
    its view recording this call's mutations as one step of the session's history, stored on
    ``execution.fs``; a call without a session is recorded nowhere."""
    bind = getattr(fs, "for_tool_call", None)
    if bind is None or execution.session is None:
        return fs  # type: ignore[no-any-return]
    from ..history.api import owner_of  # the session's history owner (an HTTP token's: http:<agent>)

    view = bind(tool_name, owner_of(execution.session), execution.call_id)
    execution.fs = view
    return view  # type: ignore[no-any-return]


def map_denial(err: FsError, fs: object, *, hint: bool) -> FsError:
    """``err`` as the model sees it: a ``FS_SANDBOX_DENIED`` becomes the marker
    ``[sandbox: file access denied under <mode> mode]`` (the mode of ``fs``, the call's view),
    plus the escalation hint on a second line when the tool takes the fields; any other error
    is ``err`` itself."""
    if err.code != FsErrorCode.SANDBOX_DENIED:
        return err
    mode = getattr(fs, "sandbox_mode", None) or "read-only"
    text = denial_marker(mode) + ("\n" + escalation_hint("operation") if hint else "")
    return FsError(text, FsErrorCode.SANDBOX_DENIED, cause=err)
