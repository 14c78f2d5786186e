"""docs/CHANNELS.md as printed: its command lines and its Python programs run against the test
session's podman box (the page's ``box`` and ``/work`` are that box and a fresh directory of it,
the only substitution) and on this machine (the exec-channel and deepagents programs), and do
what the page says."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from docskit import code_blocks, quotes, run_printed
from dsh_fs.testing.far_sides import PodmanBox

PAGE = Path(__file__).resolve().parents[3] / "docs" / "CHANNELS.md"


SERVING = "## Serving a container, a pod or a machine"
EXEC = "## A sandbox SDK or deepagents: an exec channel"


@pytest.fixture
def work(podman_box: PodmanBox, box_dir: str) -> tuple[str, str]:
    """A fresh directory of the box holding a.txt: (its path here, its path in the box)."""
    name = uuid.uuid4().hex[:12]
    here = os.path.join(box_dir, name)
    os.mkdir(here)
    with open(os.path.join(here, "a.txt"), "w", encoding="utf-8") as handle:
        handle.write("from the box\n")
    return here, f"/ws/{name}"


def _in_box(text: str, box: PodmanBox, far: str) -> str:
    return text.replace("podman://box/work", f"podman://{box.name}{far}")


def test_the_command_lines(work: tuple[str, str], podman_box: PodmanBox) -> None:
    here, far = work
    mcp, read = (shlex.split(_in_box(block.strip(), podman_box, far)) for block in code_blocks(SERVING, PAGE, "sh"))
    assert mcp[:2] == ["dsh-fs", "mcp"] and read[:2] == ["dsh-fs", "read"]
    done = subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", *read[1:]], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and "1: from the box" in done.stdout, done.stderr
    served = subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", *mcp[1:]], input="", capture_output=True,
                            text=True, timeout=300)  # stdin ends at once: the server starts and stops
    assert served.returncode == 0, served.stderr


def test_the_open_provider_program(work: tuple[str, str], podman_box: PodmanBox,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    here, far = work
    [program] = code_blocks(SERVING, PAGE, "python")
    assert 'open_provider("podman://box/work")' in program
    run_printed(_in_box(program, podman_box, far), "CHANNELS.md")
    assert "1: from the box" in capsys.readouterr().out


def test_the_exec_channel_program(tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    run_printed(code_blocks(EXEC, PAGE, "python")[0], "CHANNELS.md")
    path = os.path.realpath(tmp_path / "hello.txt")
    assert capsys.readouterr().out == f"<path>{path}</path>\n<type>file</type>\n<content>\nCreated file\n</content>\n"
    assert (tmp_path / "hello.txt").read_text() == "hi\n"


def test_the_deepagents_program(tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    run_printed(code_blocks(EXEC, PAGE, "python")[1], "CHANNELS.md")
    path = os.path.realpath(tmp_path / "notes.txt")
    assert capsys.readouterr().out == f"The file {path} has been updated successfully.\n"
    assert (tmp_path / "notes.txt").read_text() == "two\n"


def test_the_quoted_refusal_is_the_providers_text(tmp_path: Any) -> None:
    import anyio

    from dsh_fs.fs.errors import FsError
    from dsh_fs.fs_channel import ChannelFileSystem, CommandChannel

    (quote,) = quotes(PAGE)
    channel = CommandChannel(["/bin/sh", "-c", 'exec "$@"', "sh"], identity="docker://box")

    async def read() -> str:
        fs = ChannelFileSystem(channel, root="/work", python="python3-missing-here")
        try:
            await fs.resolve("/work/a.txt")
        except FsError as exc:
            return str(exc).replace("python3-missing-here", "python3").replace('resolve "', 'read "')
        return ""

    assert anyio.run(read) == quote
