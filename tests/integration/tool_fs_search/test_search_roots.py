"""glob and grep over a provider with several roots (DEVIATIONS D28) under S8: a search stays
in the root it searches, found by real path — links inside that root are followed, links
into another root or outside are not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import dsh_fs
from dsh_fs import Session
from searchkit import call

pytestmark = pytest.mark.anyio


def _roots(tmp_path: Path) -> tuple[str, str, dsh_fs.Context]:
    a, b = os.path.realpath(tmp_path / "a"), os.path.realpath(tmp_path / "b")
    for root in (a, b):
        os.makedirs(os.path.join(root, "sub"))
        with open(os.path.join(root, "sub", "own.txt"), "w") as out:
            out.write("needle in " + os.path.basename(root) + "\n")
        with open(os.path.join(root, ".gitignore"), "w") as out:
            out.write("")
    os.symlink(os.path.join(b, "sub"), os.path.join(b, "inside"))  # a link within b
    os.symlink(os.path.join(a, "sub"), os.path.join(b, "into-a"))  # a link into the other root
    os.symlink(os.path.join(tmp_path, "a", "sub"), os.path.join(a, "self"))  # within a, by its real path
    ctx = dsh_fs.create_context(cwd=b, roots=[a, b])
    return a, b, ctx


async def test_a_search_of_the_second_root_follows_its_own_links_only(tmp_path: Path) -> None:
    a, b, ctx = _roots(tmp_path)
    found = await call(ctx, "grep", {"pattern": "needle"}, session=Session(b))
    assert not found.is_error, found.text
    assert "inside/own.txt" in found.text and "sub/own.txt" in found.text
    assert "into-a" not in found.text and "needle in a" not in found.text
    listed = await call(ctx, "glob", {"pattern": "**/*.txt"}, session=Session(b))
    assert sorted(listed.text.splitlines()) == ["inside/own.txt", "sub/own.txt"], listed.text


async def test_a_search_below_the_first_root_stays_in_it(tmp_path: Path) -> None:
    a, b, ctx = _roots(tmp_path)
    found = await call(ctx, "grep", {"pattern": "needle", "path": a}, session=Session(b))
    assert not found.is_error, found.text
    assert found.text.count("needle in a") == 2 and "needle in b" not in found.text, found.text
