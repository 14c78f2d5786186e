"""docs/MCP.md's HTTP client program ("Over HTTP"), run as printed against a real
``dsh-fs mcp --http`` whose token file is the program's ``~/.dsh-fs-tokens`` (``HOME`` is a
temporary directory) and whose URL replaces the printed ``http://127.0.0.1:8765/mcp`` (the
server listens on a port it picks). It must print README.md as ``read`` shows it.

Not covered here: the server's HTTP rules (test_mcp_http.py, tests/robustness/mcp/).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from docskit import DOCS, python_blocks, run_printed
from httpkit import http_server

PRINTED_URL = "http://127.0.0.1:8765/mcp"


def _program() -> str:
    [program] = [block for block in python_blocks("## Over HTTP", DOCS / "MCP.md") if "load_token_file" in block]
    assert PRINTED_URL in program
    return program


def test_the_http_client_program_reads_through_the_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "README.md").write_text("one\ntwo\n")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    served = os.path.realpath(root)
    with http_server(served, "--token-file", str(home / ".dsh-fs-tokens")) as endpoint:
        run_printed(_program().replace(PRINTED_URL, endpoint.url), "MCP.md")
    assert capsys.readouterr().out == (f"<path>{served}/README.md</path>\n<type>file</type>\n<content>\n1: one\n"
                                       "2: two\n\n(End of file - total 2 lines)\n</content>\n")

