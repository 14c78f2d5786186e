"""The pure part of the MCP roots protocol (DEVIATIONS M3): ``root_path`` and ``intersect``
(hypothesis: the result never leaves the operator roots, and more client roots never widen
a non-empty answer), and ``RootsProtocol``'s answer handling with a scripted session."""

from __future__ import annotations

import os
from typing import Any

import anyio
import mcp.types as types
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_fs import Session
from dsh_fs.fs_local import LocalFileSystem
from dsh_fs.fs_memory import MemoryFileSystem
from dsh_fs.mcp.roots import (LOGGED_URI_MAX, MAX_CLIENT_ROOTS, OUTSIDE, RootsProtocol, ignored_entry, intersect,
                           root_path)


@pytest.mark.parametrize(("uri", "path", "reason"), [
    ("file:///w/proj", "/w/proj", None),
    ("file://localhost/w/proj/", "/w/proj", None),
    ("file:///w//a%20b", "/w/a b", None),
    ("FILE:///w", "/w", None),
    ("file:///", "/", None),
    ("https://example.com/w", None, "not a file:// URI"),
    ("file://example.com/w", None, "not a file:// URI"),
    ("file:///w?x=1", None, "not a file:// URI"),
    ("file:///w#frag", None, "not a file:// URI"),
    ("/w/proj", None, "not a file:// URI"),
    ("file:w", None, "not an absolute path"),
    ("file:///w/%00", None, "not an absolute path"),
    ("file:///w/%ff", None, "not an absolute path"),
    ("file:///" + "x" * 4096, None, "not an absolute path"),
    ("file:///w/../etc", None, "has a . or .. component"),
    ("file:///w/./x", None, "has a . or .. component"),
    ("file:///w/%2e%2e/etc", None, "has a . or .. component"),
])
def test_root_path(uri: str, path: str | None, reason: str | None) -> None:
    assert root_path(uri) == (path, reason)


def _probe_under(operator: list[str]) -> Any:
    def probe(path: str) -> str | None:
        inside = any(path == r or path.startswith(r + "/") for r in operator)
        return None if inside else OUTSIDE

    return probe


def test_intersect_keeps_inner_roots_maps_outer_ones_and_drops_nested() -> None:
    operator = ["/w/a", "/w/b"]
    effective, ignored = intersect(operator, ["file:///w/a/x", "file:///w", "file:///w/a/x/y", "file:///etc",
                                              "http://x/"], _probe_under(operator))
    assert effective == ("/w/a", "/w/b")  # /w gives both operator roots, which hold /w/a/x
    assert ignored == [("file:///etc", OUTSIDE), ("http://x/", "not a file:// URI")]
    assert intersect(operator, [], _probe_under(operator)) == ((), [])
    assert intersect(operator, ["file:///w/b/q", "file:///w/a/x"], _probe_under(operator))[0] == ("/w/b/q", "/w/a/x")


def test_a_probe_reason_other_than_outside_never_maps_to_operator_roots() -> None:
    effective, ignored = intersect(["/w"], ["file:///w/file.txt"], lambda p: "not a directory")
    assert (effective, ignored) == ((), [("file:///w/file.txt", "not a directory")])


_segment = st.sampled_from(["w", "a", "b", "x"])
_path = st.lists(_segment, max_size=4).map(lambda s: "/" + "/".join(s))


@given(st.lists(_path, min_size=1, max_size=3), st.lists(_path, max_size=6), st.lists(_path, max_size=3))
def test_intersect_never_widens(operator: list[str], client: list[str], more: list[str]) -> None:
    def under(path: str, roots: list[str]) -> bool:
        return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)

    probe = _probe_under(operator)
    effective, _ = intersect(operator, ["file://" + p for p in client], probe)
    assert all(under(p, operator) for p in effective)
    assert len(set(effective)) == len(effective)
    assert not any(p != q and under(p, [q]) for p in effective for q in effective)
    if effective:  # the client's own roots, each inside an operator root or holding some
        assert all(under(p, client) or p in operator for p in effective)


class _Session:
    """A scripted ``roots.RootsPeer``: capabilities, protocol version and ``roots/list`` answers."""

    def __init__(self, answers: list[Any], *, roots: bool = True, version: str = "2025-11-25") -> None:
        self.client_capabilities = types.ClientCapabilities(roots=types.RootsCapability() if roots else None)
        self.protocol_version = version
        self.answers = answers
        self.asked = 0

    async def list_roots(self, related_to: Any) -> list[str]:
        self.asked += 1
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        if callable(answer):
            answer = await answer()
            return [str(root.uri) for root in answer.roots]
        return [str(types.Root(uri=u).uri) for u in answer]


@pytest.fixture
def tree(tmp_path: Any) -> str:
    w = os.path.join(os.path.realpath(str(tmp_path)), "w")
    os.makedirs(os.path.join(w, "a"))
    os.makedirs(os.path.join(w, "b"))
    return w


@pytest.mark.anyio
async def test_answers_apply_replace_and_fall_back(tree: str) -> None:
    lines: list[str] = []
    roots = RootsProtocol(LocalFileSystem(root=tree), log=lines.append)
    owner = Session(tree)
    session = _Session([[f"file://{tree}/a"], RuntimeError("boom"), [f"file://{tree}/x"] * (MAX_CLIENT_ROOTS + 1),
                        [f"file:///elsewhere"], [f"file://{tree}/b"]])
    assert (await roots.view_for(owner, session)).workspace_roots() == (f"{tree}/a",)
    assert (await roots.view_for(owner, session)).workspace_roots() == (f"{tree}/a",) and session.asked == 1
    for expected in ((f"{tree}/a",), (f"{tree}/a",), None, (f"{tree}/b",)):  # error, too many: kept; all ignored: operator
        roots.changed(owner, session)
        view = await roots.view_for(owner, session)
        assert (view.workspace_roots() if view is not None else None) == expected
    assert lines == ["dsh-fs mcp: client roots ignored: boom",
                     f"dsh-fs mcp: client roots ignored: {MAX_CLIENT_ROOTS + 1} entries, more than 256",
                     "dsh-fs mcp: client root file:///elsewhere ignored: outside every --root"]


@pytest.mark.anyio
async def test_a_stale_answer_is_dropped(tree: str) -> None:
    roots = RootsProtocol(LocalFileSystem(root=tree), log=lambda line: None)
    owner = Session(tree)
    release = anyio.Event()

    async def slow() -> Any:
        await release.wait()
        return types.ListRootsResult(roots=[types.Root(uri=f"file://{tree}/a")])

    session = _Session([slow, [f"file://{tree}/b"]])
    async with anyio.create_task_group() as tg:
        tg.start_soon(roots.ask, owner, session)
        await anyio.sleep(0.01)
        await roots.ask(owner, session)  # the newer question is answered first
        release.set()
    assert roots.effective(owner) == (f"{tree}/b",)


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["no-capability", "2026-07-28", "memory"])
async def test_no_question_without_the_capability_before_2026_07_28_and_a_narrowable_provider(tree: str,
                                                                                             kind: str) -> None:
    lines: list[str] = []
    fs = MemoryFileSystem() if kind == "memory" else LocalFileSystem(root=tree)
    roots = RootsProtocol(fs, log=lines.append)
    session = _Session([[f"file://{tree}/a"]], roots=kind != "no-capability",
                       version="2026-07-28" if kind == "2026-07-28" else "2025-06-18")
    for _ in range(2):
        assert await roots.view_for(Session(tree), session) is None
    assert session.asked == 0
    assert lines == (["dsh-fs mcp: client roots ignored: the served provider has no directories to narrow"]
                     if kind == "memory" else [])


@pytest.mark.anyio
async def test_a_cancelled_question_is_asked_again_by_the_next_call(tree: str) -> None:
    roots = RootsProtocol(LocalFileSystem(root=tree), log=lambda line: None)
    owner = Session(tree)
    never = anyio.Event()

    async def hang() -> Any:
        await never.wait()

    session = _Session([hang, [f"file://{tree}/a"]])
    with anyio.move_on_after(0.05):
        await roots.view_for(owner, session)
    view = await roots.view_for(owner, session)
    assert session.asked == 2 and view is not None and view.workspace_roots() == (f"{tree}/a",)


def test_a_logged_client_uri_is_one_bounded_line() -> None:
    """a client's URI with a line break cannot fake a second log line, nor flood stderr"""
    assert ignored_entry("file:///a\ndsh-fs mcp: serving /", OUTSIDE) == (
        'dsh-fs mcp: client root "file:///a\\ndsh-fs mcp: serving /" ignored: outside every --root')
    line = ignored_entry("file:///" + "x" * 100_000, "not found")
    assert "\n" not in line and len(line) < LOGGED_URI_MAX + 100 and "x…" in line
    assert ignored_entry("file:///plain", "not found") == "dsh-fs mcp: client root file:///plain ignored: not found"


@pytest.mark.anyio
async def test_a_client_error_message_is_logged_escaped(tree: str) -> None:
    """the client writes a ``roots/list`` error's message: an ANSI escape, a NUL or a backspace
    in it reaches the operator's stderr as a D22 escape, not raw (``_describe`` only folded
    whitespace)"""
    from mcp.shared.exceptions import MCPError

    lines: list[str] = []
    roots = RootsProtocol(LocalFileSystem(root=tree), log=lines.append)
    owner = Session(tree)
    forged = "\x1b[2K\rdsh-fs mcp: serving /\x00\x08"
    session = _Session([MCPError(-1, forged), MCPError(-1, "no")])
    assert await roots.view_for(owner, session) is None
    roots.changed(owner, session)
    assert await roots.view_for(owner, session) is None
    assert lines == ['dsh-fs mcp: client roots ignored: "\\u001b[2K dsh-fs mcp: serving /\\u0000\\b"',
                     "dsh-fs mcp: client roots ignored: no"]
    assert all(line.isprintable() for line in lines)
