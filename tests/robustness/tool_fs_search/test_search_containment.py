"""``glob``/``grep`` under a containment root and on hostile trees (tracker issue 10: containment
and bad input; DEVIATIONS S5).

With ``LocalFileSystem(root=…)`` a ``path`` resolving outside the root — ``..``, absolute,
a symlink (final component or a parent), ``/proc/self/root`` — is refused with the file tools'
``FS_PERMISSION_DENIED`` message; a NUL is refused as for ``read``; ripgrep never follows a
symlink out of the walk, so no result names or quotes a file outside the root. A capped
result is still recoverable under the root (the spill store's reader). Hostile trees: a FIFO
in the tree or as the path, binary and non-UTF-8 files, a line longer than the raw output cap:
each gets its result or error, nothing hangs.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from dsh_fs import Context, Session
from dsh_fs.fs_local import LocalFileSystem
from dsh_fs.spill import LocalSpillStore
from dsh_fs.tool_fs import ToolFs
from dsh_fs.tool_fs_search import ToolFsSearch
from filekit import put
from searchkit import call, search_ctx

pytestmark = pytest.mark.anyio

SECRET = "TOP SECRET needle outside\n"


_ROOTS: dict[str, list[str]] = {}
"""the workspace ``proj`` of each test → its provider's roots (the ``root`` fixture's parameter)"""


@pytest.fixture(params=["one-root", "in-a", "in-b"])
def root(tmp_path: Any, request: pytest.FixtureRequest) -> str:
    """``proj``: the one root, or the first (``in-a``) or second (``in-b``) of two roots with
    the sibling ``peer`` (DEVIATIONS D28): every case runs in each."""
    base = os.path.realpath(str(tmp_path))
    proj, peer = os.path.join(base, "proj"), os.path.join(base, "peer")
    put(os.path.join(peer, "peer.txt"), "needle in peer\n")
    _ROOTS[proj] = {"one-root": [proj], "in-a": [proj, peer], "in-b": [peer, proj]}[request.param]
    put(os.path.join(base, "outside", "secret.txt"), SECRET)
    put(os.path.join(base, "proj-evil", "x.txt"), SECRET)
    put(os.path.join(proj, "inside.txt"), "needle inside\n")
    put(os.path.join(proj, "sub", "deeper.txt"), "needle deeper\n")
    os.symlink("../outside", os.path.join(proj, "out-dir"))
    os.symlink("../outside/secret.txt", os.path.join(proj, "out-file.txt"))
    os.symlink("../../outside", os.path.join(proj, "sub", "parent-out"))
    os.symlink("sub", os.path.join(proj, "in-dir"))
    return proj


def _rooted(root: str, *, profile: str = "default", **config: Any) -> Context:
    ctx = Context(profile=profile)
    ctx.plugin(LocalFileSystem, cwd=root, roots=_ROOTS.get(root, [root]))
    ctx.plugin(ToolFs)
    ctx.plugin(LocalSpillStore)
    ctx.plugin(ToolFsSearch, **config)
    return ctx


@pytest.mark.parametrize("profile", ["default", "reference"])
@pytest.mark.parametrize("path", ["..", "../outside", "/", "<base>/outside", "<base>/proj-evil", "out-dir",
                                  "out-dir/", "out-file.txt", "sub/parent-out", "sub/parent-out/secret.txt",
                                  "/proc/self/root/<base>/outside", "sub/../../outside"])
@pytest.mark.parametrize("tool", ["glob", "grep"])
async def test_paths_outside_the_root_are_refused_as_for_read(root: str, profile: str, path: str, tool: str) -> None:
    ctx = _rooted(root, profile=profile)
    session = Session(root)
    path = path.replace("<base>", os.path.dirname(root))
    args = {"pattern": "*" if tool == "glob" else "needle", "path": path}
    result = await call(ctx, tool, args, session=session)
    read = await call(ctx, "read", {"file_path": path}, session=session)
    assert result.is_error and result.error.code == "FS_PERMISSION_DENIED", result.text
    assert result.text == read.text and "outside the workspace" in result.text
    assert "TOP SECRET" not in result.text


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_the_walk_never_follows_a_symlink_out(root: str, profile: str) -> None:
    ctx = _rooted(root, profile=profile)
    session = Session(root)
    listed = await call(ctx, "glob", {"pattern": "**/*"}, session=session)
    inside_link = ["in-dir/deeper.txt"] if profile == "default" else []  # S8: a link inside is followed
    assert sorted(listed.text.split("\n")) == sorted(["inside.txt", "sub/deeper.txt", *inside_link])
    found = await call(ctx, "grep", {"pattern": "needle"}, session=session)
    assert "TOP SECRET" not in found.text and "inside.txt" in found.text and "sub/deeper.txt" in found.text
    inside = await call(ctx, "grep", {"pattern": "needle", "path": "in-dir"}, session=session)
    assert inside.text == "Found 1 match\n\nin-dir/deeper.txt\nLine 1: needle deeper"  # a link inside: as given


@pytest.mark.parametrize("tool", ["glob", "grep"])
async def test_a_link_into_the_other_root_is_not_followed(root: str, tool: str) -> None:
    """S8 under two roots: the walk stays in the root it starts in, so a link from ``proj``
    into ``peer`` is not walked (as a link out of one root is not); ``peer`` is searched by its
    own path, in its own root."""
    os.symlink("../peer", os.path.join(root, "to-peer"))
    ctx = _rooted(root)
    session = Session(root)
    args = {"pattern": "**/*"} if tool == "glob" else {"pattern": "needle"}
    found = await call(ctx, tool, args, session=session)
    assert not found.is_error and "inside.txt" in found.text and "peer.txt" not in found.text, found.text
    peer = os.path.join(os.path.dirname(root), "peer")
    there = await call(ctx, tool, {**args, "path": peer}, session=session)
    if len(_ROOTS[root]) == 2:
        assert not there.is_error and "peer.txt" in there.text and "inside.txt" not in there.text, there.text
    else:
        assert there.error.code == "FS_PERMISSION_DENIED", there.text


async def test_a_cwd_outside_the_root_is_refused(root: str) -> None:
    result = await call(_rooted(root), "glob", {"pattern": "*"}, session=Session(os.path.dirname(root)))
    assert result.error.code == "FS_PERMISSION_DENIED"


@pytest.mark.parametrize(("profile", "code", "text"), [
    ("default", "FS_PERMISSION_DENIED", 'Error: cannot resolve "<root>/a\\0b": path contains a NUL byte'),
    ("reference", "SEARCH_FAILED", "Error: grep could not start its search command (unusable working directory or missing shell)"),
])
async def test_a_nul_in_the_path(root: str, profile: str, code: str, text: str) -> None:
    result = await call(_rooted(root, profile=profile), "grep", {"pattern": "x", "path": "a\0b"}, session=Session(root))
    assert (result.error.code if result.error else None, result.text) == (code, text.replace("<root>", root))


async def test_a_nul_or_a_lone_surrogate_in_a_pattern(root: str) -> None:
    ctx = _rooted(root)
    nul = await call(ctx, "grep", {"pattern": "a\0b"}, session=Session(root))
    assert (nul.error, nul.text) == (None, "Error: pattern must not contain a NUL character")
    lone = await call(ctx, "grep", {"pattern": "needle|\ud800"}, session=Session(root))
    assert not lone.is_error and "inside.txt" in lone.text  # U+FFFD stands in, as the reference's encoder does


async def test_a_capped_result_is_paged_under_the_root(root: str) -> None:
    """the spill file is outside the root, yet its session reads it (and nobody else)"""
    for i in range(5):
        put(os.path.join(root, f"n{i}.txt"), "needle\n")
    ctx = _rooted(root, grep_max_matches=2)
    session = Session(root)
    capped = await call(ctx, "grep", {"pattern": "needle"}, session=session)
    locator = capped.text.split("stored at: ")[1].split(". Use read")[0]
    assert not locator.startswith(root)
    paged = await call(ctx, "read", {"file_path": locator, "offset": 1, "limit": 1}, session=session)
    # 5 + inside.txt + sub/deeper.txt + in-dir/deeper.txt (S8: the link inside is followed)
    assert paged.text.startswith(f"<path>{locator}</path>") and "1: Found 8 matches" in paged.text
    other = await call(ctx, "read", {"file_path": locator}, session=Session(root))
    assert other.error.code == "FS_PERMISSION_DENIED"
    spill_dir = await call(ctx, "glob", {"pattern": "*", "path": os.path.dirname(locator)}, session=session)
    assert spill_dir.error.code == "FS_PERMISSION_DENIED"


# -- hostile trees -----------------------------------------------------------------------------

@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_fifos_never_hang(ws: str, profile: str) -> None:
    put(os.path.join(ws, "a.txt"), "needle\n")
    os.mkfifo(os.path.join(ws, "pipe"))
    ctx = search_ctx(ws, profile=profile, timeout_ms=20_000)
    session = Session(ws)
    assert (await call(ctx, "grep", {"pattern": "needle"}, session=session)).text == "Found 1 match\n\na.txt\nLine 1: needle"
    assert (await call(ctx, "glob", {"pattern": "*"}, session=session)).text == "a.txt"
    refused = await call(ctx, "grep", {"pattern": "needle", "path": "pipe"}, session=session)
    assert (refused.error.code, refused.text) == ("FS_NOT_REGULAR_FILE",
                                                  f'Error: cannot search "{ws}/pipe": not a regular file or directory')


async def test_binary_and_non_utf8_files(ws: str) -> None:
    put(os.path.join(ws, "bin.dat"), b"\x00\x01needle\n")
    put(os.path.join(ws, "latin1.txt"), b"caf\xe9 needle\n")
    ctx = search_ctx(ws, profile="reference")
    result = await call(ctx, "grep", {"pattern": "needle"}, session=Session(ws))
    assert result.text == "Found 1 match\n\nlatin1.txt\nLine 1: (line is not valid UTF-8)"  # binary files are skipped
    explicit = await call(ctx, "grep", {"pattern": "needle", "path": "bin.dat"}, session=Session(ws))
    assert explicit.text == "Found 1 match\n\nbin.dat\nLine 1: \x00\x01needle"  # as ripgrep searches a named file
    note = "(bin.dat contains NUL bytes, shown as \\u0000: it may be a binary file, searched here as text.)"
    result = await call(search_ctx(ws), "grep", {"pattern": "needle"}, session=Session(ws))  # S14: no drop, no raw bytes
    assert result.text == ("Found 2 matches\n\nbin.dat\nLine 1: \\u0000\\u0001needle\n\n"
                           "latin1.txt\nLine 1: (line is not valid UTF-8)\n\n" + note)


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_a_line_longer_than_the_raw_cap(ws: str, profile: str) -> None:
    """a huge single line: SEARCH_RAW_OUTPUT_OVERFLOW, promptly, in bounded memory"""
    with open(os.path.join(ws, "huge.txt"), "wb") as handle:
        handle.write(b"needle " + b"x" * (3 * 1024 * 1024) + b"\n")
    result = await call(search_ctx(ws, profile=profile, raw_output_max_bytes=1_000_000), "grep", {"pattern": "needle"},
                        session=Session(ws))
    assert result.error.code == "SEARCH_RAW_OUTPUT_OVERFLOW"
