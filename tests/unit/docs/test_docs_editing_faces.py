"""docs/EDITING-FACES.md's "One example per vendor" runs as printed: each of the four blocks is a
whole program (its imports, its context, its session, the model's recorded answer), run as
``__main__`` in a directory of its own, with nothing given to it. Each comment's promise is
checked: the built-in tool definitions, the output item's fields, the Agents SDK's editor, the
``tool_result`` block, the editor's texts.

Not covered here: the faces' behaviour (tests/integration/tool_patch, tool_editor) and the
adapters' (tests/unit/adapters/test_editing_adapters.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from docskit import DOCS, blocks_by_marker, run_printed

PAGE = DOCS / "EDITING-FACES.md"


def _snippets() -> dict[str, str]:
    return blocks_by_marker("## One example per vendor", {"responses_tools": "responses", "from agents import": "agents",
                                                          "anthropic_tools": "anthropic",
                                                          '"str_replace_editor", arguments': "swe"}, PAGE)


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An empty directory, made the current one (where a reader runs the program); its real path."""
    monkeypatch.chdir(tmp_path)
    return os.path.realpath(tmp_path)


def test_the_responses_program_applies_the_recorded_patch(scratch: str, capsys: pytest.CaptureFixture[str]) -> None:
    scope = run_printed(_snippets()["responses"], PAGE.name)
    assert Path(scratch, "hello.py").read_text() == "print('hi')"  # a create_file diff's lines, joined as the SDK does
    assert capsys.readouterr().out == (
        "[{'type': 'apply_patch_call_output', 'call_id': 'call_1', 'status': 'completed', "
        f"'output': 'Created {scratch}/hello.py'}}]\n")
    assert scope["response"]["output"][0]["type"] == "apply_patch_call"


def test_the_agents_sdk_program_gives_the_agent_one_editor(scratch: str, capsys: pytest.CaptureFixture[str]) -> None:
    from agents import Agent, ApplyPatchTool

    from dsh_fs.adapters.openai_agents import DshApplyPatchEditor

    scope = run_printed(_snippets()["agents"], PAGE.name)
    assert capsys.readouterr().out == "['read', 'apply_patch']\n"
    agent = scope["agent"]
    assert isinstance(agent, Agent)
    editors = [tool.editor for tool in agent.tools if isinstance(tool, ApplyPatchTool)]
    assert len(editors) == 1 and isinstance(editors[0], DshApplyPatchEditor)


def test_the_anthropic_program_answers_the_recorded_view(scratch: str, capsys: pytest.CaptureFixture[str]) -> None:
    scope = run_printed(_snippets()["anthropic"], PAGE.name)
    assert capsys.readouterr().out == (
        "[{'type': 'tool_result', 'tool_use_id': 'toolu_1', 'content': \"1: print('hi')\", 'is_error': False}]\n")
    assert scope["message"]["content"][0]["input"]["path"] == f"{scratch}/app.py"


def test_the_str_replace_editor_program_creates_edits_and_views(scratch: str,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    run_printed(_snippets()["swe"], PAGE.name)
    path = f"{scratch}/app.py"
    assert capsys.readouterr().out == (
        f"New file created successfully at: {path}\n"
        f"The file {path} has been edited successfully.\n"
        f"Here's the content of {path} with line numbers (which has a total of 1 lines):\n"
        "     1  print('hello')\n\n")
    assert Path(path).read_text() == "print('hello')\n"
