"""A NUL in a model value of glob or grep: the reference cannot start its command (§6.3
``could not start``); the default profile names the argument, and a ``path`` with a NUL gets
the provider's containment refusal, as for ``read``. A lone surrogate becomes U+FFFD."""

from __future__ import annotations

import os

import pytest

import dsh_fs
from dsh_fs import Session
from searchkit import call

pytestmark = pytest.mark.anyio

CALLS = [
    ("grep", {"pattern": "a\0b"}, "pattern"),
    ("grep", {"pattern": "x", "include": "*\0"}, "include"),
    ("grep", {"pattern": "x", "path": "a\0b"}, "path"),
    ("glob", {"pattern": "*\0"}, "pattern"),
    ("glob", {"pattern": "*", "path": "a\0"}, "path"),
]


@pytest.mark.parametrize(("tool", "args", "name"), CALLS)
async def test_a_nul_in_a_value(ws: str, tool: str, args: dict, name: str) -> None:
    reference = dsh_fs.create_context(cwd=ws, profile="reference")
    refused = await call(reference, tool, args, session=Session(ws))
    assert (refused.error.code, refused.text) == (
        "SEARCH_FAILED", f"Error: {tool} could not start its search command (unusable working directory or missing shell)")
    default = dsh_fs.create_context(cwd=ws, profile="default")
    named = await call(default, tool, args, session=Session(ws))
    assert named.is_error
    if name == "path":
        assert named.error.code == "FS_PERMISSION_DENIED"
        assert "path contains a NUL byte" in named.text
    else:
        assert named.text == f"Error: {name} must not contain a NUL character"


async def test_a_lone_surrogate_is_searched_as_u_fffd(ws: str) -> None:
    with open(os.path.join(ws, "a.txt"), "w", encoding="utf-8") as out:
        out.write("x\ufffdy\n")
    ctx = dsh_fs.create_context(cwd=ws, profile="reference")
    found = await call(ctx, "grep", {"pattern": "x\ud800y"}, session=Session(ws))
    assert found.text == "Found 1 match\n\na.txt\nLine 1: x\ufffdy", found.text


@pytest.mark.parametrize(("ignored", "note"), [(1999, "(2000 files were not searched"),
                                               (2000, "(more than 2000 files were not searched")])
async def test_skipped_entries_are_counted_up_to_2000(ws: str, ignored: int, note: str) -> None:  # S13
    os.mkdir(os.path.join(ws, ".git"))
    with open(os.path.join(ws, ".gitignore"), "w") as out:  # itself hidden: one more skipped entry
        out.write("*.log\n")
    for i in range(ignored + 1):
        with open(os.path.join(ws, "a.txt" if i == ignored else f"f{i:04}.log"), "w") as out:
            out.write("needle\n")
    found = await call(dsh_fs.create_context(cwd=ws), "grep", {"pattern": "needle"}, session=Session(ws))
    assert found.text.startswith("Found 1 match\n\na.txt\nLine 1: needle\n\n" + note + ": ignored or hidden ("), found.text


@pytest.mark.parametrize(("ignored", "note"), [(1024, "(1024 files were not searched"),
                                               (1025, "(more than ")])
async def test_the_skipped_count_reads_at_most_64_kib_of_listing(ws: str, ignored: int, note: str) -> None:  # S13
    # every listed name is "./big/<57 characters>\0": 64 bytes, so 1024 of them are exactly the
    # 64 KiB the count reads, and one more passes it
    os.makedirs(os.path.join(ws, ".git", "info"))
    os.mkdir(os.path.join(ws, "big"))
    with open(os.path.join(ws, ".git", "info", "exclude"), "w") as out:  # no skipped ignore file of its own
        out.write("big/\n")
    for i in range(ignored):
        with open(os.path.join(ws, "big", f"{i:04}".ljust(57, "x")), "w") as out:
            out.write("needle\n")
    with open(os.path.join(ws, "a.txt"), "w") as out:
        out.write("needle\n")
    found = await call(dsh_fs.create_context(cwd=ws), "grep", {"pattern": "needle"}, session=Session(ws))
    assert found.text.startswith("Found 1 match\n\na.txt\nLine 1: needle\n\n" + note), found.text
    assert found.text.endswith(" files were not searched: ignored or hidden (big/); name one as path to search it.)")
    assert ("more than" in found.text) == (ignored > 1024)
