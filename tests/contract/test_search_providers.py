"""``glob``/``grep`` give the same answers on every provider (tracker issue 10, item 3): one
tree is built on the local disk, in memory and on S3 (moto), and the same calls must print
the same texts — modification-time order included (S3: LastModified; the tree is built in
groups a little over a second apart, S3's resolution) — in both profiles.

What the tools print is checked in detail elsewhere (tests/integration/tool_fs_search/test_search_tools.py);
this proves the providers without host paths (the mirror) agree with ripgrep on the disk.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.testing.fixtures import LocalFixtures, MemoryFixtures, S3Fixtures
from dsh_fs.testing.workspaces import Workspace

GROUPS: list[dict[str, bytes]] = [
    {"src/old.py": b"needle one\n"},
    {"src/mid.py": b"x\nneedle two\n", ".gitignore": b"ignored/\n", ".git/HEAD": b"ref: main\n"},
    {"new.py": b"needle three\r\n", "ignored/skip.txt": b"needle ignored\n", ".hidden/h.txt": b"needle hidden\n",
     "bin.dat": b"\x00needle\n", "latin.txt": b"caf\xe9 needle\n", "docs/readme.md": b"needle in docs\nneedle again\n",
     "docs/sub/deep.md": b"no\n"},
]

EXPECT_GREP = (  # S14: bin.dat searched as text, its NUL escaped; S13: what the rules left out
    "Found 7 matches\n\nbin.dat\nLine 1: \\u0000needle\n\ndocs/readme.md\nLine 1: needle in docs\nLine 2: needle again\n\n"
    "latin.txt\nLine 1: (line is not valid UTF-8)\n\nnew.py\nLine 1: needle three\n\n"
    "src/mid.py\nLine 2: needle two\n\nsrc/old.py\nLine 1: needle one\n\n"
    "(bin.dat contains NUL bytes, shown as \\u0000: it may be a binary file, searched here as text.)\n\n"
    "(3 files were not searched: ignored or hidden (.gitignore, .hidden/, ignored/); name one as path to search it.)"
)


class SearchContract:
    """The shared expectations; mixed with a ``workspace`` fixture per provider."""

    pytestmark = [pytest.mark.anyio]


    async def _build(self, workspace: Workspace) -> None:
        for index, group in enumerate(GROUPS):
            if index:
                await anyio.sleep(1.1)
            for rel, data in group.items():
                await workspace.put(rel, data)

    async def _ctx(self, workspace: Workspace, profile: str, **config: Any) -> dsh_fs.Context:
        return dsh_fs.create_context(provider=await workspace.provider(profile=profile), profile=profile, **config)

    async def test_same_answers_everywhere(self, workspace: Workspace) -> None:
        await self._build(workspace)
        session = Session()
        session.cwd = workspace.root
        default = await self._ctx(workspace, "default", grep_max_matches=2)
        reference = await self._ctx(workspace, "reference")

        async def text(ctx: dsh_fs.Context, tool: str, **args: Any) -> str:
            return (await ctx.tools.execute(tool, args, session=session)).text

        newest = ["new.py", "src/mid.py", "src/old.py"]
        assert (await text(default, "glob", pattern="**/*.py")).split("\n") == newest  # S1
        assert (await text(reference, "glob", pattern="*.py")).split("\n") == newest[::-1]
        assert (await text(reference, "glob", pattern="src/**", path="src")).split("\n") == ["src/old.py", "src/mid.py"]
        assert (await text(reference, "glob", pattern="*.py", path=workspace.path("src"))).split("\n") == [
            "src/old.py", "src/mid.py"]
        everything = sorted((await text(default, "glob", pattern="*")).split("\n"))
        assert everything == sorted([".gitignore", ".hidden/h.txt", "bin.dat", "docs/readme.md", "docs/sub/deep.md",
                                     "ignored/skip.txt", "latin.txt", "new.py", "src/mid.py", "src/old.py"])
        assert await text(default, "glob", pattern="*.rs") == "No files found"

        full = await self._ctx(workspace, "default")
        assert await text(full, "grep", pattern="needle") == EXPECT_GREP  # S2: path order, ignore rules, hidden
        assert await text(full, "grep", pattern="needle", path="docs", include="*.md") == (
            "Found 2 matches\n\ndocs/readme.md\nLine 1: needle in docs\nLine 2: needle again")
        assert await text(full, "grep", pattern="needle", path="bin.dat") == (  # S14
            "Found 1 match\n\nbin.dat\nLine 1: \\u0000needle\n\n"
            "(bin.dat contains NUL bytes, shown as \\u0000: it may be a binary file, searched here as text.)")
        assert await text(reference, "grep", pattern="needle", path="bin.dat") == "Found 1 match\n\nbin.dat\nLine 1: \x00needle"
        assert await text(full, "grep", pattern="needle", path="ignored/skip.txt") == (
            "Found 1 match\n\nignored/skip.txt\nLine 1: needle ignored")
        in_docs = Session()
        in_docs.cwd = workspace.path("docs")
        assert (await full.tools.execute("grep", {"pattern": "needle", "path": ".."}, session=in_docs)).text.startswith(
            "Found 7 matches\n\n../bin.dat\nLine 1: \\u0000needle\n\n../docs/readme.md\nLine 1: needle in docs")
        missing = await full.tools.execute("grep", {"pattern": "x", "path": "nope"}, session=session)
        assert (missing.error.code, missing.text) == ("FS_NOT_FOUND", f'Error: cannot search "{workspace.path("nope")}": not found')
        refused = await reference.tools.execute("grep", {"pattern": "x", "path": "nope"}, session=session)
        assert refused.text == (
            "Error: grep search failed (exit 2): rg: nope: IO error for operation on nope: No such file or directory (os error 2)")

        capped = await text(default, "grep", pattern="needle")
        assert capped.startswith("Found 2 of 7 matches\n\nbin.dat\nLine 1: \\u0000needle\n\ndocs/readme.md\nLine 1: needle in docs")
        locator = capped.split("stored at: ")[1].split(". Use read")[0]
        paged = await default.tools.execute("read", {"file_path": locator}, session=session)
        assert "1: Found 7 matches\n2: \n3: bin.dat" in paged.text


class TestLocal(LocalFixtures, SearchContract):
    pass


class TestMemory(MemoryFixtures, SearchContract):
    pass


class TestS3(S3Fixtures, SearchContract):
    pass
