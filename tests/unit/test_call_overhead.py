"""Work cut from the hot path of a small registry call (issue 24), each cut proven to keep
its behaviour: the call id minted only when read, blank paths found by one ``str.strip``."""

from __future__ import annotations

import re
import uuid
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dsh_fs
from dsh_fs.core import session as session_module
from dsh_fs.core.session import ToolExecution
from dsh_fs.fs.paths import JS_WHITESPACE, is_blank


@given(st.text(st.sampled_from(sorted(JS_WHITESPACE)) | st.characters(), max_size=12))
def test_blank_is_javascripts_trim_leaving_nothing(text: str) -> None:
    assert is_blank(text) == all(ch in JS_WHITESPACE for ch in text)


def test_a_call_id_given_is_kept_and_none_given_is_minted_once() -> None:
    assert ToolExecution(call_id="call-1").call_id == "call-1"
    execution = ToolExecution()
    minted = execution.call_id
    assert re.fullmatch(r"[0-9a-f]{32}", minted) and uuid.UUID(hex=minted).version == 4
    assert execution.call_id == minted
    assert ToolExecution().call_id != minted


def test_a_read_call_mints_no_call_id(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``read`` never reads its call id, so it pays no ``getrandom`` for one; a tool that
    reads it (a search saving its result) still gets one."""
    (tmp_path / "a.txt").write_text("one\n")
    minted: list[str] = []
    real = uuid.uuid4

    def counting() -> uuid.UUID:
        value = real()
        minted.append(value.hex)
        return value

    monkeypatch.setattr(session_module.uuid, "uuid4", counting)

    async def main() -> None:
        ctx = dsh_fs.create_context(cwd=tmp_path)
        agent = dsh_fs.Session(cwd=tmp_path)
        minted.clear()  # the session's own id
        result = await ctx.tools.execute("read", {"file_path": "a.txt"}, session=agent)
        assert not result.is_error and "1: one" in result.text
        assert minted == []
        seen: list[str] = []

        async def reads_its_id(args: dict[str, Any], execution: ToolExecution) -> Any:
            seen.append(execution.call_id)
            return []

        from dsh_fs.core.tools import ToolDefinition

        ctx.tools.register(ToolDefinition(name="t", description="t", parameters={}, execute=reads_its_id))
        await ctx.tools.execute("t", {}, session=agent)
        assert seen == minted and len(seen) == 1

    anyio.run(main)
