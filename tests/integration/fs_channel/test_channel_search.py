"""``glob``/``grep`` over a channel run ripgrep on the far side (DEVIATIONS C4): which ripgrep
(the far side's own of this side's version; else this side's sent once, checked by hash and
kept in the far side's cache; a tampered cache is sent again), the fallback to reading through
the provider when none can run there (another platform), and the far side's directory
questions staying inside the root."""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest

import dsh_fs
from channelkit import seed
from dsh_fs.fs_channel import ChannelFileSystem, CommandChannel
from dsh_fs.fs_channel import search as channel_search
from dsh_fs.testing.channels import far_python
from dsh_fs.tool_fs_search.engine import find_ripgrep

pytestmark = pytest.mark.anyio


def _far_env(tmp_path: Any, path: str = "/usr/bin:/bin") -> dict[str, str]:
    """The far side's environment: its own cache (``XDG_CACHE_HOME``) and ``PATH``."""
    cache = os.path.join(str(tmp_path), "far-cache")
    os.makedirs(cache, exist_ok=True)
    return {"PATH": path, "XDG_CACHE_HOME": cache, "HOME": str(tmp_path)}


def _fs(root: str, env: dict[str, str]) -> ChannelFileSystem:
    return ChannelFileSystem(CommandChannel([], identity="command://local", env=env), root=root, python=far_python())


async def _grep(fs: ChannelFileSystem, root: str) -> str:
    ctx = dsh_fs.create_context(provider=fs, cwd=root)
    async with ctx:
        result = await ctx.tools.execute("grep", {"pattern": "TODO", "include": "*.py"}, session=dsh_fs.Session(cwd=root))
        return result.text


EXPECTED = "Found 2 matches\n\nlinked/util.py\nLine 5:     return x * 2  # TODO\n\nsrc/util.py\nLine 5:     return x * 2  # TODO"


async def test_this_sides_ripgrep_is_sent_once_then_taken_from_the_far_cache(tmp_path: Any) -> None:
    root = os.path.realpath(os.path.join(str(tmp_path), "p"))
    seed(root)
    env = _far_env(tmp_path)
    fs = _fs(root, env)
    assert await _grep(fs, root) == EXPECTED  # links followed inside the root (S8): ripgrep ran there
    kept = [n for n in os.listdir(os.path.join(env["XDG_CACHE_HOME"], "dsh-fs", "helper")) if n.endswith(".rg")]
    assert len(kept) == 1
    again = _fs(root, env)
    connection = await again.connection()
    assert await again.search_host().available(find_ripgrep() or "") is True
    assert connection.notes["rg"] is True
    await again.aclose()
    cached = os.path.join(env["XDG_CACHE_HOME"], "dsh-fs", "helper", kept[0])
    with open(cached, "r+b") as handle:  # tampered with in the far side's cache: not run, sent again
        handle.seek(100)
        handle.write(b"\xcc" * 16)
    assert await _grep(_fs(root, env), root) == EXPECTED
    with open(cached, "rb") as handle, open(find_ripgrep() or "", "rb") as ours:
        assert handle.read() == ours.read()


async def test_the_far_sides_own_ripgrep_of_the_same_version_is_used(tmp_path: Any) -> None:
    root = os.path.realpath(os.path.join(str(tmp_path), "p"))
    seed(root)
    bin_dir = os.path.join(str(tmp_path), "bin")
    os.makedirs(bin_dir)
    shutil.copy(find_ripgrep() or "", os.path.join(bin_dir, "rg"))
    env = _far_env(tmp_path, path=f"{bin_dir}:/usr/bin:/bin")
    assert await _grep(_fs(root, env), root) == EXPECTED
    assert not os.path.exists(os.path.join(env["XDG_CACHE_HOME"], "dsh-fs", "helper")) or not [
        n for n in os.listdir(os.path.join(env["XDG_CACHE_HOME"], "dsh-fs", "helper")) if n.endswith(".rg")]


async def test_another_platform_reads_through_the_provider_with_the_same_results(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    root = os.path.realpath(os.path.join(str(tmp_path), "p"))
    seed(root)
    for link in ("linked", "readme-link.md"):  # the provider's walk never follows a link
        os.unlink(os.path.join(root, link))
    monkeypatch.setattr(channel_search.platform, "machine", lambda: "m68k")
    assert await _grep(_fs(root, _far_env(tmp_path)), root) == \
        "Found 1 match\n\nsrc/util.py\nLine 5:     return x * 2  # TODO"
    async with _fs(root, _far_env(tmp_path)) as fs:
        assert await fs.search_host().available(find_ripgrep() or "") is False


async def test_the_far_sides_directory_questions_stay_inside_the_root(tmp_path: Any) -> None:
    root = os.path.realpath(os.path.join(str(tmp_path), "p"))
    seed(root)
    async with _fs(root, _far_env(tmp_path)) as fs:
        host = fs.search_host()
        assert await host.names("/etc") == []
        assert await host.directories(["/etc", root, os.path.join(root, "src"), os.path.join(root, "linked"),
                                       os.path.join(root, "README.md")]) == [False, True, True, True, False]
        assert "main.py" in await host.names(os.path.join(root, "src"))
