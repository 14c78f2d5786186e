"""The table test of the sandbox (docs/design/SANDBOX.md §7.3): mode × face-operation × target,
through the registry (and the Responses/Agents SDK patch operations, deepagents' backend), on
the real disk. The ``dsh-fs`` tool commands and MCP ``tools/call`` under ``--sandbox``:
tests/e2e/mcp/test_mcp_sandbox.py.

Modes: no sandbox, ``read-only``, ``workspace-write``, ``danger-full-access``. Targets: the
workspace (the session's cwd; the provider has no containment root, as in the reference), a
directory outside it, a platform temp area. Each row says whether bytes change: allowed → the
files are as the operation makes them; denied → ``FS_SANDBOX_DENIED`` with the mode's marker,
and every byte and stat below the base and the temp directory as before (a patch with one denied
file writes nothing, not even its allowed file).

Completeness guards (each fails when a new mutating path arrives without a row or the fence):
(a) every public ``FileSystem`` member is classified in ``fs_sandbox.filesystem.KINDS`` and each
``mutate`` member is overridden by the wrapper (its per-call views are the same class);
(b) every tool registered with all faces and images loaded, every editor ``command`` and every
patch operation kind has a row or is listed as read-only here;
(c) under ``read-only``, a ``RecordingFileSystem`` inside the wrapper sees no mutating call for
any row.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sandboxkit import Approvals, base, snapshot  # noqa: F401  (fixture)

import dsh_fs
from dsh_fs import FileSystem, Session
from dsh_fs.adapters.patch_operations import apply_operations
from dsh_fs.core.session import ToolExecution
from dsh_fs.faces import FACE_TOOLS
from dsh_fs.tool_common.sandbox_texts import denial_marker, escalation_hint
from dsh_fs.fs_memory import MemoryFileSystem
from dsh_fs.fs_sandbox.filesystem import KINDS, SandboxedFileSystem
from dsh_fs.patch import model as patch_model
from dsh_fs.testing.recording import RecordingFileSystem

pytestmark = pytest.mark.anyio


Outcome = tuple[bool, str, str | None]
"""(is_error, text, code)"""


@dataclass(frozen=True)
class Row:
    name: str
    tool: str
    pre: dict[str, str]
    """files in the target directory before the call"""
    call: Callable[[Any, Session, Path], Awaitable[Outcome]]
    post: dict[str, str | None]
    """the target directory's files after an allowed call (``None``: gone)"""
    reads: tuple[str, ...] = ()
    """files read first (the policy's read-before-change)"""
    command: str | None = None
    """the editor command or patch operation kind this row covers"""
    setup: Callable[[Any, Session, Path], Awaitable[None]] | None = None
    """run after ``reads``, before the files are compared: what the call needs that is not a file"""


def registry(tool: str, args: Callable[[Path], dict[str, Any]]) -> Callable[[Any, Session, Path], Awaitable[Outcome]]:
    async def call(ctx: Any, session: Session, d: Path) -> Outcome:
        result = await ctx.tools.execute(tool, args(d), session=session)
        return result.is_error, result.text, result.error.code if result.error else None
    return call


def patch(body: Callable[[Path], str]) -> Callable[[Any, Session, Path], Awaitable[Outcome]]:
    return registry("apply_patch", lambda d: {"input": "*** Begin Patch\n" + body(d) + "*** End Patch\n"})


def operations(ops: Callable[[Path], list[dict[str, Any]]]) -> Callable[[Any, Session, Path], Awaitable[Outcome]]:
    async def call(ctx: Any, session: Session, d: Path) -> Outcome:
        result = await apply_operations(ctx, ops(d), ToolExecution(session=session))
        return result.status == "failed", result.output, None
    return call


def deepagents(method: str, args: Callable[[Path], tuple[Any, ...]]) -> Callable[[Any, Session, Path], Awaitable[Outcome]]:
    """deepagents' ``BackendProtocol`` (``DshFsBackend``): its write/edit are the registry's.
    Host paths (``virtual_mode=False``): in virtual mode every path is below the project, so a
    target outside it could not be named."""
    async def call(ctx: Any, session: Session, d: Path) -> Outcome:
        from dsh_fs.adapters.deepagents import DshFsBackend

        result = await getattr(DshFsBackend(ctx, session=session, virtual_mode=False), method)(*args(d))
        return result.error is not None, result.error or "", None
    return call


AE, RE = "str_replace_based_edit_tool", "str_replace_editor"

ROWS = [
    Row("write create", "write", {}, registry("write", lambda d: {"file_path": str(d / "n.txt"), "content": "new\n"}),
        {"n.txt": "new\n"}),
    Row("write overwrite", "write", {"a.txt": "old\n"},
        registry("write", lambda d: {"file_path": str(d / "a.txt"), "content": "new\n"}), {"a.txt": "new\n"},
        reads=("a.txt",)),
    Row("edit", "edit", {"a.txt": "old\n"},
        registry("edit", lambda d: {"file_path": str(d / "a.txt"), "old_string": "old", "new_string": "new"}),
        {"a.txt": "new\n"}, reads=("a.txt",)),
    Row("patch add", "apply_patch", {}, patch(lambda d: f"*** Add File: {d}/n.txt\n+new\n"), {"n.txt": "new\n"},
        command="AddFile"),
    Row("patch update", "apply_patch", {"a.txt": "old\n"},
        patch(lambda d: f"*** Update File: {d}/a.txt\n@@\n-old\n+new\n"), {"a.txt": "new\n"}, reads=("a.txt",),
        command="UpdateFile"),
    Row("patch delete", "apply_patch", {"a.txt": "old\n"}, patch(lambda d: f"*** Delete File: {d}/a.txt\n"),
        {"a.txt": None}, reads=("a.txt",), command="DeleteFile"),
    Row("patch move", "apply_patch", {"a.txt": "old\n"},
        patch(lambda d: f"*** Update File: {d}/a.txt\n*** Move to: {d}/b.txt\n@@\n old\n"), {"a.txt": None, "b.txt": "old\n"},
        reads=("a.txt",), command="UpdateFile+move"),
    Row("patch move+change", "apply_patch", {"a.txt": "old\n"},
        patch(lambda d: f"*** Update File: {d}/a.txt\n*** Move to: {d}/b.txt\n@@\n-old\n+new\n"),
        {"a.txt": None, "b.txt": "new\n"}, reads=("a.txt",)),
    Row("patch two files, one in the target", "apply_patch", {},
        patch(lambda d: f"*** Add File: both.txt\n+ws\n*** Add File: {d}/n.txt\n+new\n"),
        {"n.txt": "new\n"}),
    Row("anthropic create", AE, {}, registry(AE, lambda d: {"command": "create", "path": str(d / "n.txt"),
                                                           "file_text": "new\n"}), {"n.txt": "new\n"},
        command="create"),
    Row("anthropic str_replace", AE, {"a.txt": "old\n"},
        registry(AE, lambda d: {"command": "str_replace", "path": str(d / "a.txt"), "old_str": "old", "new_str": "new"}),
        {"a.txt": "new\n"}, reads=("a.txt",), command="str_replace"),
    Row("anthropic insert", AE, {"a.txt": "old\n"},
        registry(AE, lambda d: {"command": "insert", "path": str(d / "a.txt"), "insert_line": 0,
                                "insert_text": "top\n"}), {"a.txt": "top\nold\n"}, reads=("a.txt",), command="insert"),
    Row("reference create", RE, {}, registry(RE, lambda d: {"command": "create", "path": str(d / "n.txt"),
                                                           "file_text": "new\n"}), {"n.txt": "new\n"},
        command="create"),
    Row("reference str_replace", RE, {"a.txt": "old\n"},
        registry(RE, lambda d: {"command": "str_replace", "path": str(d / "a.txt"), "old_str": "old", "new_str": "new"}),
        {"a.txt": "new\n"}, reads=("a.txt",), command="str_replace"),
    Row("reference insert", RE, {"a.txt": "old\n"},
        registry(RE, lambda d: {"command": "insert", "path": str(d / "a.txt"), "insert_line": 1, "new_str": "end"}),
        {"a.txt": "old\nend\n"}, reads=("a.txt",), command="insert"),
    Row("responses create_file", "apply_patch_call", {},
        operations(lambda d: [{"type": "create_file", "path": str(d / "n.txt"), "diff": "+new\n"}]), {"n.txt": "new"}),
    Row("agents SDK update with move_to", "apply_patch_call", {"a.txt": "old\n"},
        operations(lambda d: [{"type": "update_file", "path": str(d / "a.txt"), "diff": "@@\n-old\n+new\n",
                               "move_to": str(d / "b.txt")}]), {"a.txt": None, "b.txt": "new\n"}, reads=("a.txt",)),
    Row("responses delete_file", "apply_patch_call", {"a.txt": "old\n"},
        operations(lambda d: [{"type": "delete_file", "path": str(d / "a.txt")}]), {"a.txt": None}, reads=("a.txt",)),
]

async def edited_through_the_history(ctx: Any, session: Session, d: Path) -> None:
    """``a.txt`` edited ``old`` → ``new`` by this session outside the sandbox (the context's
    provider under its sandbox, recorded into the same history), so ``undo_edit`` has an edit to
    take back."""
    inner = ctx.fs.inner  # HistoryFileSystem(SandboxedFileSystem(provider)), or of the provider
    helper = dsh_fs.create_context(provider=getattr(inner, "inner", inner), faces=[RE], history=ctx.fs.store,
                                   policy=False)
    done = await helper.tools.execute(RE, {"command": "str_replace", "path": str(d / "a.txt"), "old_str": "old",
                                           "new_str": "new"}, session=session)
    assert not done.is_error, done.text  # the helper is not closed: it shares the provider and the store


ROWS += [
    Row("reference undo_edit", RE, {"a.txt": "old\n"},
        registry(RE, lambda d: {"command": "undo_edit", "path": str(d / "a.txt")}), {"a.txt": "old\n"},
        reads=("a.txt",), command="undo_edit", setup=edited_through_the_history),
]

ROWS += [
    Row("deepagents write", "deepagents", {}, deepagents("awrite", lambda d: (str(d / "n.txt"), "new\n")),
        {"n.txt": "new\n"}),
    Row("deepagents edit", "deepagents", {"a.txt": "old\n"},
        deepagents("aedit", lambda d: (str(d / "a.txt"), "old", "new")), {"a.txt": "new\n"}, reads=("a.txt",)),
]

def notebook(source: str) -> str:
    return ('{\n "cells": [\n  {\n   "cell_type": "markdown",\n   "id": "a",\n   "metadata": {},\n   "source": '
            f'"{source}"\n  }}\n ],\n "metadata": {{}},\n "nbformat": 4,\n "nbformat_minor": 5\n}}\n')


ROWS += [
    Row("notebook_edit replace", "notebook_edit", {"n.ipynb": notebook("old")},
        registry("notebook_edit", lambda d: {"notebook_path": str(d / "n.ipynb"), "cell_id": "a", "new_source": "new"}),
        {"n.ipynb": notebook("new")}, reads=("n.ipynb",)),
]

READ_ONLY_TOOLS = {"read", "glob", "grep", "list", "read_image", "read_pdf"}
READ_ONLY_COMMANDS = {"view"}
MODES = [None, "read-only", "workspace-write", "danger-full-access"]
TARGETS = ["inside", "outside", "temp"]


def allowed(mode: str | None, target: str) -> bool:
    return mode in (None, "danger-full-access") or (mode == "workspace-write" and target != "outside")


def context(ws: Path, mode: str | None) -> Any:
    # a composed approval callback (never asked here): the escalation is offered (D37)
    approval = Approvals("rejected") if mode is not None else None
    return dsh_fs.create_context(root=None, cwd=ws, sandbox=mode, faces=FACE_TOOLS, approval=approval, history=True)


def files(d: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(d.iterdir()) if p.is_file()}


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m or "none")
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
async def test_mode_face_target(base: Path, tmp_path: Path, mode: str | None, target: str, row: Row) -> None:
    ws = base / "ws"
    d = {"inside": ws, "outside": base / "out", "temp": tmp_path}[target]
    for name, text in row.pre.items():
        (d / name).write_text(text)
    ctx = context(ws, mode)
    session = Session(cwd=ws)
    for name in row.reads:
        assert not (await ctx.tools.execute("read", {"file_path": str(d / name)}, session=session)).is_error
    if row.setup is not None:
        await row.setup(ctx, session, d)
    before, ws_before = snapshot(base, tmp_path), files(ws)
    is_error, text, code = await row.call(ctx, session, d)
    if allowed(mode, target):
        assert not is_error, text
        expected = {**row.pre, **row.post}
        got = files(d)
        if row.name.startswith("patch two files"):
            assert got.pop("both.txt", None) == ("ws\n" if d == ws else None) and (ws / "both.txt").read_text() == "ws\n"
        assert got == {k: v for k, v in expected.items() if v is not None}
    else:
        assert is_error, text
        lines = text.removeprefix("Error: ").splitlines()
        assert denial_marker(mode) in lines  # type: ignore[arg-type]
        if row.tool in ("write", "edit", "deepagents"):
            assert lines == [denial_marker(mode), escalation_hint("operation")]  # type: ignore[arg-type]
        elif row.tool in (AE, RE, "notebook_edit"):
            assert lines == [denial_marker(mode)]  # type: ignore[arg-type]
        else:  # each refused path, then the marker (+ the hint where apply_patch takes the fields, X2)
            assert any("file access denied under" in line for line in lines[: lines.index(denial_marker(mode))])
        if row.tool not in ("apply_patch_call", "deepagents"):  # those two surfaces carry the text only
            assert code == "FS_SANDBOX_DENIED"
        assert snapshot(base, tmp_path) == before and files(ws) == ws_before
    await ctx.aclose()


def test_a_every_seam_member_is_classified_and_every_mutation_is_fenced() -> None:
    public = {name for name in dir(FileSystem) if not name.startswith("_")}
    assert public <= set(KINDS), f"classify in fs_sandbox.filesystem.KINDS: {sorted(public - set(KINDS))}"
    for name, kind in KINDS.items():
        if kind == "mutate":
            assert name in vars(SandboxedFileSystem), f"SandboxedFileSystem must fence {name}"
    wrapper = SandboxedFileSystem(MemoryFileSystem(), mode="read-only")
    assert type(wrapper.for_call("danger-full-access")) is SandboxedFileSystem
    for name in public:  # a read member is delegated, not inherited
        if KINDS[name] == "read" and inspect.isfunction(getattr(FileSystem, name, None)):
            assert name in vars(SandboxedFileSystem), f"SandboxedFileSystem must delegate {name}"


async def test_b_every_tool_command_and_patch_operation_has_a_row(base: Path) -> None:
    ctx = dsh_fs.create_context(root=None, cwd=base / "ws", sandbox="read-only", faces=FACE_TOOLS, images=True,
                                list_tool=True, history=True)  # with a history: str_replace_editor's undo_edit
    covered = {row.tool for row in ROWS}
    for name in ctx.tools.names():
        assert name in covered or name in READ_ONLY_TOOLS, f"no sandbox row for the tool {name}"
    for name in (AE, RE):
        commands = ctx.tools.get(name).parameters["command"].enum
        rows = {row.command for row in ROWS if row.tool == name}
        assert set(commands) <= rows | READ_ONLY_COMMANDS, f"{name}: commands without a row"
    kinds = {n for n, obj in vars(patch_model).items() if inspect.isclass(obj) and n.endswith("File")}
    assert kinds == {"AddFile", "DeleteFile", "UpdateFile"}, "a new patch operation needs a row"
    rows = {row.command for row in ROWS if row.tool == "apply_patch"}
    assert {"AddFile", "DeleteFile", "UpdateFile", "UpdateFile+move"} <= rows
    assert {row.tool for row in ROWS} >= {"write", "edit", "apply_patch", AE, RE, "apply_patch_call"}
    await ctx.aclose()


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
async def test_c_under_read_only_no_mutation_reaches_the_provider(row: Row) -> None:
    memory = MemoryFileSystem({"ws/" + k: v for k, v in row.pre.items()} | {"ws/keep": "k"})
    recording = RecordingFileSystem(memory)
    ctx = dsh_fs.create_context(provider=recording, sandbox="read-only", faces=FACE_TOOLS, history=True)
    session = Session(cwd="/ws")
    for name in row.reads:
        assert not (await ctx.tools.execute("read", {"file_path": f"/ws/{name}"}, session=session)).is_error
    if row.setup is not None:
        await row.setup(ctx, session, Path("/ws"))
        recording.calls.clear()
    is_error, text, _ = await row.call(ctx, session, Path("/ws"))
    assert is_error and denial_marker("read-only") in text
    mutating = {name for name, kind in KINDS.items() if kind == "mutate"}
    assert not [c for c in recording.calls if c[0] in mutating]
    await ctx.aclose()
