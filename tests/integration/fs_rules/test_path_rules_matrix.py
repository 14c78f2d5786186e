"""The path-rules matrix through the registry (docs/PATH-RULES.md, DEVIATIONS P1–P5): every tool,
editor command and patch operation (``pathruleskit.ROWS``) × deny / read-only × provider (local
disk, memory, S3 on the loopback moto server, the provider over a command channel with a
subprocess helper). Each refused row changes no byte of the store;
each shown row names no denied file and shows none of their content. MCP and the CLI:
tests/e2e/fs_rules/test_path_rules_surfaces.py; symlinks, ``..``, case and NFC/NFD spellings and
a hostile repository: test_path_rules_paths.py.

Completeness guards (each fails when a tool, command, operation or seam member arrives without
its row or its classification): (a) every public ``FileSystem`` member is in
``fs_rules.filesystem.KINDS`` and every member that must be fenced is defined by the wrapper;
(b) every tool registered with all faces and images loaded, every editor command and patch
operation kind has rows for both kinds of rule; (c) with the rules, a ``RecordingFileSystem``
inside the wrapper sees no mutating call and no read of a denied target for any row.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pathruleskit import COMMANDS, DENY, READ_ONLY, READ_ONLY_TOOLS, ROWS, Row, args_for, check, layout

import dsh_fs
from dsh_fs import FileSystem, Session
from dsh_fs.faces import FACE_TOOLS
from dsh_fs.fs_memory import MemoryFileSystem
from dsh_fs.fs_rules.filesystem import KINDS, RuledFileSystem
from dsh_fs.fs.path_rules import PathRules
from dsh_fs.patch import model as patch_model
from dsh_fs.testing.fixtures import s3_endpoint  # noqa: F401  (registers the fixture)
from dsh_fs.testing.recording import RecordingFileSystem
from dsh_fs.testing.workspaces import LocalWorkspace, MemoryWorkspace, S3Workspace, Workspace

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["local", "memory", "s3", "channel"])
async def workspace(request: pytest.FixtureRequest, tmp_path: Any) -> AsyncIterator[Workspace]:
    if request.param == "local":
        os.mkdir(tmp_path / "ws")
        ws: Workspace = LocalWorkspace(str(tmp_path / "ws"), lock_dir=str(tmp_path / "locks"))
    elif request.param == "channel":  # the provider over a command channel (a subprocess helper)
        from dsh_fs.testing.channels import ChannelWorkspace, far_python, subprocess_channel

        os.mkdir(tmp_path / "ws")
        ws = ChannelWorkspace(str(tmp_path / "ws"), subprocess_channel, python=far_python(),
                              lock_dir=str(tmp_path / "locks"))
    elif request.param == "memory":
        ws = MemoryWorkspace()
    else:
        ws = await S3Workspace(endpoint_url=request.getfixturevalue("s3_endpoint")).create()
    for rel, data in layout().items():
        await ws.put(rel, data)
    yield ws
    await ws.aclose()


async def deployment(ws: Workspace) -> Any:
    return dsh_fs.create_context(provider=await ws.provider(), deny=DENY, read_only_paths=READ_ONLY,
                                 faces=FACE_TOOLS, images=True, pdfs=True, list_tool=True)


OPT_IN = {"list_tool", "images", "pdfs"}
"""``create_context``'s flags that load a tool (each on in the deployments here)"""

NOT_TOOLS = {"policy", "search", "show_rules", "history"}
"""``create_context``'s other flags"""


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
async def test_row_p1(workspace: Workspace, row: Row) -> None:
    ctx = await deployment(workspace)
    session, session_root = Session(cwd=workspace.root), workspace.root
    for rel in row.reads:
        assert not (await ctx.tools.execute("read", {"file_path": rel}, session=session)).is_error
    before = await workspace.files()
    result = await ctx.tools.execute(row.tool, args_for(row, session_root), session=session)
    check(row, result.is_error, result.text, result.error.code if result.error else None)
    assert await workspace.files() == before
    await ctx.aclose()


def test_a_every_seam_member_is_classified_and_fenced() -> None:
    public = {name for name in dir(FileSystem) if not name.startswith("_")}
    assert public <= set(KINDS), f"classify in fs_rules.filesystem.KINDS: {sorted(public - set(KINDS))}"
    assert set(KINDS) <= public | {"root", "cwd"}, "KINDS names a member the seam no longer has"
    for name, kind in KINDS.items():
        if kind in ("resolve", "target", "listing", "mutate"):
            assert name in vars(RuledFileSystem), f"RuledFileSystem must fence {name} ({kind})"
        elif kind == "read" and inspect.isfunction(getattr(FileSystem, name, None)):
            assert name in vars(RuledFileSystem), f"RuledFileSystem must pass {name} on"


async def test_b_every_tool_command_and_patch_operation_has_rows(tmp_path: Any) -> None:
    flags = {name for name, p in inspect.signature(dsh_fs.create_context).parameters.items()
             if isinstance(p.default, bool) or p.annotation in ("bool", "bool | None")}
    assert flags <= OPT_IN | NOT_TOOLS, f"a new create_context flag {sorted(flags - OPT_IN - NOT_TOOLS)}: if it loads a tool, turn it on here"
    ctx = dsh_fs.create_context(root=None, cwd=tmp_path, faces=FACE_TOOLS, **{flag: True for flag in OPT_IN})
    for kind in ("deny", "read-only"):
        covered = {row.tool for row in ROWS if row.kind == kind}
        for name in ctx.tools.names():
            assert name in covered, f"no {kind} path-rules row for the tool {name}"
        for face, argument in COMMANDS.items():
            commands = set(ctx.tools.get(face).parameters[argument].enum)
            rows = {row.command for row in ROWS if row.tool == face and row.kind == kind}
            assert commands <= rows, f"{face}: {argument} values without a {kind} row: {sorted(commands - rows)}"
        rows = {row.command for row in ROWS if row.tool == "apply_patch" and row.kind == kind}
        assert {"AddFile", "DeleteFile", "UpdateFile", "UpdateFile+move"} <= rows
    kinds = {n for n, obj in vars(patch_model).items() if inspect.isclass(obj) and n.endswith("File")}
    assert kinds == {"AddFile", "DeleteFile", "UpdateFile"}, "a new patch operation needs rows"
    for row in ROWS:
        if row.kind == "read-only" and row.tool not in READ_ONLY_TOOLS and row.command != "view":
            assert row.expect == "refused", f"{row.name}: a change of a read-only path must be refused"
    await ctx.aclose()


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
async def test_c_nothing_denied_or_changed_reaches_the_provider(row: Row) -> None:
    """Below the wrapper: no mutating call for a refused row, and no read of a denied file."""
    memory = MemoryFileSystem({k: v for k, v in layout().items()})
    recording = RecordingFileSystem(memory)
    ctx = dsh_fs.create_context(provider=recording, deny=DENY, read_only_paths=READ_ONLY, faces=FACE_TOOLS,
                                images=True, pdfs=True, list_tool=True)
    session, session_root = Session(cwd="/"), "/"
    for rel in row.reads:
        assert not (await ctx.tools.execute("read", {"file_path": rel}, session=session)).is_error
    recording.calls.clear()
    result = await ctx.tools.execute(row.tool, args_for(row, session_root), session=session)
    check(row, result.is_error, result.text, result.error.code if result.error else None)
    rules = PathRules.of(deny=DENY)
    reads = {"read_text", "stream_text", "read_window", "read_text_at", "stream_bytes", "read_bytes"}
    for call in recording.calls:
        if call[0] in reads:
            assert rules.verdict(call[1]) != "deny", f"{row.name}: {call}"
    if row.expect == "refused":
        mutating = {name for name, kind in KINDS.items() if kind == "mutate" and not name.startswith("check_")}
        assert not [c for c in recording.calls if c[0] in mutating], f"{row.name}: {recording.calls}"
    await ctx.aclose()


async def test_rules_hold_under_every_sandbox_mode(tmp_path: Any) -> None:
    """The rules sit inside the sandbox: danger-full-access (or an approved escalation) never
    widens them."""
    for rel, data in layout().items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    for mode in ("read-only", "workspace-write", "danger-full-access"):
        ctx = dsh_fs.create_context(cwd=tmp_path, sandbox=mode, deny=DENY, read_only_paths=READ_ONLY)
        session = Session(cwd=tmp_path)
        result = await ctx.tools.execute("read", {"file_path": "secret.txt"}, session=session)
        assert result.is_error and "the path rules deny access to it" in result.text
        if mode == "danger-full-access":
            await ctx.tools.execute("read", {"file_path": "frozen.txt"}, session=session)
            result = await ctx.tools.execute("write", {"file_path": "frozen.txt", "content": "x"}, session=session)
            assert result.is_error and "the path rules make it read-only" in result.text
        await ctx.aclose()
    assert (tmp_path / "frozen.txt").read_bytes() == layout()["frozen.txt"]


async def test_without_rules_nothing_is_wrapped(tmp_path: Any) -> None:
    ctx = dsh_fs.create_context(cwd=tmp_path)
    assert not isinstance(ctx.fs, RuledFileSystem)
    assert "tool:path-rules" not in ctx.system_prompt.names()
    await ctx.aclose()
    with pytest.raises(ValueError, match="show_rules= needs"):
        dsh_fs.create_context(cwd=tmp_path, show_rules=True)
    with pytest.raises(ValueError, match="take lists"):
        dsh_fs.create_context(cwd=tmp_path, deny=".env")
