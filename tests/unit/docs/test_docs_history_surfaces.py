"""docs/HISTORY.md's surfaces as printed: the "CLI" section's shell lines run in an empty
project (``dsh-fs`` of this environment, a private state directory) and print what the page
shows (the project's absolute path and the calls' times aside); the "Frameworks" section's
LangGraph program runs with a scripted model (the model named is swapped for ``langchainkit``'s,
as tests/unit/docs/test_docs_langchain.py does) and prints what the page shows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from docskit import EDIT_ARGS, FIXED, READ_ARGS, REPO, TYPO, run_printed, section, typo_workspace

PAGE = REPO / "docs" / "HISTORY.md"
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _blocks(heading: str, fence: str) -> tuple[str, str]:
    """The section's ``fence`` block and the ``text`` block (its output) printed after it."""
    text = section(heading, PAGE)
    program, rest = text.split(f"```{fence}\n", 1)[1].split("```\n", 1)
    return program, rest.split("```text\n", 1)[1].split("```", 1)[0]


def test_the_cli_lines_print_what_the_page_shows(tmp_path: Path) -> None:
    lines, shown = _blocks("## CLI", "bash")
    project = tmp_path / "project"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_FS_")}
    env.update(DSH_FS_STATE_DIR=str(tmp_path / "state"), DSH_FS_LOCK_DIR=str(tmp_path / "locks"),
               PATH=os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""))
    done = subprocess.run(["/bin/sh", "-ec", lines], cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert TIME.sub("T", done.stdout) == TIME.sub("T", shown).replace("/project/", os.path.realpath(project) + "/")
    assert (project / "notes.txt").read_text() == "first line\n"


def test_the_langgraph_program_prints_what_the_page_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    import langchain.agents
    from langchain.chat_models.base import _parse_model
    from langchainkit import ScriptedChatModel

    program, shown = _blocks("## Frameworks", "python")
    typo_workspace(tmp_path, monkeypatch)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-test")
    script = [AIMessage(content="", tool_calls=[{"name": "read", "args": READ_ARGS, "id": "c1"}]),
              AIMessage(content="", tool_calls=[{"name": "edit", "args": EDIT_ARGS, "id": "c2"}]),
              AIMessage(content="Fixed the typo."), AIMessage(content="Fixed the typo again.")]
    model = ScriptedChatModel(messages=iter(script))
    real = langchain.agents.create_agent

    def constructor(requested: str, **kwargs: Any) -> Any:
        assert _parse_model(requested, None) == ("deepseek-chat", "deepseek")
        return real(model, **kwargs)

    monkeypatch.setattr(langchain.agents, "create_agent", constructor)
    run_printed(program, "docs/HISTORY.md")
    assert capsys.readouterr().out == shown == TYPO + FIXED
    assert Path("README.md").read_text() == FIXED
