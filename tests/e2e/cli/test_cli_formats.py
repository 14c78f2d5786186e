"""Notebooks and PDFs through the ``dsh-fs`` command line (docs/NOTEBOOKS.md, docs/PDF.md, "Every
surface"): ``dsh-fs read`` of a notebook shows its cells, of a PDF its pages (``--pages``), in real
processes. Not covered here: the rules (the integration tests)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from notebookkit import put, sample, written

pytestmark = pytest.mark.timeout(180)


def test_dsh_fs_read_of_a_notebook_shows_cells(ws: str) -> None:
    put(ws, "sales.ipynb", written(sample()))
    done = subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", "read", ws + "/sales.ipynb",
                           "--limit", "5"], capture_output=True, text=True, timeout=120, cwd=ws)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:4] == [f"<path>{ws}/sales.ipynb</path>", "<type>notebook</type>", "<content>",
                                            '1: <notebook language="python" cells="4">']


def test_dsh_fs_read_of_a_pdf_reads_its_pages(ws: str) -> None:
    from pdfkit import text_pages

    put(ws, "book.pdf", text_pages(3))
    done = subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", "read", "book.pdf", "--pages", "2-3"],
                          capture_output=True, text=True, timeout=120, cwd=ws)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"<path>{ws}/book.pdf</path>\n<type>pdf</type>\n<content>\n--- page 2 of 3 ---\nPage 2\n")
    assert done.stdout.endswith("(End of file - total 3 pages)\n</content>\n")
    bad = subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", "read", "book.pdf", "--pages", "0"],
                         capture_output=True, text=True, timeout=120, cwd=ws)
    assert (bad.returncode, bad.stdout) == (1, 'Error: Invalid pages parameter: "0". Use formats like "1-5", "3", or '
                                               '"10-20". Pages are 1-indexed.\n')
    mixed = subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", "read", "book.pdf", "--limit", "2"],
                           capture_output=True, text=True, timeout=120, cwd=ws)
    assert mixed.returncode == 2 and "give a PDF --pages" in mixed.stderr
    put(ws, "a.txt", "x\n")
    text = subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", "read", "a.txt", "--pages", "1"],
                          capture_output=True, text=True, timeout=120, cwd=ws)
    assert text.returncode == 2 and "--pages applies to a PDF FILE" in text.stderr
