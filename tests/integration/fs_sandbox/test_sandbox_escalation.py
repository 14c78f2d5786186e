"""Escalation and approval through the registry (docs/SANDBOX.md; docs/design/SANDBOX.md §1.4,
§1.5, §7.4, §8): the schema fields only under a sandbox, granted / rejected / cancelled /
unavailable / absent / no session, narrower, equal and unknown modes, the pairing errors, one
approval per patch (X2), X1 without a sandbox. Every non-grant leaves the files as they were and
stamps nothing (the next call runs in the standing mode again)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from sandboxkit import Approvals, base, snapshot  # noqa: F401  (fixture)

import dsh_fs
from dsh_fs import AbortSignal, Session
from dsh_fs.tool_common.sandbox_texts import denial_marker, escalation_hint

pytestmark = pytest.mark.anyio

WIDEN = {"sandbox_permissions": "danger-full-access", "justification": "The user asked to fix this file."}


def ctx_for(base: Path, mode: str | None = "workspace-write", approval: Any = None, **kw: Any) -> Any:
    return dsh_fs.create_context(root=None, cwd=base / "ws", sandbox=mode, approval=approval, **kw)


def write_args(base: Path, **extra: Any) -> dict[str, Any]:
    return {"file_path": str(base / "out" / "o.txt"), "content": "new", **extra}


def schema(ctx: Any, name: str) -> dict[str, Any]:
    return next(s for s in ctx.tools.schemas() if s["name"] == name)["parameters"]


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_the_fields_are_advertised_only_under_a_sandbox(base: Path, profile: str) -> None:
    plain = dsh_fs.create_context(root=None, cwd=base / "ws", profile=profile, faces=["apply_patch"])
    assert list(schema(plain, "write")["properties"]) == ["file_path", "content"]
    assert list(schema(plain, "edit")["properties"]) == ["file_path", "old_string", "new_string", "replace_all"]
    for mode in ("read-only", "workspace-write", "danger-full-access"):
        ctx = ctx_for(base, mode, approval=Approvals(), profile=profile, faces=["apply_patch", "str_replace_editor"])
        props = schema(ctx, "write")["properties"]
        assert list(props) == ["file_path", "content", "sandbox_permissions", "justification"]
        assert list(schema(ctx, "edit")["properties"]) == [
            "file_path", "old_string", "new_string", "replace_all", "sandbox_permissions", "justification"]
        assert props["sandbox_permissions"] == {
            "type": "string",
            "description": "The wider sandbox mode this file operation needs. Only valid as a one-shot retry of an "
                           "operation the sandbox just denied; requires justification and user approval.",
            "enum": ["workspace-write", "danger-full-access"]}
        assert props["justification"] == {
            "type": "string",
            "description": "Required with sandbox_permissions: one sentence for the user explaining why this exact "
                           "file operation needs the wider access."}
        assert schema(ctx, "write")["required"] == ["file_path", "content"]
        assert "sandbox_permissions" not in schema(ctx, "str_replace_editor")["properties"]
        patch_props = schema(ctx, "apply_patch")["properties"]
        assert ("sandbox_permissions" in patch_props) is (profile == "default")  # X2
    assert schema(ctx_for(base, None, profile=profile), "write") == schema(plain, "write")


async def test_granted_once_then_the_standing_mode_again(base: Path) -> None:
    approvals = Approvals("allowed-once")
    ctx = ctx_for(base, approval=approvals)
    session = Session(cwd=base / "ws")
    result = await ctx.tools.execute("write", write_args(base, **WIDEN), session=session, call_id="c1")
    assert not result.is_error, result.text
    assert (base / "out" / "o.txt").read_text() == "new"
    [request] = approvals.requests
    assert request.reason == "escalate sandbox to danger-full-access: The user asked to fix this file."
    assert (request.tool_name, request.call_id, request.requested_mode) == ("write", "c1", "danger-full-access")
    assert request.session is session and request.summary == f"Write {base / 'out' / 'o.txt'}"
    assert request.justification == WIDEN["justification"]
    again = await ctx.tools.execute("read", {"file_path": str(base / "out" / "o.txt")}, session=session)
    assert not again.is_error
    edit = await ctx.tools.execute("edit", {"file_path": str(base / "out" / "o.txt"), "old_string": "new",
                                            "new_string": "newer"}, session=session)
    assert edit.text == "Error: " + denial_marker("workspace-write") + "\n" + escalation_hint("operation")
    assert (edit.error.name, edit.error.code) == ("FsError", "FS_SANDBOX_DENIED")
    assert (base / "out" / "o.txt").read_text() == "new"


@pytest.mark.parametrize(("answer", "text"), [
    ("rejected", 'the user rejected escalating this operation to "danger-full-access"'),
    ("cancelled", 'approval for escalating to "danger-full-access" was cancelled'),
    ("unavailable", 'sandbox escalation to "danger-full-access" requires approval, but no approval channel is available'),
    ("yes", 'sandbox escalation to "danger-full-access" requires approval, but no approval channel is available'),
    (RuntimeError("approver down"),
     'sandbox escalation to "danger-full-access" requires approval, but no approval channel is available'),
    (None, 'sandbox escalation to "danger-full-access" requires approval, but no approval service is composed'),
])
async def test_a_non_grant_writes_nothing(base: Path, answer: Any, text: str) -> None:
    approvals = Approvals(answer) if answer is not None else None
    ctx = ctx_for(base, approval=approvals)
    before = snapshot(base)
    result = await ctx.tools.execute("write", write_args(base, **WIDEN), session=Session(cwd=base / "ws"))
    assert (result.text, result.error) == ("Error: " + text, None)
    assert snapshot(base) == before


async def test_no_session_means_no_agent_to_ask(base: Path) -> None:
    approvals = Approvals()
    result = await ctx_for(base, approval=approvals).tools.execute("write", write_args(base, **WIDEN))
    assert result.text == ('Error: sandbox escalation to "danger-full-access" requires approval, but the call has no '
                           "agent to route it through")
    assert approvals.requests == [] and not (base / "out" / "o.txt").exists()


async def test_an_abort_while_the_person_decides_is_cancelled(base: Path) -> None:
    approvals = Approvals("hang")
    ctx = ctx_for(base, approval=approvals)
    signal = AbortSignal()

    async def abort_soon() -> None:
        while not approvals.requests:
            await anyio.sleep(0.01)
        signal.abort()

    async with anyio.create_task_group() as tg:
        tg.start_soon(abort_soon)
        with anyio.fail_after(60):
            result = await ctx.tools.execute("write", write_args(base, **WIDEN), session=Session(cwd=base / "ws"),
                                             signal=signal)
    assert result.text == 'Error: approval for escalating to "danger-full-access" was cancelled'
    assert not (base / "out" / "o.txt").exists()


@pytest.mark.parametrize(("mode", "requested", "text"), [
    ("workspace-write", "workspace-write",
     'Error: sandbox escalation to "workspace-write" is not strictly wider than this call\'s current '
     '"workspace-write" mode'),
    ("danger-full-access", "workspace-write",
     'Error: sandbox escalation to "workspace-write" is not strictly wider than this call\'s current '
     '"danger-full-access" mode'),
    ("danger-full-access", "danger-full-access",
     'Error: sandbox escalation to "danger-full-access" is not strictly wider than this call\'s current '
     '"danger-full-access" mode'),
    ("read-only", "read-only",
     'Error: invalid arguments: "sandbox_permissions" must be one of ["workspace-write","danger-full-access"]'),
    ("read-only", "root",
     'Error: invalid arguments: "sandbox_permissions" must be one of ["workspace-write","danger-full-access"]'),
])
async def test_narrower_equal_and_unknown_modes_ask_nobody(base: Path, mode: str, requested: str, text: str) -> None:
    approvals = Approvals()
    ctx = ctx_for(base, mode, approval=approvals)
    args = write_args(base, sandbox_permissions=requested, justification="because")
    result = await ctx.tools.execute("write", args, session=Session(cwd=base / "ws"))
    assert result.text == text and approvals.requests == []
    assert not (base / "out" / "o.txt").exists()


@pytest.mark.parametrize(("extra", "text"), [
    ({"sandbox_permissions": "danger-full-access"}, "invalid escalation: sandbox_permissions requires a justification"),
    ({"justification": "why"}, "invalid escalation: justification is only valid together with sandbox_permissions"),
    ({"sandbox_permissions": "danger-full-access", "justification": "  "},
     "invalid justification: expected a non-empty sentence"),
    ({"sandbox_permissions": "danger-full-access", "justification": 3},
     'invalid arguments: "justification" must be a string'),
])
async def test_pairing_errors(base: Path, extra: dict[str, Any], text: str) -> None:
    ctx = ctx_for(base, approval=Approvals())
    for tool, args in [("write", write_args(base, **extra)),
                       ("edit", {"file_path": "a", "old_string": "a", "new_string": "b", **extra})]:
        result = await ctx.tools.execute(tool, args, session=Session(cwd=base / "ws"))
        assert result.text == "Error: " + text


async def test_an_unread_file_under_read_only_is_told_to_read_first(base: Path) -> None:
    """The intent gate runs before the fence, as in the reference: ``FS_NOT_OBSERVED``."""
    (base / "ws" / "a.txt").write_text("a")
    ctx = ctx_for(base, "read-only")
    result = await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "a", "new_string": "b"},
                                     session=Session(cwd=base / "ws"))
    assert result.error.code == "FS_NOT_OBSERVED"


async def test_one_approval_covers_a_whole_patch(base: Path) -> None:
    """X2: ``apply_patch`` takes the fields in the default profile; two outside files, one person asked."""
    approvals = Approvals()
    ctx = ctx_for(base, approval=approvals, faces=["apply_patch"])
    out = base / "out"
    text = f"*** Begin Patch\n*** Add File: {out}/a.txt\n+a\n*** Add File: {out}/b.txt\n+b\n*** End Patch\n"
    denied = await ctx.tools.execute("apply_patch", {"input": text}, session=Session(cwd=base / "ws"))
    assert denied.text.splitlines()[-2:] == [denial_marker("workspace-write"), escalation_hint("operation")]
    assert denied.text.splitlines()[0] == (
        f'Error: cannot write "{out}/a.txt": file access denied under workspace-write mode')
    assert denied.error.code == "FS_SANDBOX_DENIED" and not list(out.iterdir())
    result = await ctx.tools.execute("apply_patch", {"input": text, **WIDEN}, session=Session(cwd=base / "ws"))
    assert not result.is_error, result.text
    assert len(approvals.requests) == 1 and approvals.requests[0].tool_name == "apply_patch"
    assert (out / "a.txt").read_text() == "a\n" and (out / "b.txt").read_text() == "b\n"


async def test_the_patch_approval_names_every_file_it_changes(base: Path) -> None:
    """X2: the person approving a patch sees each file it adds, updates, moves or deletes, not
    only the model's justification (a patch that also writes elsewhere cannot hide it)."""
    approvals = Approvals("rejected")
    ctx = ctx_for(base, approval=approvals, faces=["apply_patch"])
    ws, out = base / "ws", base / "out"
    (ws / "m.txt").write_text("m\n")
    (ws / "u.txt").write_text("u\n")
    (out / "o.txt").write_text("keep")
    text = (f"*** Begin Patch\n*** Add File: {ws}/ok.txt\n+ok\n*** Update File: u.txt\n@@\n-u\n+U\n"
            f"*** Update File: m.txt\n*** Move to: {out}/moved.txt\n@@\n-m\n+M\n"
            f"*** Delete File: {out}/o.txt\n*** End Patch\n")
    before = snapshot(base)
    result = await ctx.tools.execute("apply_patch", {"input": text, **WIDEN}, session=Session(cwd=ws))
    assert result.text == 'Error: the user rejected escalating this operation to "danger-full-access"'
    assert snapshot(base) == before
    [request] = approvals.requests
    assert request.summary == "\n".join([
        "apply_patch", f"A {ws}/ok.txt", f"M {ws}/u.txt", f"M {ws}/m.txt -> {out}/moved.txt", f"D {out}/o.txt"])


async def test_reference_profile_patch_has_no_escalation(base: Path) -> None:
    approvals = Approvals()
    ctx = ctx_for(base, approval=approvals, faces=["apply_patch"], profile="reference")
    out = base / "out"
    text = f"*** Begin Patch\n*** Add File: {out}/a.txt\n+a\n*** End Patch\n"
    result = await ctx.tools.execute("apply_patch", {"input": text, **WIDEN}, session=Session(cwd=base / "ws"))
    assert result.text.splitlines()[-1] == denial_marker("workspace-write")
    assert approvals.requests == [] and not (out / "a.txt").exists()


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_the_fields_without_a_sandbox(base: Path, profile: str) -> None:
    """The reference profile ignores the unadvertised keys (the spec's registry ignores unknown
    keys); the default profile refuses them with the reference's own text (X1)."""
    ctx = dsh_fs.create_context(root=None, cwd=base / "ws", profile=profile)
    result = await ctx.tools.execute("write", write_args(base, **WIDEN), session=Session(cwd=base / "ws"))
    if profile == "reference":
        assert not result.is_error and (base / "out" / "o.txt").read_text() == "new"
    else:
        assert result.text == ("Error: sandbox_permissions is not available in this composition (no sandboxing "
                               "filesystem to escalate)")
        assert result.error is None and not (base / "out" / "o.txt").exists()


async def test_approval_needs_a_sandbox(base: Path) -> None:
    with pytest.raises(ValueError, match="approval= needs sandbox="):
        dsh_fs.create_context(root=None, cwd=base / "ws", approval=Approvals())
    with pytest.raises(ValueError, match="unknown sandbox mode"):
        dsh_fs.create_context(root=None, cwd=base / "ws", sandbox="bogus")


@pytest.mark.parametrize("mode", ["read-only", "workspace-write", "danger-full-access"])
async def test_the_policy_prompt_section(base: Path, mode: str) -> None:
    """``sandbox:policy`` (order 110): the standing mode, the workspace named as JSON; left out of
    a tool server's instructions (the ``tool:`` sections) and absent without a sandbox."""
    from dsh_fs.tool_common.sandbox_texts import policy_context

    ws = str(base / "ws")
    ctx = dsh_fs.create_context(root=ws, sandbox=mode)
    section = next(s for s in ctx.system_prompt.sections() if s.name == "sandbox:policy")
    assert section.order == 110 and section.render() == policy_context(mode, [ws])  # type: ignore[arg-type]
    assert ctx.system_prompt.render().endswith(section.render())
    assert section.render() not in ctx.system_prompt.render(only="tool:")
    if mode == "workspace-write":
        assert f'under the session workspace: "{ws}".' in section.render()
    no_root = dsh_fs.create_context(root=None, cwd=ws, sandbox=mode)
    assert next(s for s in no_root.system_prompt.sections() if s.name == "sandbox:policy").render() == section.render()
    assert "sandbox:policy" not in dsh_fs.create_context(root=ws).system_prompt.names()
