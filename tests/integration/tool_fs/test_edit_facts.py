"""``edit`` of a missing path or of a non-file says what is wrong first (DEVIATIONS D26, D27),
through the registry on the local disk, with and without the observation policy, in both
profiles (the reference keeps REFERENCE-SPEC §4.8's order: the policy is asked first).
Not covered here: ``edit`` of files that exist (tests/integration/tool_fs/test_tools.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

import dsh_fs
from dsh_fs import Session
from filekit import put

pytestmark = pytest.mark.anyio


async def edit(ctx: dsh_fs.Context, session: Session, path: str) -> Any:
    return await ctx.tools.execute("edit", {"file_path": path, "old_string": "a", "new_string": "b"}, session=session)


@pytest.mark.parametrize("policy", [True, False])
async def test_D26_D27_an_edit_of_a_missing_path_or_a_directory_says_so_first(
    ws: str, make_ctx: Callable[..., dsh_fs.Context], tree: Any, policy: bool
) -> None:
    put(f"{ws}/Notes.txt", "a\n")
    os.mkdir(f"{ws}/dir")
    ctx, session = make_ctx(policy=policy), Session(cwd=ws)
    before = tree(ws)
    missing = await edit(ctx, session, "ghost.txt")
    assert missing.text == f'Error: cannot edit "{ws}/ghost.txt": not found'
    assert missing.error is not None and missing.error.code == "FS_NOT_FOUND"
    lookalike = await edit(ctx, session, "notes.txt")
    read = await ctx.tools.execute("read", {"file_path": "notes.txt"}, session=Session(cwd=ws))
    hint = read.text.split("\n", 1)[1]
    assert hint.startswith("Hint: ") and lookalike.text == f'Error: cannot edit "{ws}/notes.txt": not found\n{hint}'
    directory = await edit(ctx, session, "dir")
    assert directory.text == f'Error: cannot edit "{ws}/dir": not a regular file'
    assert directory.error is not None and directory.error.code == "FS_NOT_REGULAR_FILE"
    assert tree(ws) == before
    if policy:  # a file that exists: the policy's refusal stands
        unread = await edit(ctx, session, "Notes.txt")
        assert unread.error is not None and unread.error.code == "FS_NOT_OBSERVED"


async def test_the_reference_profile_asks_the_policy_first(ws: str, make_ctx: Callable[..., dsh_fs.Context]) -> None:
    os.mkdir(f"{ws}/dir")
    ctx, session = make_ctx(profile="reference"), Session(cwd=ws)
    missing = await edit(ctx, session, "ghost.txt")
    assert missing.text.startswith(f'Error: edit requires reading "{ws}/ghost.txt" first')
    directory = await edit(ctx, session, "dir")
    assert directory.text.startswith(f'Error: edit requires reading "{ws}/dir" first')
    bare = make_ctx(profile="reference", policy=False)
    stale = await edit(bare, session, "ghost.txt")
    assert stale.text == f'Error: cannot edit "{ws}/ghost.txt": file changed since it was read'
