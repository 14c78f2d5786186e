"""docs/HISTORY.md as printed: the Library section's program runs in an empty project and prints
what the page says it prints (the diff's names being the project's absolute path)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from docskit import REPO, code_blocks, run_printed

PAGE = REPO / "docs" / "HISTORY.md"


def test_the_library_program_prints_what_the_page_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    [program] = code_blocks("## Library", PAGE, "python")
    [shown] = code_blocks("## Library", PAGE, "text")
    run_printed(program, "docs/HISTORY.md")
    assert capsys.readouterr().out == shown.replace("/project/", os.path.realpath(project) + "/")
    assert (project / "notes.txt").read_text() == "first\n"
