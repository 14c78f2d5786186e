"""The history over a provider on a command channel (the subprocess channel): it wraps like any
provider; the channel has no raw write, so a rewind restores a text file through its text write,
and a CRLF file comes back byte for byte (its line endings kept by the far side's text rules)."""

from __future__ import annotations

from pathlib import Path

import pytest
from channelkit import channel_fs

import dsh_fs
from dsh_fs import Session

pytestmark = pytest.mark.anyio


async def test_rewind_over_a_channel(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    ctx = dsh_fs.create_context(provider=channel_fs(str(ws)), history=True)
    session = Session(cwd=str(ws))
    assert not (await ctx.tools.execute("read", {"file_path": str(ws / "crlf.txt")}, session=session)).is_error
    result = await ctx.tools.execute("edit", {"file_path": str(ws / "crlf.txt"), "old_string": "two", "new_string": "2"},
                                     session=session)
    assert not result.is_error, result.text
    assert not (await ctx.tools.execute("write", {"file_path": str(ws / "new.txt"), "content": "n\n"},
                                        session=session)).is_error
    steps = await ctx.history(session)
    assert [s.tool for s in steps] == ["edit", "write"] and steps[0].changes[0].before.kind == "blob"
    rewound = await ctx.rewind(session, to=0)
    assert not rewound.refused and rewound.error is None, rewound
    assert sorted(p.name for p in ws.iterdir()) == ["crlf.txt"]
    assert (ws / "crlf.txt").read_bytes() == b"one\r\ntwo\r\n"
    await ctx.aclose()
