"""The library's programs run as printed and give what they say: the README's "As a library"
program, and docs/LIBRARY.md's "Explicit composition" (its ``/srv/app`` replaced by a temporary
directory) and "Sandbox modes".

Not covered here: the agent loops per API (``test_docs_agent_loops.py``).
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from docskit import DOCS, README, python_blocks, run_printed

LIBRARY = DOCS / "LIBRARY.md"


def _only_block(heading: str, doc: Path) -> str:
    blocks = python_blocks(heading, doc)
    assert len(blocks) == 1, (doc.name, heading, len(blocks))
    return blocks[0]


def test_the_first_example_reads_and_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "README.md").write_text("line one\nline two\n")
    monkeypatch.chdir(tmp_path)
    run_printed(_only_block("## As a library", README))
    printed = capsys.readouterr().out
    assert printed.startswith(f"False <path>{tmp_path}/README.md</path>")
    assert "'name': 'read'" in printed and "'name': 'glob'" in printed


def test_the_composition_example_serves_what_it_names(tmp_path: Path) -> None:
    code = _only_block("## Explicit composition", LIBRARY).replace("/srv/app", str(tmp_path))
    (tmp_path / "a.txt").write_text("alpha\n")
    ctx = run_printed(code, "LIBRARY.md")["ctx"]
    assert sorted(ctx.tools.names()) == ["apply_patch", "edit", "glob", "grep", "read", "write"]  # type: ignore[attr-defined]

    async def main() -> None:
        import dsh_fs

        session = dsh_fs.Session(cwd=str(tmp_path))
        found = await ctx.tools.execute("grep", {"pattern": "alph"}, session=session)  # type: ignore[attr-defined]
        assert found.text == "Found 1 match\n\na.txt\nLine 1: alpha", found.text
        outside = await ctx.tools.execute("read", {"file_path": "/etc/hostname"}, session=session)  # type: ignore[attr-defined]
        assert outside.text == f'Error: cannot resolve "/etc/hostname": outside the workspace "{tmp_path}"'

    anyio.run(main)


def test_the_sandbox_example_is_refused_then_approved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    run_printed(_only_block("## Sandbox modes", LIBRARY), "LIBRARY.md")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Error: [sandbox: file access denied under read-only mode]"
    assert lines[1].startswith("[sandbox: escalation available")
    assert lines[2] == ("asked: escalate sandbox to workspace-write: The user asked for notes. | "
                        f"Write {os.path.realpath(tmp_path)}/notes.txt")
    assert lines[3:] == [f"<path>{tmp_path}/notes.txt</path>", "<type>file</type>", "<content>", "Created file",
                         "</content>"]
    assert (tmp_path / "notes.txt").read_text() == "hi\n"
