"""docs/EDITING-FACES.md's "One example per vendor" runs as printed, as a reader runs it: the
four snippets one after another in one namespace, with ``await`` at the top level (as in an
async REPL), given what the page leaves to the reader — ``dsh_fs``, the agent's ``session``,
the model's ``response`` (Responses: one ``apply_patch_call`` creating a file) and ``message``
(Anthropic: one ``view`` of that file); the ``/abs/path/app.py`` of the last one is that file.
Each comment's promise is checked: the built-in tool definitions, the output item's fields,
the Agents SDK's editor, the ``tool_result`` block.

Not covered here: the faces' behaviour (tests/integration/tool_patch, tool_editor) and the
adapters' (tests/unit/adapters/test_editing_adapters.py).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

import dsh_fs
from docskit import DOCS, blocks_by_marker, run_cell

PAGE = DOCS / "EDITING-FACES.md"


def _snippets() -> dict[str, str]:
    return blocks_by_marker("## One example per vendor", {"responses_tools": "responses", "from agents import": "agents",
                                                          "anthropic_tools": "anthropic",
                                                          '"str_replace_editor", {': "swe"}, PAGE)


def test_one_example_per_vendor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agents import Agent, ApplyPatchTool, FunctionTool

    from dsh_fs.adapters.openai_agents import DshApplyPatchEditor

    monkeypatch.chdir(tmp_path)
    app = os.path.join(os.path.realpath(tmp_path), "app.py")
    snippets = _snippets()
    scope: dict[str, Any] = {
        "__name__": "__main__", "dsh_fs": dsh_fs, "session": dsh_fs.Session(cwd=str(tmp_path)),
        "response": {"output": [{"type": "apply_patch_call", "call_id": "p1", "status": "completed",
                                 "operation": {"type": "create_file", "path": "app.py", "diff": "+print('hi')\n"}}]},
        "message": {"content": [{"type": "tool_use", "id": "t1", "name": "str_replace_based_edit_tool",
                                 "input": {"command": "view", "path": app}}]},
    }

    async def main() -> None:
        await run_cell(snippets["responses"], PAGE.name, scope)
        assert {"type": "apply_patch"} in scope["tools"]
        assert [sorted(item) for item in scope["items"]] == [["call_id", "output", "status", "type"]]
        assert scope["items"][0]["type"] == "apply_patch_call_output" and scope["items"][0]["status"] == "completed"
        assert Path(app).read_text() == "print('hi')"  # a create_file diff's lines, joined as the SDK joins them

        await run_cell(snippets["agents"], PAGE.name, scope)
        agent = scope["agent"]
        assert isinstance(agent, Agent)
        assert [tool.name for tool in agent.tools if isinstance(tool, FunctionTool)] == ["read"]
        editors = [tool.editor for tool in agent.tools if isinstance(tool, ApplyPatchTool)]
        assert len(editors) == 1 and isinstance(editors[0], DshApplyPatchEditor)

        await run_cell(snippets["anthropic"], PAGE.name, scope)
        assert {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"} in scope["tools"]
        [block] = scope["blocks"]
        assert block["type"] == "tool_result" and block["tool_use_id"] == "t1" and not block.get("is_error")
        assert "print('hi')" in str(block["content"])

        await run_cell(snippets["swe"].replace("/abs/path/app.py", app), PAGE.name, scope)
        assert "str_replace_editor" in scope["ctx"].tools.names()

    anyio.run(main)
