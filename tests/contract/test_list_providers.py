"""``list`` gives the same answers on every provider (docs/LIST.md): one tree on the local
disk, in memory and on S3 (moto; a directory is a key prefix, an empty one a ``dir/`` marker
object), the same calls, the same texts — in both profiles, paged and unpaged. The seam's
``list_dir`` itself is in the provider contract suite (``dsh_fs.testing.contract``); links
(local only): tests/integration/tool_fs/test_list_tool.py.
"""

from __future__ import annotations

from typing import Any

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.testing.fixtures import LocalFixtures, MemoryFixtures, S3Fixtures
from dsh_fs.testing.workspaces import Workspace

TREE = {"src/main.py": b"print()\n", "src/lib/util.py": b"x\n", "README.md": b"# hi\n", "a.txt": b"",
        "Zeta.txt": b"zz", ".env": b"K=v\n", "docs/guide.md": b"g\n"}


class ListContract:
    pytestmark = [pytest.mark.anyio]


    async def test_same_answers_everywhere(self, workspace: Workspace) -> None:
        for rel, data in TREE.items():
            await workspace.put(rel, data)
        await workspace.mkdir("empty")
        session = Session()
        session.cwd = workspace.root

        async def call(profile: str, **args: Any) -> Any:
            ctx = dsh_fs.create_context(provider=await workspace.provider(profile=profile), profile=profile,
                                        list_tool=True, list_max_entries=4)
            async with ctx:
                return await ctx.tools.execute("list", args, session=session)

        root = workspace.root
        first = await call("reference")
        assert first.text == (
            f"<path>{root}</path>\n<type>directory</type>\n<content>\ndocs/\nempty/\nsrc/\n.env\n\n"
            "(Showing entries 1-4 of 7: 3 directories, 4 files. Use offset=5 to continue.)\n</content>")
        second = await call("default", offset=5)
        assert second.text.split("<content>\n")[1] == (
            "README.md (5 bytes)\nZeta.txt (2 bytes)\na.txt (0 bytes)\n\n"
            "(Showing entries 5-7 of 7: 3 directories, 4 files.)\n</content>")
        assert (await call("reference", path="src")).text == (
            f"<path>{workspace.path('src')}</path>\n<type>directory</type>\n<content>\nlib/\nmain.py\n\n"
            "(2 entries: 1 directory, 1 file)\n</content>")
        assert (await call("default", path="empty")).text.endswith("<content>\n(Empty directory)\n</content>")
        missing = await call("default", path="nope")
        assert (missing.error.code, missing.text) == ("FS_NOT_FOUND", f'Error: cannot list "{workspace.path("nope")}": not found')
        file = await call("reference", path="README.md")
        assert (file.error.code, file.text) == (
            "FS_NOT_DIRECTORY", f'Error: cannot list "{workspace.path("README.md")}": not a directory')
        beyond = await call("reference", path="src", offset=3)
        assert beyond.text == f'Error: offset 3 is out of range for "{workspace.path("src")}" (2 entries)'


class TestLocal(LocalFixtures, ListContract):
    pass


class TestMemory(MemoryFixtures, ListContract):
    pass


class TestS3(S3Fixtures, ListContract):
    pass
