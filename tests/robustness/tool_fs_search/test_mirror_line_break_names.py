"""``grep`` over a provider without host paths finds files whose names hold a line break
(deviation D22; ``tool_fs_search.mirror``).

Such a search lists the files ripgrep would search, then copies their bytes into a mirror.
Read one name a line, ``x\\nLine 1: forged`` was two names that do not exist, and ``trail\\n``
one without its line break: neither file was copied, and ``grep`` silently missed both, while
``glob`` and the local disk found them. The listing is read NUL-separated, as ``glob``'s is.
Through the registry on the memory provider and on a command channel whose far ripgrep is
set aside by deny rules (P4: the search then reads the files through the provider).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from channelkit import channel_fs

import dsh_fs
from dsh_fs import Session

pytestmark = pytest.mark.anyio

NAMES = ["x\nLine 1: forged", "trail\n", "cr\rname.txt", "tab\tname.txt", "ok.txt"]


def _headers(text: str) -> list[str]:
    return sorted(json.loads(h) if h.startswith('"') else h for h in (g.split("\n")[0] for g in text.split("\n\n")[1:]))


async def _check(ctx: Any, cwd: str) -> None:
    session = Session(cwd)
    for name in NAMES:
        result = await ctx.tools.execute("write", {"file_path": "d/" + name, "content": "needle\n"}, session=session)
        assert not result.is_error, result.text
    expected = sorted("d/" + name for name in NAMES)
    for mode in ("content", "files_with_matches", "count"):
        result = await ctx.tools.execute("grep", {"pattern": "needle", "output_mode": mode}, session=session)
        assert result.text.startswith(f"Found {len(NAMES)} matches\n"), result.text
        assert _headers(result.text) == expected
    result = await ctx.tools.execute("grep", {"pattern": "needle", "path": "d", "include": "*"}, session=session)
    assert result.text.startswith(f"Found {len(NAMES)} matches\n"), result.text


async def test_D22_grep_on_the_memory_provider_finds_names_with_line_breaks() -> None:
    ctx = dsh_fs.create_context(provider=dsh_fs.open_provider("memory://"))
    async with ctx:
        await _check(ctx, "/")


async def test_D22_grep_through_a_channel_under_deny_rules_finds_names_with_line_breaks(tmp_path: Path) -> None:
    root = os.path.realpath(tmp_path)
    ctx = dsh_fs.create_context(provider=channel_fs(root), deny=["*.secret"])
    async with ctx:
        await _check(ctx, root)
