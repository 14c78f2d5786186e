"""A search under deny rules never reaches a denied file through a name that means another
directory to ripgrep than to this process (deviation P4; ``tool_fs_search.denied``).

``/proc/self/cwd`` is ripgrep's working directory (the session's) to ripgrep, and this
process's own working directory here, where the walk for denied entries and the judgment of
each printed path run. Without a containment root, ``grep`` of ``/proc/self/cwd`` (or of a
hostile repository's ``here -> /proc/self/cwd``, or of the directory holding that link) showed
the session's denied files: the walk found nothing to exclude below this process's directory,
and each printed path's real path was judged here. Now such a path is searched where this
process resolves it (as ``read`` would), a link through one is kept from ripgrep, and a printed
path through one is never shown. And a symlink loop's notice beside ripgrep's "No files were
searched" does not turn P4's no-match answer into a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.tool_fs_search.denied import process_relative

pytestmark = pytest.mark.anyio

SECRETS = ("TOKEN=S3CR3T_ENV", "S3CR3T_KEY")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    root = os.path.realpath(tmp_path / "ws")
    os.makedirs(f"{root}/secrets")
    os.makedirs(f"{root}/pub")
    Path(root, ".env").write_text("TOKEN=S3CR3T_ENV\n")
    Path(root, "secrets", "key.txt").write_text("S3CR3T_KEY\n")
    Path(root, "pub", "ok.txt").write_text("fine S3CR3T_NOT\n")
    os.symlink("/proc/self/cwd", f"{root}/pub/here")  # planted by the repository
    elsewhere = tmp_path / "elsewhere"  # this process's working directory
    elsewhere.mkdir()
    (elsewhere / "h.txt").write_text("harmless S3CR3T_NOT\n")
    monkeypatch.chdir(elsewhere)
    return root


@pytest.mark.parametrize("path", ["/proc/self/cwd", "/proc/thread-self/cwd", "pub/here", "pub", "."])
@pytest.mark.parametrize("mode", ["content", "files_with_matches"])
async def test_P4_no_denied_file_through_a_process_name(repo: str, path: str, mode: str) -> None:
    ctx = dsh_fs.create_context(root=None, cwd=repo, deny=["/.env", "/secrets/"])
    async with ctx:
        session = Session(repo)
        grep = await ctx.tools.execute("grep", {"pattern": "S3CR3T", "path": path, "output_mode": mode}, session=session)
        glob = await ctx.tools.execute("glob", {"pattern": "**/*", "path": path}, session=session)
    assert not grep.is_error and not glob.is_error, (grep.text, glob.text)
    for text in (grep.text, glob.text):
        assert not any(secret in text for secret in SECRETS) and "key.txt" not in text and ".env" not in text, text
    if path not in ("pub", "."):  # searched where this process resolves it, as read would
        assert "h.txt" in glob.text and "harmless S3CR3T_NOT" in grep.text or mode != "content", grep.text
    if path == "pub":
        assert "pub/ok.txt" in glob.text and "here" not in glob.text, glob.text


def test_process_relative_follows_links_and_dotdot(tmp_path: Path) -> None:
    os.symlink("/proc/self/fd", tmp_path / "fds")
    os.symlink("fds", tmp_path / "chain")
    os.symlink("/dev/stdin", tmp_path / "stdin")
    os.symlink(str(tmp_path), tmp_path / "loop")
    assert process_relative("/proc/self/cwd") and process_relative("/proc/thread-self/root/etc")
    assert process_relative(f"{tmp_path}/chain/1") and process_relative(f"{tmp_path}/stdin")
    assert process_relative("/dev/fd/0") and process_relative(f"{tmp_path}/loop/fds")
    assert not process_relative(f"/proc/{os.getpid()}/cwd") and not process_relative(str(tmp_path))
    assert process_relative(f"{tmp_path}/fds/../../1/cwd")  # through /proc/self on the way: said so (errs on the safe side)
    assert not process_relative(f"{tmp_path}/missing/self") and not process_relative("/")


@pytest.mark.parametrize("include", [".env", "*.none"])
async def test_P4_a_symlink_loop_does_not_turn_no_match_into_a_failure(tmp_path: Path, include: str) -> None:
    """Every file the ``include`` selects is denied (or none exists) in a tree with a symlink
    loop: ripgrep says both "File system loop found" (S8/S15: no failure) and "No files were
    searched" (P4: no failure); together they are none either."""
    root = os.path.realpath(tmp_path / "ws")
    os.makedirs(f"{root}/sub")
    Path(root, ".env").write_text("TOKEN=S3CR3T_ENV\n")
    Path(root, "a.txt").write_text("hi\n")
    os.symlink("..", f"{root}/sub/loop")
    ctx = dsh_fs.create_context(cwd=root, deny=[".env"])
    async with ctx:
        result = await ctx.tools.execute("grep", {"pattern": "TOKEN", "include": include}, session=Session(root))
    assert not result.is_error and result.text == "No matches found", result.text
