"""deepagents end to end: ``create_deep_agent(..., backend=DshFsBackend(ctx))`` driven by a
scripted chat model (``langchainkit``), sync and async. No network. The scenarios and the
backend's own checks use host paths (``virtual_mode=False``); the virtual mode, the default,
where ``/`` is the project, has its own tests at the end.

deepagents' own tools (``read_file``, ``edit_file``, …) run on dsh-fs: each scenario of
``frameworkkit`` must be decided as dsh-fs decides it (read then edit succeeds; an edit
without a read, a stale edit and a path outside the root are refused with the registry's
exact texts, as ``ToolMessage(status="error")``), and leave the file as the scenario says.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import anyio
import pytest
from deepagents import create_deep_agent
from langchain_core.messages import ToolMessage

import dsh_fs
from dsh_fs.adapters.deepagents import DshFsBackend
from frameworkkit import SCENARIOS, Scenario, expected_texts, make_workspace, tool_calls
from langchainkit import ScriptedChatModel, replies

DEEPAGENTS_NAMES = {"read": "read_file", "edit": "edit_file", "write": "write_file"}


def _rename(name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return DEEPAGENTS_NAMES[name], arguments


def _agent(model: ScriptedChatModel, backend: DshFsBackend) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return create_deep_agent(model=model, backend=backend)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_scenario(scenario: Scenario, mode: str, tmp_path: Path) -> None:
    ws = make_workspace(str(tmp_path))
    expected = expected_texts(scenario, ws)
    steps = scenario.steps(ws)
    backend = DshFsBackend(dsh_fs.create_context(root=ws), virtual_mode=False)
    agent = _agent(ScriptedChatModel(messages=replies(steps, _rename)), backend)
    request = {"messages": [("user", "Fix the typo in a.txt")]}
    try:
        state = agent.invoke(request) if mode == "sync" else anyio.run(agent.ainvoke, request)
    finally:
        backend.close()
    results = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    calls = tool_calls(steps)
    assert [m.name for m in results] == [DEEPAGENTS_NAMES[name] for name, _ in calls]
    assert [m.status == "error" for m in results] == scenario.errors
    for (name, _), message, text, error in zip(calls, results, expected, scenario.errors):
        if error or name == "edit":  # refusals and edits: dsh-fs decides, deepagents words success
            assert (message.content == text) if error else message.content.startswith("Successfully replaced 1 instance")
        else:  # deepagents' own rendering of the window dsh-fs read
            assert "hello teh world" in message.content
    assert scenario.marker in results[-1].content or not scenario.errors[-1]
    assert Path(ws, "a.txt").read_text() == scenario.final


def test_write_needs_a_read_to_replace(tmp_path: Path) -> None:
    """deepagents' write_file overwrites any file; through dsh-fs only a file this agent read."""
    ws = make_workspace(str(tmp_path))
    backend = DshFsBackend(dsh_fs.create_context(root=ws), virtual_mode=False)
    path, new = os.path.join(ws, "a.txt"), os.path.join(ws, "new.txt")
    try:
        refused = backend.write(path, "clobbered\n")
        assert refused.error is not None and refused.error.startswith("Error: ") and Path(path).read_text() == "hello teh world\n"
        assert backend.write(new, "fresh\n").path == new and Path(new).read_text() == "fresh\n"
        assert backend.read(path).error is None
        assert backend.write(path, "replaced\n").path == path
    finally:
        backend.close()
    assert Path(path).read_text() == "replaced\n"
    ctx, session = dsh_fs.create_context(root=ws), dsh_fs.Session()
    twin = anyio.run(lambda: ctx.tools.execute("write", {"file_path": new, "content": "x"}, session=session))
    assert refused.error == twin.text.replace(new, path)


def test_read_window_and_pagination(tmp_path: Path) -> None:
    ws = make_workspace(str(tmp_path))
    Path(ws, "lines.txt").write_text("".join(f"line {n}\r\n" for n in range(1, 11)))
    backend = DshFsBackend(dsh_fs.create_context(root=ws), virtual_mode=False)
    path = os.path.join(ws, "lines.txt")
    try:
        window = anyio.run(backend.aread, path, 2, 3)
        past = anyio.run(backend.aread, path, 20, 3)
        nothing = anyio.run(backend.aread, path, 0, 0)
    finally:
        backend.close()
    assert window.file_data == {"content": "line 3\nline 4\nline 5\n", "encoding": "utf-8"}
    assert (window.start_line, window.end_line, window.next_offset, window.total_lines) == (3, 5, 5, 10)
    assert past.error == "Line offset 20 exceeds file length (10 lines)"
    assert nothing.no_lines_requested and nothing.file_data == {"content": "", "encoding": "utf-8"}


@pytest.mark.parametrize("size", [5, 10**6])
def test_streamed_read_matches_the_whole_read(tmp_path: Path, size: int) -> None:
    """A file above read_whole_max_bytes is streamed: same window, only the window kept."""
    ws = make_workspace(str(tmp_path))
    text = "".join(f"{n}: {'x' * (n % 7)}\r\n" if n % 3 else f"{n}\n" for n in range(1, 3000))
    Path(ws, "big.txt").write_text(text, newline="")
    path = os.path.join(ws, "big.txt")
    whole, streamed = DshFsBackend(dsh_fs.create_context(root=ws), virtual_mode=False), DshFsBackend(
        dsh_fs.create_context(root=ws), read_whole_max_bytes=size, virtual_mode=False)
    try:
        for offset, limit in [(0, 2000), (1990, 2000), (5, 1), (2998, 5)]:
            a, b = whole.read(path, offset, limit), streamed.read(path, offset, limit)
            assert a.file_data == b.file_data and (a.start_line, a.end_line, a.next_offset) == (
                b.start_line, b.end_line, b.next_offset)
            assert b.total_lines in (None, a.total_lines)
    finally:
        whole.close()
        streamed.close()


def test_streamed_read_of_an_overlong_line_is_bounded(tmp_path: Path) -> None:
    ws = make_workspace(str(tmp_path))
    Path(ws, "long.txt").write_text("a" * (3 * 1024 * 1024) + "\nsecond\n")
    backend = DshFsBackend(dsh_fs.create_context(root=ws), read_whole_max_bytes=1, virtual_mode=False)
    path = os.path.join(ws, "long.txt")
    try:
        first = backend.read(path, 0, 10)
        second = backend.read(path, 1, 10)
        found = backend.grep("second", ws)
    finally:
        backend.close()
    assert first.file_data is not None and len(first.file_data["content"]) == 1024 * 1024
    assert (first.start_line, first.end_line, first.next_offset) == (1, 1, 1)
    assert second.file_data == {"content": "second\n", "encoding": "utf-8"}
    assert found.matches == [{"path": path, "line": 2, "text": "second"}]


def test_ls_glob_grep_stay_inside_the_root(tmp_path: Path) -> None:
    ws = make_workspace(str(tmp_path))
    os.makedirs(os.path.join(ws, "src", "pkg"))
    Path(ws, "src", "pkg", "mod.py").write_text("x = 1  # TODO\n")
    Path(ws, "src", "top.py").write_text("TODO: more\nnothing\n")
    Path(ws, "bin.dat").write_bytes(b"\x00TODO\x00")
    os.symlink(os.path.dirname(ws), os.path.join(ws, "up"))  # leads out of the root
    backend = DshFsBackend(dsh_fs.create_context(root=ws), max_results=2, virtual_mode=False)
    try:
        listing = backend.ls(ws)
        outside = backend.ls(os.path.dirname(ws))
        py = backend.glob("*.py")
        anchored = anyio.run(backend.aglob, "/*.py", os.path.join(ws, "src"))
        everything = backend.glob("**/*")
        todo = backend.grep("TODO", glob="*.py")
        capped = backend.grep("o", max_count=1)
        bad = backend.glob("../*.txt")  # deepagents refuses a ".." segment
    finally:
        backend.close()
    shown = {e["path"]: e["is_dir"] for e in listing.entries or []}
    assert {p: shown.get(os.path.join(ws, p)) for p in ("a.txt", "bin.dat", "src")} == {
        "a.txt": False, "bin.dat": False, "src": True}
    assert all(path.startswith(ws + os.sep) for path in shown)
    assert outside.error is not None and "outside the workspace" in outside.error
    assert sorted(m["path"] for m in py.matches or []) == [os.path.join(ws, "src", "pkg", "mod.py"),
                                                         os.path.join(ws, "src", "top.py")]
    assert [m["path"] for m in anchored.matches or []] == [os.path.join(ws, "src", "top.py")]
    assert everything.truncated and everything.truncation_reason == "budget" and len(everything.matches or []) == 2
    assert not any("secret" in m["path"] for m in everything.matches or [])
    assert sorted((m["path"], m["line"], m["text"]) for m in todo.matches or []) == [
        (os.path.join(ws, "src", "pkg", "mod.py"), 1, "x = 1  # TODO"), (os.path.join(ws, "src", "top.py"), 1, "TODO: more")]
    assert capped.truncated and len(capped.matches or []) == 1
    assert bad.error is not None and bad.matches is None


# -- virtual mode (the default): "/" is the project, as deepagents' own backends ------------------

def test_the_default_virtual_mode_serves_deepagents_own_paths(tmp_path: Path) -> None:
    """deepagents' default prompt and its ``FilesystemBackend(virtual_mode=True)``/``StateBackend``
    treat ``/`` as the project: ``ls /``, ``read_file /a.txt``, ``edit_file /a.txt``, ``glob``
    and ``grep`` work with those paths, and every path and refusal the model sees is one."""
    ws = make_workspace(str(tmp_path))
    os.makedirs(os.path.join(ws, "src"))
    Path(ws, "src", "b.txt").write_text("teh again\n")
    steps = [
        ("ls", {"path": "/"}),
        ("edit_file", {"file_path": "/src/b.txt", "old_string": "teh", "new_string": "the"}),
        ("read_file", {"file_path": "/a.txt"}),
        ("edit_file", {"file_path": "/a.txt", "old_string": "teh", "new_string": "the"}),
        ("glob", {"pattern": "**/*.txt"}),
        ("grep", {"pattern": "teh"}),
        ("read_file", {"file_path": "/../secret.txt"}),
    ]
    backend = DshFsBackend(dsh_fs.create_context(root=ws))
    agent = _agent(ScriptedChatModel(messages=replies(steps)), backend)
    try:
        state = agent.invoke({"messages": [("user", "Fix the typos")]})
    finally:
        backend.close()
    results = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    listed, unread, read, edited, globbed, grepped, outside = (m.content for m in results)
    assert "/a.txt" in listed and "/src" in listed and ws not in listed
    assert unread == 'Error: edit requires reading "/src/b.txt" first — read the file, then retry'
    assert "hello teh world" in read
    assert edited.startswith("Successfully replaced 1 instance") and "'/a.txt'" in edited
    assert "/a.txt" in globbed and "/src/b.txt" in globbed and ws not in globbed
    assert "/src/b.txt" in grepped and ws not in grepped
    assert outside.startswith("Error: ") and "not for the model" not in outside  # deepagents refuses ".." itself
    assert Path(ws, "a.txt").read_text() == "hello the world\n" and Path(ws, "src", "b.txt").read_text() == "teh again\n"


def test_virtual_mode_results_and_host_paths(tmp_path: Path) -> None:
    ws = make_workspace(str(tmp_path))
    backend = DshFsBackend(dsh_fs.create_context(root=ws))
    try:
        assert backend.write("/new.txt", "fresh\n").path == "/new.txt"
        assert backend.read("a.txt").error is None  # relative: from "/"
        assert backend.read(os.path.join(ws, "a.txt")).error is None  # a host path in the project: as it is
        assert backend.edit("/a.txt", "teh", "the").path == "/a.txt"
        assert {e["path"] for e in backend.ls("/").entries or []} == {"/a.txt", "/new.txt"}
        refused = backend.read("/missing.txt")
        assert refused.error == 'cannot read "/missing.txt": not found'
    finally:
        backend.close()
    assert Path(ws, "new.txt").read_text() == "fresh\n"


def test_ls_is_bounded_and_runs_in_the_listing_places(tmp_path: Path) -> None:
    """``als`` as dsh-fs's ``list`` (DEVIATIONS L5): the children read in batches, only the first
    ``max_ls_entries`` by name kept, and at most two listings of one session at once (the
    context's listing places); the default cap is more than deepagents' ``ls`` tool can show, so
    a cut listing ends in deepagents' own truncation note."""
    from deepagents.backends.utils import TRUNCATION_GUIDANCE, truncate_if_too_long

    from dsh_fs.adapters.deepagents import LS_MAX_ENTRIES
    from dsh_fs.fs_local import LocalFileSystem

    root = os.path.realpath(tmp_path)
    for i in reversed(range(30)):
        Path(root, f"f{i:02d}.txt").write_text("x" * i)
    os.mkdir(os.path.join(root, "d"))

    class Gate(LocalFileSystem):
        running = most = 0
        go: Any = None

        async def iter_dir(self, target: Any, *, signal: Any = None) -> Any:  # type: ignore[override]
            type(self).running += 1
            type(self).most = max(type(self).most, type(self).running)
            try:
                await self.go.wait()
                async for batch in super().iter_dir(target, signal=signal):
                    yield batch
            finally:
                type(self).running -= 1

    async def main() -> None:
        Gate.go = anyio.Event()
        ctx = dsh_fs.create_context(provider=Gate(cwd=root, root=root))
        backend = DshFsBackend(ctx, virtual_mode=False, max_ls_entries=10)
        results: list[Any] = []

        async def one() -> None:
            results.append(await backend.als(root))

        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(one)
            with anyio.fail_after(60):
                while Gate.running < 2:
                    await anyio.sleep(0.01)
            await anyio.sleep(0.2)  # the third waits for a place
            assert Gate.running == 2
            Gate.go.set()
        assert Gate.most == 2
        for result in results:
            assert result.error is None
            assert [e["path"] for e in result.entries] == [f"{root}/d"] + [f"{root}/f{i:02d}.txt" for i in range(9)]
            assert [e.get("size") for e in result.entries][1:4] == [0, 1, 2]
        await ctx.aclose()

    anyio.run(main)
    assert truncate_if_too_long(["/x"] * LS_MAX_ENTRIES)[-1] == TRUNCATION_GUIDANCE
