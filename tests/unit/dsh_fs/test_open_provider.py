"""``dsh_fs.open_provider``: one provider factory by URL, and every surface builds through it.

Covers: a directory (bare, relative, ``file://``) → ``LocalFileSystem`` confined to it unless
``root=None``; ``memory://`` → ``MemoryFileSystem``; ``s3://bucket/prefix`` →
``S3FileSystem`` (built, not connected); the profile reaches the provider's rules; unknown
schemes and options are refused; a registered scheme is one entry; ``create_context``,
``dsh-fs mcp``'s ``build_provider``, the CLI tool commands and ``replay`` open their provider
here. Not covered: S3 I/O (``tests/s3``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

import dsh_fs
from dsh_fs import FsError, open_provider
from dsh_fs.fs.filesystem import FileSystem
from dsh_fs.fs_local import LocalFileSystem
from dsh_fs.fs_memory import MemoryFileSystem
from dsh_fs.fs_s3 import S3FileSystem
from dsh_fs.providers import PROVIDERS, register_provider


def _resolve(fs: FileSystem, path: str) -> Any:
    async def go() -> Any:
        return await fs.resolve(path)

    return anyio.run(go)


def test_a_directory_is_a_local_provider_confined_to_it(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    fs = open_provider(str(tmp_path))
    assert isinstance(fs, LocalFileSystem)
    assert (fs.root, fs.cwd) == (str(tmp_path), str(tmp_path))
    assert _resolve(fs, "a.txt").display_path == str(tmp_path / "a.txt")
    with pytest.raises(FsError, match="outside the workspace"):
        _resolve(fs, "/etc/passwd")
    assert open_provider(f"file://{tmp_path}").root == str(tmp_path)
    assert open_provider(tmp_path).root == str(tmp_path)  # a PathLike


def test_root_none_serves_the_whole_disk_and_cwd_is_the_base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    fs = open_provider(str(tmp_path), root=None, cwd=str(tmp_path / "sub"))
    assert isinstance(fs, LocalFileSystem) and fs.root is None and fs.cwd == str(tmp_path / "sub")
    assert _resolve(fs, "/etc/passwd").display_path == "/etc/passwd"
    monkeypatch.chdir(tmp_path)
    assert open_provider("sub").root == str(tmp_path / "sub")  # relative to the process cwd
    with pytest.raises(ValueError, match="not a directory"):
        open_provider(str(tmp_path / "missing"))


def test_memory_and_s3_urls() -> None:
    mem = open_provider("memory://", profile="reference", files={"/a.txt": "hi"})
    assert isinstance(mem, MemoryFileSystem) and mem.rules.keep_bom is False
    assert _resolve(mem, "a.txt").display_path == "/a.txt"
    named = open_provider("memory://scratch", root="/ws")
    assert (named.root, named.cwd) == ("/ws", "/ws")  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="names a path"):
        open_provider("memory://a/b")
    s3 = open_provider("s3://bucket/some/prefix", endpoint_url="http://127.0.0.1:1", root="/ws")
    assert isinstance(s3, S3FileSystem)
    assert (s3.location.bucket, s3.location.prefix, s3.root, s3.rules.keep_bom) == ("bucket", "some/prefix/", "/ws", True)


def test_bad_urls_and_options_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r'unknown scheme "ftp" in "ftp://x" \(a directory, or docker://, file://, kubectl://, memory://, podman://, s3://, ssh://\)'):
        open_provider("ftp://x")
    with pytest.raises(ValueError, match="not an absolute file URL"):
        open_provider("file://relative/dir")
    with pytest.raises(ValueError, match="profile must be"):
        open_provider(str(tmp_path), profile="better")
    with pytest.raises(TypeError):
        open_provider("memory://", endpoint_url="http://x")
    with pytest.raises(ValueError, match="expected an s3://bucket/prefix URL"):
        open_provider("s3://")
    with pytest.raises(ValueError, match="not a URL scheme"):
        register_provider("Bad Scheme", lambda *a, **k: MemoryFileSystem())


def test_a_new_provider_is_one_registry_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    def opener(location: str, **options: Any) -> FileSystem:
        seen.append((location, options))
        return MemoryFileSystem(profile=options["profile"], files={"/hello.txt": "hello\n"})

    monkeypatch.setitem(PROVIDERS, "demo", opener)
    fs = open_provider("demo://anything", profile="reference")
    assert seen == [("anything", {"profile": dsh_fs.Profile.REFERENCE, "root": ..., "cwd": None})]

    async def go() -> str:
        async with dsh_fs.create_context(provider=fs, profile="reference") as ctx:
            result = await ctx.tools.execute("read", {"file_path": "/hello.txt"}, session=dsh_fs.Session(cwd="/"))
            return result.text

    assert "1: hello" in anyio.run(go)


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """Every ``open_provider`` call of a local directory, recorded (then served as usual)."""
    calls: list[tuple[str, dict[str, Any]]] = []
    real = PROVIDERS["file"]

    def recording(location: str, **options: Any) -> FileSystem:
        calls.append((location, options))
        return real(location, **options)

    monkeypatch.setitem(PROVIDERS, "file", recording)
    return calls


def test_every_surface_opens_its_provider_here(tmp_path: Path, opened: list[tuple[str, dict[str, Any]]]) -> None:
    from dsh_fs.cli import tool_cmds
    from dsh_fs.cli.replay import replay_scenario
    from dsh_fs.mcp.options import ServeOptions, build_provider

    ws = str(tmp_path)
    ctx = dsh_fs.create_context(cwd=ws)  # the library: confined to the cwd
    assert opened[-1] == (ws, {"profile": dsh_fs.Profile.DEFAULT, "root": ..., "cwd": ws})
    assert ctx.fs.root == ws
    fs = build_provider(ServeOptions(root=ws, profile="reference"))  # dsh-fs mcp: confined to --root
    assert opened[-1] == (ws, {"profile": dsh_fs.Profile.REFERENCE, "root": ..., "cwd": None})
    assert isinstance(fs, LocalFileSystem) and fs.root == ws
    cli = tool_cmds._context(tool_cmds._Options(profile="default", caps={}, cwd=ws), faces=())  # no root
    assert opened[-1] == (ws, {"profile": dsh_fs.Profile.DEFAULT, "root": None, "cwd": None})
    assert cli.fs.root is None
    before = len(opened)
    out = anyio.run(lambda: replay_scenario({"files": {"a.txt": "x\n"},
                                             "calls": [{"tool": "read", "args": {"file_path": "<ws>/a.txt"}}]}))
    assert len(opened) == before + 1 and opened[-1][1]["root"] is None
    assert os.path.basename(opened[-1][0]).startswith("dsh-fs-replay-")
    assert "1: x" in str(out["results"])
