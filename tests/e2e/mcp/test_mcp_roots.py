"""The MCP roots protocol (DEVIATIONS M3) with the official SDK client's ``list_roots_callback``
and ``send_roots_list_changed``, over stdio and streamable HTTP, against the real ``dsh-fs mcp``.

A client's roots narrow its calls to their intersection with ``--root`` (offered, changed,
intersected); entries outside every ``--root``, with ``..``, through a symlink out, missing
or a file are ignored and logged on stderr, never added; 10,000 entries, an erroring callback
and a client without the capability leave the operator's roots.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import warnings
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from httpkit import HTTP_TIMEOUT, STARTUP_TIMEOUT, HttpServer, server_argv

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

Roots = Callable[[], "list[str] | types.ErrorData"]


@pytest.fixture
def world(tmp_path: Any) -> dict[str, str]:
    base = os.path.realpath(str(tmp_path))
    w = {"base": base, "root": os.path.join(base, "w"), "outside": os.path.join(base, "outside")}
    for d in ("w/proj", "w/docs", "outside"):
        os.makedirs(os.path.join(base, d))
    for rel, text in (("w/top.txt", "top\n"), ("w/proj/p.txt", "proj\n"), ("w/docs/d.txt", "docs\n"),
                      ("outside/secret.txt", "TOP SECRET\n")):
        with open(os.path.join(base, rel), "w", encoding="utf-8") as handle:
            handle.write(text)
    os.symlink(w["outside"], os.path.join(w["root"], "link-out"))
    return w


def _uri(path: str) -> str:
    return "file://" + path


class Served:
    """A running server's client session and its stderr so far."""

    def __init__(self, session: ClientSession, log: Callable[[], str]) -> None:
        self.session = session
        self.log = log

    async def read(self, path: str) -> tuple[str | None, str]:
        with anyio.fail_after(60):
            result = await self.session.call_tool("read", {"file_path": path})
        meta = (result.meta or {}).get("dsh_fs", {})
        text = "".join(getattr(block, "text", "") for block in result.content)
        return meta.get("error", {}).get("code") if result.is_error else None, text

    async def roots_changed(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # roots are deprecated in 2026-07-28 (SEP-2577)
            await self.session.send_roots_list_changed()


def _callback(roots: Roots | None) -> Any:
    if roots is None:
        return None

    async def list_roots(context: Any) -> types.ListRootsResult | types.ErrorData:
        answer = roots()
        if isinstance(answer, types.ErrorData):
            return answer
        return types.ListRootsResult(roots=[types.Root(uri=uri) for uri in answer])

    return list_roots


@contextlib.asynccontextmanager
async def served(transport: str, root: str, roots: Roots | None) -> AsyncIterator[Served]:
    """``dsh-fs mcp --root ROOT`` over ``transport`` with an SDK client whose roots callback
    answers ``roots()`` (``None``: the client does not declare the capability)."""
    callback = _callback(roots)
    if transport == "stdio":
        # the whole environment: the SDK's default one drops PYTHONPATH, so a checkout's server
        # would be the installed package
        params = StdioServerParameters(command=sys.executable, args=server_argv(root)[1:], cwd=root,
                                       env=dict(os.environ))
        with tempfile.TemporaryFile("w+") as errlog:
            def log() -> str:
                errlog.seek(0)
                return errlog.read()

            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=STARTUP_TIMEOUT,
                                         list_roots_callback=callback) as session:
                    with anyio.fail_after(STARTUP_TIMEOUT):
                        await session.initialize()
                    yield Served(session, log)
        return
    server = HttpServer(root)
    try:
        while (endpoint := server.endpoint()) is None:
            await anyio.sleep(0.02)
        async with httpx2.AsyncClient(headers=endpoint.headers(), timeout=HTTP_TIMEOUT) as http:
            async with streamable_http_client(endpoint.url, http_client=http) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=STARTUP_TIMEOUT,
                                         list_roots_callback=callback) as session:
                    with anyio.fail_after(STARTUP_TIMEOUT):
                        await session.initialize()
                    yield Served(session, server.log)
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(server.stop)


TRANSPORTS = ["stdio", "http"]


def _outside(path: str, *roots: str) -> str:
    named = ", ".join(f'"{r}"' for r in roots)
    return f'Error: cannot resolve "{path}": outside the workspace{" " + named if named else ""}'


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_offered_roots_narrow_the_calls(world: dict[str, str], transport: str) -> None:
    w = world["root"]
    async with served(transport, w, lambda: [_uri(f"{w}/proj")]) as client:
        assert await client.read(f"{w}/proj/p.txt") == (None, await _text(client, f"{w}/proj/p.txt"))
        assert await client.read(f"{w}/top.txt") == ("FS_PERMISSION_DENIED", _outside(f"{w}/top.txt", f"{w}/proj"))
        # the session's cwd (the --root) is outside the narrowed set: relative paths start at its first root
        code, text = await client.read("p.txt")
        assert code is None and text.startswith(f"<path>{w}/proj/p.txt</path>"), text


async def _text(client: Served, path: str) -> str:
    code, text = await client.read(path)
    assert code is None and "1: " in text, text
    return text


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_changed_list_is_followed(world: dict[str, str], transport: str) -> None:
    w = world["root"]
    current = [_uri(f"{w}/proj")]
    async with served(transport, w, lambda: list(current)) as client:
        assert (await client.read(f"{w}/docs/d.txt"))[0] == "FS_PERMISSION_DENIED"
        current[:] = [_uri(f"{w}/docs")]
        await client.roots_changed()
        assert (await client.read(f"{w}/docs/d.txt"))[0] is None
        code, text = await client.read(f"{w}/proj/p.txt")
        assert (code, text) == ("FS_PERMISSION_DENIED", _outside(f"{w}/proj/p.txt", f"{w}/docs"))
        current[:] = []  # nothing usable: the operator's roots again
        await client.roots_changed()
        assert (await client.read(f"{w}/top.txt"))[0] is None
        # observations are keyed by canonical path: the read made through the narrowed view
        # still covers an edit of the same file once the roots changed
        with anyio.fail_after(60):
            edited = await client.session.call_tool(
                "edit", {"file_path": f"{w}/docs/d.txt", "old_string": "docs", "new_string": "DOCS"})
        assert not edited.is_error, edited.content
    with open(f"{w}/docs/d.txt", encoding="utf-8") as handle:
        assert handle.read() == "DOCS\n"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_roots_are_intersected_never_added(world: dict[str, str], transport: str) -> None:
    w, outside = world["root"], world["outside"]
    entries = [_uri(f"{w}/proj"), _uri(f"{w}/docs"), _uri(f"{w}/proj/inner-missing"), _uri(outside),
               _uri(f"{w}/top.txt"), _uri(f"{w}/../outside"), _uri(f"{w}/link-out"), "file://example.com/w"]
    async with served(transport, w, lambda: entries) as client:
        for path in (f"{w}/proj/p.txt", f"{w}/docs/d.txt"):
            assert (await client.read(path))[0] is None
        assert await client.read(f"{outside}/secret.txt") == (
            "FS_PERMISSION_DENIED", _outside(f"{outside}/secret.txt", f"{w}/proj", f"{w}/docs"))
        log = client.log()
    for uri, reason in ((_uri(outside), "outside every --root"), (_uri(f"{w}/top.txt"), "not a directory"),
                        # the SDK's FileUrl collapses ``..`` (client and server side): it then lies outside
                        (_uri(outside), "outside every --root"),
                        (_uri(f"{w}/link-out"), "outside every --root"),
                        (_uri(f"{w}/proj/inner-missing"), "not found"),
                        ("file://example.com/w", "not a file:// URI")):
        assert f"dsh-fs mcp: client root {uri} ignored: {reason}\n" in log, (uri, log)
    assert log.count(f"client root {_uri(outside)} ignored") == 2  # as given, and the ``..`` spelling


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_client_root_above_the_operator_root_gives_the_operator_root(world: dict[str, str],
                                                                             transport: str) -> None:
    w, outside = world["root"], world["outside"]
    async with served(transport, w, lambda: ["file:///"]) as client:
        assert (await client.read(f"{w}/top.txt"))[0] is None
        assert (await client.read(f"{outside}/secret.txt"))[1] == _outside(f"{outside}/secret.txt", w)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("kind", ["all-ignored", "10000", "error", "no-capability"])
async def test_unusable_answers_leave_the_operator_roots(world: dict[str, str], transport: str, kind: str) -> None:
    w, outside = world["root"], world["outside"]
    answers: dict[str, Roots | None] = {
        "all-ignored": lambda: [_uri(outside), _uri(f"{w}/link-out")],
        "10000": lambda: [_uri(f"{w}/proj")] * 10_000,
        "error": lambda: types.ErrorData(code=-32603, message="the client broke"),
        "no-capability": None,
    }
    async with served(transport, w, answers[kind]) as client:
        with anyio.fail_after(60):  # never the wait's bound: the answer settled
            assert (await client.read(f"{w}/top.txt"))[0] is None
        assert (await client.read(f"{outside}/secret.txt"))[1] == _outside(f"{outside}/secret.txt", w)
        log = client.log()
    expected = {
        "all-ignored": f"dsh-fs mcp: client root {_uri(outside)} ignored: outside every --root\n",
        "10000": "dsh-fs mcp: client roots ignored: 10000 entries, more than 256\n",
        "error": "dsh-fs mcp: client roots ignored: the client broke\n",
    }
    if kind in expected:
        assert expected[kind] in log, log
    else:
        assert "client root" not in log, log


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_client_root_swapped_for_a_symlink_out_after_it_was_applied_leads_nowhere(
        world: dict[str, str], transport: str) -> None:
    """The client's root is applied (its canonical path found inside ``--root``); something in the
    workspace then turns it into a symlink out (a checkout, a build step). Reads, writes and
    listings through it are refused, and nothing outside changes (D28, M3)."""
    w, outside = world["root"], world["outside"]
    async with served(transport, w, lambda: [_uri(f"{w}/proj")]) as client:
        assert (await client.read(f"{w}/proj/p.txt"))[0] is None
        os.rename(f"{w}/proj", f"{w}/proj.old")
        os.symlink(outside, f"{w}/proj")
        code, text = await client.read(f"{w}/proj/secret.txt")
        assert code == "FS_PERMISSION_DENIED" and "TOP SECRET" not in text, text
        for name, args in (("write", {"file_path": f"{w}/proj/new.txt", "content": "PWNED"}),
                           ("glob", {"pattern": "**/*", "path": f"{w}/proj"}),
                           ("grep", {"pattern": "SECRET", "path": f"{w}/proj"})):
            with anyio.fail_after(60):
                result = await client.session.call_tool(name, args)
            shown = "".join(getattr(block, "text", "") for block in result.content)
            assert "TOP SECRET" not in shown and "secret.txt" not in shown, (name, shown)
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    with open(f"{outside}/secret.txt", encoding="utf-8") as handle:
        assert handle.read() == "TOP SECRET\n"
