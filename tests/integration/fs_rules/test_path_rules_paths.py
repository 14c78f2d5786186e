"""Path rules against every other spelling of a denied path (docs/PATH-RULES.md, DEVIATIONS
P2–P4): symlinks (a file link, a directory link, a link chain, a link the search follows),
``..``, absolute paths, case variants and NFC/NFD variants of a name — through the file tools,
``list``, ``glob`` and ``grep`` on the local disk (ripgrep on host paths), and a hostile
repository that plants links to what the operator fenced off. Case and Unicode variants on the
memory provider too. The tool matrix: test_path_rules_matrix.py.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path
from typing import Any

import pytest

import dsh_fs
from dsh_fs import Session

pytestmark = pytest.mark.anyio

NFC = unicodedata.normalize("NFC", "café.txt")
NFD = unicodedata.normalize("NFD", "café.txt")
SECRET = "TOPSECRET"


def _repo(root: Path) -> Path:
    """A repository with a fenced ``.env`` and ``secrets/``, and links planted into them."""
    (root / "secrets" / "deep").mkdir(parents=True)
    (root / "src").mkdir()
    (root / ".env").write_text(f"KEY={SECRET}\n")
    (root / "secrets" / "key.txt").write_text(f"{SECRET} key\n")
    (root / "secrets" / "deep" / "more.txt").write_text(f"{SECRET} more\n")
    (root / "src" / "main.py").write_text("print('hello')\n")
    (root / NFD).write_text(f"{SECRET} nfd\n")  # the disk keeps the NFD spelling (Linux does not normalize)
    (root / "UPPER.PEM").write_text(f"{SECRET} upper\n")
    os.symlink(".env", root / "innocent.txt")  # a file link to a denied file
    os.symlink("secrets", root / "docs")  # a directory link into a denied tree
    os.symlink("../secrets/key.txt", root / "src" / "config.txt")  # from below
    os.symlink("innocent.txt", root / "chain.txt")  # a chain: chain -> innocent -> .env
    os.symlink("deep", root / "secrets" / "shortcut")  # inside the denied tree
    return root


RULES = {"deny": [".env", "secrets/", NFC, "*.pem"]}


def _ctx(root: Path, **options: Any) -> Any:
    return dsh_fs.create_context(cwd=root, faces=["apply_patch"], **RULES, **options)


@pytest.mark.parametrize("path", [
    ".env", ".ENV", ".Env", "./.env", "src/../.env", "innocent.txt", "chain.txt", "docs/key.txt",
    "docs/deep/more.txt", "src/config.txt", "secrets/shortcut/more.txt", NFC, NFD, NFC.upper(), "UPPER.PEM",
    "upper.pem", "secrets", "docs",
])
async def test_every_spelling_of_a_denied_path_is_refused_p5(tmp_path: Path, path: str) -> None:
    root = _repo(tmp_path / "repo")
    ctx = _ctx(root)
    session = Session(cwd=root)
    for call in (("read", {"file_path": path}), ("write", {"file_path": path, "content": "x\n"}),
                 ("edit", {"file_path": path, "old_string": "KEY", "new_string": "k"}),
                 ("list", {"path": path}), ("grep", {"pattern": ".", "path": path}),
                 ("read", {"file_path": str(root / path)})):
        result = await ctx.tools.execute(*call, session=session)
        assert result.is_error, (call, result.text)
        assert "permission denied — the path rules deny access to it" in result.text, (call, result.text)
        assert result.error is not None and result.error.code == "FS_PERMISSION_DENIED"
        assert SECRET not in result.text
    assert (root / ".env").read_text() == f"KEY={SECRET}\n"
    await ctx.aclose()


async def test_a_hostile_repository_shows_nothing_fenced_off_p4(tmp_path: Path) -> None:
    """Planted links (to a denied file, into a denied tree, from below, a chain) and case/Unicode
    variants: no listing, glob or grep result names them or shows their content, nor counts
    them, nor does the saved complete result."""
    root = _repo(tmp_path / "repo")
    spill = tmp_path / "spill"
    ctx = _ctx(root, spill_root=spill, glob_max_results=1, grep_max_matches=1)
    session = Session(cwd=root)
    glob = await ctx.tools.execute("glob", {"pattern": "**/*"}, session=session)
    assert not glob.is_error, glob.text
    listed = glob.text.splitlines()
    assert listed[0] == "src/main.py"  # the one file left (capped at 1: the rest is saved)
    grep = await ctx.tools.execute("grep", {"pattern": "."}, session=session)
    assert grep.text.startswith("Found 1 match"), grep.text  # one file: src/main.py
    nothing = await ctx.tools.execute("grep", {"pattern": SECRET}, session=session)
    assert nothing.text == "No matches found", nothing.text
    for pattern in ("**/.env", "**/*key*", "**/docs/**", "**/*.txt", "**/innocent.txt", "*"):
        found = await ctx.tools.execute("glob", {"pattern": pattern}, session=session)
        assert all(name in ("src/main.py",) for name in found.text.splitlines()[:1] if name != "No files found"), \
            (pattern, found.text)
    listing = await ctx.tools.execute("list", {"path": "."}, session=session)
    for name in (".env", "secrets", "docs", "innocent.txt", "chain.txt", "UPPER.PEM", NFD, NFC):
        assert name not in listing.text, listing.text
        assert name not in glob.text and name not in grep.text
    sub = await ctx.tools.execute("list", {"path": "src"}, session=session)
    assert "config.txt" not in sub.text and "main.py" in sub.text
    saved = [p.read_text() for p in spill.rglob("*") if p.is_file()]
    assert saved == [] or all(SECRET not in text and ".env" not in text and "innocent" not in text for text in saved)
    await ctx.aclose()


async def test_search_from_a_subdirectory_and_absolute_paths(tmp_path: Path) -> None:
    """ripgrep printing ``../x`` (a path reaching out of the working directory) and absolute
    paths (a path argument elsewhere): denied entries are still left out."""
    root = _repo(tmp_path / "repo")
    ctx = _ctx(root)
    session = Session(cwd=root / "src")
    for call in (("glob", {"pattern": "**/*", "path": ".."}), ("grep", {"pattern": ".", "path": ".."}),
                 ("glob", {"pattern": "**/*", "path": str(root)}), ("grep", {"pattern": ".", "path": str(root)})):
        result = await ctx.tools.execute(*call, session=session)
        assert not result.is_error, (call, result.text)
        assert "main.py" in result.text
        assert SECRET not in result.text
        for name in (".env", "secrets", "docs/", "innocent", "chain", "UPPER", "café", "cafe"):
            assert name not in result.text, (call, name, result.text)
    await ctx.aclose()


async def test_a_link_made_after_the_walk_is_still_filtered(tmp_path: Path) -> None:
    """The output filter judges every printed path itself (its real path): a host filter over
    paths ripgrep printed, with no walk before it."""
    from dsh_fs.tool_fs_search.denied import HostRules

    root = _repo(tmp_path / "repo")
    ctx = _ctx(root)
    view = await ctx.fs.path_rules()
    rules = HostRules(view, str(root))
    assert rules.admit_many(["src/main.py", "innocent.txt", "docs/key.txt", "src/config.txt", ".ENV", NFD,
                             "secrets/shortcut/more.txt", "src/../.env", str(root / ".env")]) == ["src/main.py"]
    os.symlink("../.env", root / "src" / "late.txt")
    assert not rules.admit("src/late.txt")
    await ctx.aclose()


async def test_a_denied_name_is_no_near_miss_hint(tmp_path: Path) -> None:
    """``read`` of a missing lookalike and ``glob`` finding nothing never suggest a denied name."""
    root = _repo(tmp_path / "repo")
    ctx = _ctx(root)
    session = Session(cwd=root)
    for call in (("read", {"file_path": ".envv"}), ("glob", {"pattern": ".envv"}), ("read", {"file_path": "secret"})):
        result = await ctx.tools.execute(*call, session=session)
        assert ".env\n" not in result.text + "\n" and '".env"' not in result.text and "secrets" not in result.text, \
            (call, result.text)
    await ctx.aclose()


async def test_case_and_unicode_variants_on_memory() -> None:
    from dsh_fs.fs_memory import MemoryFileSystem

    memory = MemoryFileSystem({"Secrets/A.txt": "x\n", NFD: "y\n", "ok.txt": "ok\n"})
    ctx = dsh_fs.create_context(provider=memory, deny=["secrets/", NFC], list_tool=True)
    session = Session(cwd="/")
    for path in ("Secrets/A.txt", "SECRETS/a.txt", NFD, NFC):
        result = await ctx.tools.execute("read", {"file_path": path}, session=session)
        assert result.is_error and "deny access to it" in result.text, (path, result.text)
    listing = await ctx.tools.execute("list", {"path": "/"}, session=session)
    assert "ok.txt" in listing.text and "Secrets" not in listing.text and NFD not in listing.text
    found = await ctx.tools.execute("glob", {"pattern": "**/*"}, session=session)
    assert found.text == "ok.txt", found.text
    await ctx.aclose()


async def test_the_prompt_tells_the_rules_exist_without_the_patterns(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    ctx = _ctx(root)
    text = ctx.system_prompt.render(only="tool:")
    assert "Path rules:" in text and ".env" not in text and "secrets" not in text
    await ctx.aclose()
    shown = _ctx(root, show_rules=True)
    text = shown.system_prompt.render(only="tool:")
    assert "Denied (gitignore patterns, relative to each workspace root): .env, secrets/" in text
    await shown.aclose()


async def test_denied_ignore_files_and_vcs_on_memory_p4() -> None:
    """A search on a provider without host paths copies the ancestors' ignore files: a denied
    one is left out as if absent (the search still runs), and a denied file is never copied."""
    from dsh_fs.fs_memory import MemoryFileSystem

    memory = MemoryFileSystem({"sub/a.txt": "needle\n", ".gitignore": "x\n", ".git/info/exclude": "y\n",
                               "sub/.env": "needle\n"})
    ctx = dsh_fs.create_context(provider=memory, deny=[".gitignore", ".git/", ".env"])
    session = Session(cwd="/sub")
    found = await ctx.tools.execute("grep", {"pattern": "needle"}, session=session)
    assert found.text.startswith("Found 1 match") and "a.txt" in found.text and ".env" not in found.text, found.text
    files = await ctx.tools.execute("glob", {"pattern": "**/*", "path": "/"}, session=session)
    assert files.text == "a.txt", files.text  # shown relative to the working directory (§6.3)
    await ctx.aclose()


async def test_deepagents_backend_sees_nothing_fenced_off(tmp_path: Path) -> None:
    """deepagents' ``BackendProtocol`` reads, lists and searches through ``ctx.fs`` (the rules
    wrapper): a denied file is refused and never listed or found."""
    from dsh_fs.adapters.deepagents import DshFsBackend

    root = _repo(tmp_path / "repo")
    ctx = _ctx(root)
    backend = DshFsBackend(ctx, session=Session(cwd=root))
    read = await backend.aread(str(root / ".env"))
    assert SECRET not in repr(read)
    listed = repr(await backend.als(str(root)))
    globbed = repr(await backend.aglob("**/*", str(root)))
    grepped = repr(await backend.agrep(SECRET, str(root)))
    for text in (listed, globbed, grepped):
        assert SECRET not in text and "innocent" not in text and "secrets" not in text, text
    assert "main.py" in globbed
    await ctx.aclose()


async def test_links_on_the_far_side_of_a_channel_p5(tmp_path: Path) -> None:
    """The provider over a command channel (a subprocess helper): planted links on the far side
    are judged by where they lead, in reads, listings and searches."""
    from dsh_fs.testing.channels import ChannelWorkspace, far_python, subprocess_channel

    root = _repo(tmp_path / "repo")
    ws = ChannelWorkspace(str(root), subprocess_channel, python=far_python(), lock_dir=str(tmp_path / "locks"))
    ctx = dsh_fs.create_context(provider=await ws.provider(), list_tool=True, **RULES)
    session = Session(cwd=ws.root)
    for path in ("innocent.txt", "chain.txt", "docs/key.txt", "src/config.txt", ".ENV", NFD):
        result = await ctx.tools.execute("read", {"file_path": path}, session=session)
        assert result.is_error and "deny access to it" in result.text, (path, result.text)
    listing = await ctx.tools.execute("list", {"path": "."}, session=session)
    found = await ctx.tools.execute("glob", {"pattern": "**/*"}, session=session)
    grep = await ctx.tools.execute("grep", {"pattern": "."}, session=session)
    for text in (listing.text, found.text, grep.text):
        assert SECRET not in text and "innocent" not in text and "docs" not in text and ".env" not in text, text
    assert "main.py" in found.text and "main.py" in grep.text
    await ctx.aclose()
    await ws.aclose()
