"""The tools through the registry on ``ChannelFileSystem`` (the subprocess channel) give the
model exactly what they give on the local disk (DEVIATIONS C1): the same scripted calls run on
a local deployment and on a channel deployment over the same seeded directory (reset between
the two), every result text and error code compared. Reads, windows of a long file, writes,
edits (guarded, stale after a change behind the tools' back), list, glob, grep (ignore rules,
hidden files, symlinks followed inside the root, includes), read_image, apply_patch."""

from __future__ import annotations

import os
from typing import Any

import pytest

import dsh_fs
from channelkit import channel_fs, reset, seed

pytestmark = pytest.mark.anyio

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read", {"file_path": "README.md"}),
    ("read", {"file_path": "docs/long.txt", "offset": 4990, "limit": 5}),
    ("read", {"file_path": "docs/long.txt"}),
    ("read", {"file_path": "src/crlf.txt"}),
    ("read", {"file_path": "src/bom.txt"}),
    ("read", {"file_path": "data.bin"}),
    ("read", {"file_path": "missing.txt"}),
    ("read", {"file_path": "/etc/passwd"}),
    ("read", {"file_path": "linked/main.py"}),
    ("read", {"file_path": "src"}),
    ("write", {"file_path": "src/main.py", "content": "x = 1\n"}),
    ("read", {"file_path": "src/main.py"}),
    ("edit", {"file_path": "src/main.py", "old_string": "print('hello')", "new_string": "print('bye')"}),
    ("read", {"file_path": "src/main.py", "offset": 2, "limit": 1}),
    ("edit", {"file_path": "src/main.py", "old_string": "print('bye')", "new_string": "print('again')"}),
    ("edit", {"file_path": "src/crlf.txt", "old_string": "two\nthree", "new_string": "2\n3"}),
    ("write", {"file_path": "new/dir/file.txt", "content": "fresh\n"}),
    ("write", {"file_path": "new/dir/file.txt", "content": "again\n"}),
    ("list", {"path": "."}),
    ("list", {"path": "src"}),
    ("glob", {"pattern": "**/*.py"}),
    ("glob", {"pattern": "*.md"}),
    ("glob", {"pattern": "**/*.txt", "path": "docs"}),
    ("grep", {"pattern": "TODO"}),
    ("grep", {"pattern": "TODO", "include": "*.py"}),
    ("grep", {"pattern": "def \\w+", "path": "src"}),
    ("grep", {"pattern": "nothing matches this"}),
    ("read_image", {"file_path": "pic.png"}),
    ("read", {"file_path": "src/util.py"}),
    ("apply_patch", {"input": "*** Begin Patch\n*** Update File: src/util.py\n@@\n-import os\n+import sys\n"
                              "*** Add File: added.txt\n+added\n*** End Patch\n"}),
    ("read", {"file_path": "added.txt"}),
    ("str_replace_based_edit_tool", {"command": "view", "path": "src"}),
    ("str_replace_based_edit_tool", {"command": "str_replace", "path": "added.txt", "old_str": "added",
                                     "new_str": "changed"}),
    ("str_replace_based_edit_tool", {"command": "create", "path": "made.txt", "file_text": "made\n"}),
    ("str_replace_based_edit_tool", {"command": "insert", "path": "made.txt", "insert_line": 1,
                                     "new_str": "second"}),
    ("read", {"file_path": "made.txt"}),
]


async def _run(ctx: dsh_fs.Context, root: str, changed_behind: bool) -> list[tuple[Any, ...]]:
    session = dsh_fs.Session(cwd=root)
    out = []
    async with ctx:
        for index, (tool, args) in enumerate(CALLS):
            if changed_behind and index == 14:  # the file changes behind the tools' back: stale
                with open(os.path.join(root, "src/main.py"), "a", encoding="utf-8") as handle:
                    handle.write("# appended elsewhere\n")
            result = await ctx.tools.execute(tool, args, session=session)
            images = [block for block in result.content if block.get("type") == "image"]
            out.append((tool, result.is_error, result.error.code if result.error else None, result.text, len(images)))
    return out


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_every_tool_says_over_the_channel_what_it_says_on_the_local_disk(tmp_path: Any, profile: str) -> None:
    root = os.path.realpath(os.path.join(str(tmp_path), "project"))
    seed(root)
    options = dict(profile=profile, images=True, faces=("apply_patch", "str_replace_based_edit_tool"))
    local = await _run(dsh_fs.create_context(cwd=root, root=root, **options), root, True)
    reset(root)
    remote = await _run(dsh_fs.create_context(cwd=root, provider=channel_fs(root, profile=profile), **options),
                        root, True)
    assert local[CALLS.index(("read_image", {"file_path": "pic.png"}))][4] == 1  # an image came through
    for call, mine, theirs in zip(CALLS, remote, local):
        if call[0] == "grep" and profile == "reference":  # ripgrep's own (parallel) order: not sorted (S2)
            mine, theirs = _blocks(mine), _blocks(theirs)
        assert mine == theirs, call


def _blocks(outcome: tuple[Any, ...]) -> tuple[Any, ...]:
    """A grep outcome with its groups of lines as a set (their order is ripgrep's walk)."""
    head, _, rest = outcome[3].partition("\n\n")
    return (*outcome[:3], head, frozenset(rest.split("\n\n")), outcome[4])
