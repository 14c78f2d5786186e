"""Searches that never silently miss (docs/SEARCH.md, DEVIATIONS S7–S10), in the bug
reports' own situations, on the local disk, in memory and on S3 (moto): each default-profile
answer and the ``reference`` profile's unchanged one. Symlinks exist on the local disk only
(the other providers have none): S8's links are built there, under a containment root.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.testing.fixtures import LocalFixtures, MemoryFixtures, S3Fixtures
from dsh_fs.testing.workspaces import LocalWorkspace, Workspace


class MissContract:
    pytestmark = [pytest.mark.anyio]


    async def _tools(self, workspace: Workspace, files: dict[str, bytes]) -> Any:
        for rel, data in files.items():
            await workspace.put(rel, data)
        session = Session()
        session.cwd = workspace.root
        contained = {"root": workspace.root} if isinstance(workspace, LocalWorkspace) else {}  # as dsh-fs mcp
        contexts = {p: dsh_fs.create_context(provider=await workspace.provider(profile=p, **contained), profile=p)
                    for p in ("default", "reference")}

        async def text(profile: str, tool: str, **args: Any) -> str:
            return (await contexts[profile].tools.execute(tool, args, session=session)).text

        return text

    async def test_s7_a_literal_name_that_differs_in_case_gets_a_hint(self, workspace: Workspace) -> None:
        text = await self._tools(workspace, {"roadmap.md": b"r\n", "docs/Guide.md": b"g\n"})
        hint = f'No files found\nHint: "{workspace.path("roadmap.md")}" exists: only letter case differs.'
        assert await text("default", "glob", pattern="ROADMAP.md") == hint
        assert await text("default", "glob", pattern="**/ROADMAP.md") == hint
        assert await text("default", "glob", pattern="guide.md", path="docs") == (
            f'No files found\nHint: "{workspace.path("docs/Guide.md")}" exists: only letter case differs.')
        assert await text("default", "glob", pattern="*.rs") == "No files found"  # a wildcard: no hint
        assert await text("default", "glob", pattern="nothing-like-it.md") == "No files found"
        assert await text("reference", "glob", pattern="ROADMAP.md") == "No files found"

    async def test_s8_links_inside_the_root_are_followed(self, workspace: Workspace) -> None:
        text = await self._tools(workspace, {"real/a.md": b"needle\n", "real/sub/b.md": b"needle\n"})
        if isinstance(workspace, LocalWorkspace):  # the report's situation: symlink -> real
            outside = workspace.root + ".outside"
            os.makedirs(outside, exist_ok=True)
            with open(os.path.join(outside, "secret.md"), "w") as handle:
                handle.write("needle\n")
            os.symlink("real", workspace.path("symlink"))
            os.symlink(outside, workspace.path("out"))  # leads out: never listed, never searched
            os.symlink("..", workspace.path("up"))  # out and back in (and a loop)
            os.symlink("real/a.md", workspace.path("alias.md"))
            os.symlink(os.path.join(outside, "secret.md"), workspace.path("leak.md"))
            assert await text("default", "glob", pattern="symlink/*") == "symlink/a.md"
            assert sorted((await text("default", "glob", pattern="symlink/**/*")).split("\n")) == [
                "symlink/a.md", "symlink/sub/b.md"]
            assert sorted((await text("default", "glob", pattern="**/*.md")).split("\n")) == [
                "alias.md", "real/a.md", "real/sub/b.md", "symlink/a.md", "symlink/sub/b.md"]
            grep = await text("default", "grep", pattern="needle")
            assert grep.startswith("Found 5 matches\n\nalias.md\n") and "secret" not in grep and "up/" not in grep
            assert await text("default", "glob", pattern="out/*") == "No files found"
            assert await text("reference", "glob", pattern="symlink/*") == "No files found"
            assert sorted((await text("reference", "glob", pattern="**/*.md")).split("\n")) == ["real/a.md", "real/sub/b.md"]
        assert sorted((await text("default", "glob", pattern="real/**/*")).split("\n")) == ["real/a.md", "real/sub/b.md"]
        assert (await text("default", "grep", pattern="needle", path="real")).startswith("Found 2 matches\n\nreal/a.md")


    async def test_s15_a_dangling_symlink_does_not_fail_the_search(self, workspace: Workspace) -> None:
        text = await self._tools(workspace, {"a.md": b"needle\n", "sub/b.md": b"needle\n"})
        if not isinstance(workspace, LocalWorkspace):
            return  # (links exist on the local disk only; the rest of the contract runs everywhere)
        os.symlink("nowhere", workspace.path("broken"))
        os.symlink("../gone.md", workspace.path("sub/broken.md"))
        assert sorted((await text("default", "glob", pattern="**/*")).split("\n")) == ["a.md", "sub/b.md"]
        assert (await text("default", "grep", pattern="needle")).startswith("Found 2 matches\n\na.md\nLine 1: needle")
        assert await text("default", "glob", pattern="*.md", path="sub") == "sub/b.md"
        # the reference walks without --follow: links are not entered, so no error either
        assert sorted((await text("reference", "glob", pattern="**/*")).split("\n")) == ["a.md", "sub/b.md"]

    async def test_s15_a_symlink_loop_does_not_fail_the_search(self, workspace: Workspace) -> None:
        """a link that resolves to itself, or two that point at each other, lead nowhere, as a
        dangling one does (ripgrep: ``Too many levels of symbolic links (os error 40)``)"""
        text = await self._tools(workspace, {"a.md": b"needle\n", "sub/b.md": b"needle\n"})
        if not isinstance(workspace, LocalWorkspace):
            return  # (links exist on the local disk only)
        os.symlink("self", workspace.path("self"))
        os.symlink("loop2", workspace.path("sub/loop1"))
        os.symlink("loop1", workspace.path("sub/loop2"))
        assert sorted((await text("default", "glob", pattern="**/*")).split("\n")) == ["a.md", "sub/b.md"]
        assert (await text("default", "grep", pattern="needle")).startswith("Found 2 matches\n\na.md\nLine 1: needle")
        assert await text("default", "glob", pattern="*", path="sub") == "sub/b.md"
        assert sorted((await text("reference", "glob", pattern="**/*")).split("\n")) == ["a.md", "sub/b.md"]


    async def test_s9_an_absolute_pattern_inside_the_workspace(self, workspace: Workspace) -> None:
        text = await self._tools(workspace, {"folder/a.md": b"a\n", "folder/sub/b.md": b"b\n", "top.md": b"t\n"})
        pattern = workspace.path("folder") + "/*.md"
        assert await text("default", "glob", pattern=pattern) == "folder/a.md"  # not folder/sub/b.md
        assert sorted((await text("default", "glob", pattern=workspace.path("folder") + "/**/*.md")).split("\n")) == [
            "folder/a.md", "folder/sub/b.md"]
        assert await text("default", "glob", pattern=workspace.path("top.md")) == "top.md"
        if workspace.root != "/":  # (at "/" an absolute pattern is ripgrep's anchored one already)
            assert await text("reference", "glob", pattern=pattern) == "No files found"
        if isinstance(workspace, LocalWorkspace):  # outside the root: the containment error
            outside = os.path.dirname(workspace.root)
            assert await text("default", "glob", pattern=outside + "/*.md") == (
                f'Error: cannot resolve "{outside}": outside the workspace "{workspace.root}"')

    async def test_s10_a_pattern_with_a_directory_part_is_matched_from_path(self, workspace: Workspace) -> None:
        text = await self._tools(workspace, {"docs/testbooks/a.md": b"a\n", "docs/testbooks/b.md": b"b\n",
                                             "testbooks/c.md": b"c\n"})
        found = sorted((await text("default", "glob", pattern="testbooks/*.md", path="docs")).split("\n"))
        assert found == ["docs/testbooks/a.md", "docs/testbooks/b.md"]
        written_from_the_workspace = await text("default", "glob", pattern="docs/testbooks/*.md", path="docs")
        assert sorted(written_from_the_workspace.split("\n")) == found  # still works
        assert await text("reference", "glob", pattern="testbooks/*.md", path="docs") == "No files found"


    async def test_s11_a_match_far_into_a_long_line_is_shown(self, workspace: Workspace) -> None:
        line = b"a" * 4000 + b"NEEDLE" + b"b" * 1994  # a 6,000-character minified line
        text = await self._tools(workspace, {"dist/min.js": line + b"\n"})
        shown = await text("default", "grep", pattern="NEEDLE")
        assert shown.startswith("Found 1 match\n\ndist/min.js\nLine 1: ... " + "a" * 500 + "NEEDLE")
        assert shown.endswith(" ... (line truncated: characters 3501-5500 of 6000 shown; the match starts at column 4001)")
        assert await text("reference", "grep", pattern="NEEDLE") == (
            "Found 1 match\n\ndist/min.js\nLine 1: " + "a" * 2000 + " (line truncated)")


    async def test_s12_a_multiline_pattern_gets_advice_the_tool_can_follow(self, workspace: Workspace) -> None:
        text = await self._tools(workspace, {"a.txt": b"foo\nbar\n"})
        for pattern in ("foo\\nbar", "foo\nbar"):  # the escape and a real line break
            assert await text("default", "grep", pattern=pattern) == (
                'Error: grep pattern rejected: it matches a line break ("\\n"), and grep searches one line at a '
                "time; search for one line of it, then read the file around the match")
        assert "--multiline" in await text("reference", "grep", pattern="foo\\nbar")

    async def test_s13_ignored_and_hidden_files_are_never_skipped_without_a_word(self, workspace: Workspace) -> None:
        text = await self._tools(workspace, {".git/HEAD": b"ref: refs/heads/main\n", ".gitignore": b"scripts/*\n",
                                             "scripts/deploy.sh": b"TOKEN=needle\n", "scripts/.hidden.sh": b"needle\n",
                                             ".env": b"API_KEY=needle\n", "src/app.ts": b"const k = 'needle';\n"})
        note = "(4 files were not searched: ignored or hidden (.env, .gitignore, scripts/); name one as path to search it.)"
        assert await text("default", "grep", pattern="needle") == (
            "Found 1 match\n\nsrc/app.ts\nLine 1: const k = 'needle';\n\n" + note)
        assert await text("default", "grep", pattern="nothing-like-it") == "No matches found\n\n" + note
        assert await text("default", "grep", pattern="needle", path="scripts") == (  # named: searched whole
            "Found 2 matches\n\nscripts/.hidden.sh\nLine 1: needle\n\nscripts/deploy.sh\nLine 1: TOKEN=needle")
        assert await text("default", "grep", pattern="needle", path=".env") == "Found 1 match\n\n.env\nLine 1: API_KEY=needle"
        assert await text("default", "grep", pattern="needle", path="src") == "Found 1 match\n\nsrc/app.ts\nLine 1: const k = 'needle';"
        # an include glob overrides ignore and hidden rules (ripgrep's): nothing left out, nothing said
        assert await text("default", "grep", pattern="needle", include="*.ts") == (
            "Found 1 match\n\nsrc/app.ts\nLine 1: const k = 'needle';")
        # the reference: only the tracked file, and nothing said; the named directory misses too
        assert await text("reference", "grep", pattern="needle") == "Found 1 match\n\nsrc/app.ts\nLine 1: const k = 'needle';"
        assert await text("reference", "grep", pattern="needle", path="scripts") == "No matches found"

    async def test_s13_a_big_ignored_tree_is_counted_only_up_to_a_bound(self, workspace: Workspace) -> None:
        files = {".git/HEAD": b"ref: refs/heads/main\n", ".gitignore": b"venv/\n", "src/app.ts": b"needle\n"}
        files.update({f"venv/lib/pkg{i:04d}/module_with_a_long_name.py": b"x\n" for i in range(1500)})
        text = await self._tools(workspace, files)
        found = await text("default", "grep", pattern="needle")
        head, _, note = found.rpartition("\n\n")
        assert head == "Found 1 match\n\nsrc/app.ts\nLine 1: needle"
        assert note.startswith("(more than ") and note.endswith(
            " files were not searched: ignored or hidden (.gitignore, venv/); name one as path to search it.)"), note
        assert int(note[len("(more than "):].split(" ")[0]) < 1500  # stopped early: not the whole tree listed

    async def test_s14_a_text_file_with_one_nul_is_searched_and_shown_escaped(self, workspace: Workspace) -> None:
        text = await self._tools(workspace, {"src/app.ts": b"const a = 1;\nexport const needle = 2;\x00\nconst b = 3;\n",
                                             "src/other.ts": b"needle here\n"})
        note = "(src/app.ts contains NUL bytes, shown as \\u0000: it may be a binary file, searched here as text.)"
        assert await text("default", "grep", pattern="needle") == (
            "Found 2 matches\n\nsrc/app.ts\nLine 2: export const needle = 2;\\u0000\n\nsrc/other.ts\n"
            "Line 1: needle here\n\n" + note)
        assert await text("default", "grep", pattern="needle", path="src/app.ts") == (
            "Found 1 match\n\nsrc/app.ts\nLine 2: export const needle = 2;\\u0000\n\n" + note)
        assert await text("default", "grep", pattern="const b") == "Found 1 match\n\nsrc/app.ts\nLine 3: const b = 3;"
        # the reference: dropped from a directory search, the raw NUL when named
        assert await text("reference", "grep", pattern="needle") == "Found 1 match\n\nsrc/other.ts\nLine 1: needle here"
        assert await text("reference", "grep", pattern="needle", path="src/app.ts") == (
            "Found 1 match\n\nsrc/app.ts\nLine 2: export const needle = 2;\x00")


class TestLocal(LocalFixtures, MissContract):
    pass


class TestMemory(MemoryFixtures, MissContract):
    pass


class TestS3(S3Fixtures, MissContract):
    pass
