"""Hostile PDFs and notebooks answer a clear error within bounded time and memory, off the event
loop, without stalling anyone else (docs/PDF.md and docs/NOTEBOOKS.md, "Bounded"; the same style
as the image bomb, tests/integration/test_read_image.py).

* PDF bombs (``tests/pdfkit.py``): 100,000 pages, a page tree nested 100,000 deep, a content
  stream that inflates to 3 GiB from a few kilobytes — read by a process under ``ulimit -v``
  (``RLIMIT_AS``); each answers within the worker's time limit and the process's peak RSS stays
  bounded (the PDF is parsed only in the worker child).
* A notebook bomb: a 500 MB output cell is refused on its size (never read), a deeply nested
  one is shown as text.
Not stalled (a ``read_pdf`` held open in its worker, another call of the same MCP server
answers first): tests/e2e/mcp/test_mcp_formats.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from pdfkit import deep_pages, inflating, many_pages

pytestmark = pytest.mark.timeout(300)


def put(ws: str, name: str, data: bytes) -> str:
    path = os.path.join(ws, name)
    with open(path, "wb") as handle:
        handle.write(data)
    return path


def run_limited(ws: str, body: str, *, address_space: int) -> list[str]:
    """Run ``body`` (an async function ``main(ctx)`` printing lines) in a fresh Python process
    whose address space is capped at ``address_space`` bytes; its stdout lines."""
    script = textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, ({address_space}, {address_space}))
        import anyio, dsh_fs
        {textwrap.indent(textwrap.dedent(body), "        ").strip()}
        anyio.run(main)
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ws, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


def test_pdf_bombs_are_refused_within_bounded_time_and_memory(ws: str) -> None:
    put(ws, "many.pdf", many_pages(100_000))
    put(ws, "deep.pdf", deep_pages(100_000))
    put(ws, "inflating.pdf", inflating(3 << 30))
    lines = run_limited(ws, f"""
        import resource, time
        async def main():
            ctx = dsh_fs.create_context(cwd={ws!r}, pdfs=True, pdf_worker_memory=512 << 20, pdf_worker_seconds=60)
            before = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0])  # VmHWM: this process's own peak (ru_maxrss counts the test runner that spawned it)
            for name, pages in (("many.pdf", "99999-100000"), ("deep.pdf", None), ("inflating.pdf", None)):
                args = {{"file_path": name}} if pages is None else {{"file_path": name, "pages": pages}}
                started = time.monotonic()
                result = await ctx.tools.execute("read_pdf", args)
                print(name, round(time.monotonic() - started), result.is_error, result.text.replace(chr(10), "|"))
            print("rss", before, int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]))
    """, address_space=3 << 30)
    results = {line.split(" ", 1)[0]: line.split(" ", 3)[1:] for line in lines}
    many, deep, inflated = results["many.pdf"], results["deep.pdf"], results["inflating.pdf"]
    assert many[1] == "False" and many[2].endswith("--- page 100000 of 100000 ---|Same text||(End of file - total 100000 pages)|</content>")
    assert deep[1] == "True" and deep[2] == f'Error: cannot read "{ws}/deep.pdf": PDF file is corrupted or invalid.'
    assert inflated[1] == "True" and inflated[2].startswith(f'Error: cannot read "{ws}/inflating.pdf": ')
    assert ("536870912-byte memory limit" in inflated[2] or "PDF file is corrupted or invalid." in inflated[2]
            or "60-second time limit" in inflated[2]), inflated[2]
    for name in ("many.pdf", "deep.pdf", "inflating.pdf"):
        assert int(results[name][0]) <= 62, (name, results[name])
    before, after = (int(n) for n in results["rss"])
    assert after - before < 64 * 1024, (before, after)  # KiB: the 16 MB file and the answers, never a parse


def test_a_notebook_bomb_is_refused_on_its_size(ws: str) -> None:
    head = b'{"cells": [{"cell_type": "code", "source": "x", "metadata": {}, "execution_count": 1, "outputs": ['
    with open(os.path.join(ws, "huge.ipynb"), "wb") as handle:  # a 500 MB output cell
        handle.write(head + b'{"output_type": "stream", "name": "stdout", "text": "')
        chunk = b"x" * (1 << 20)
        for _ in range(500):
            handle.write(chunk)
        handle.write(b'"}]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n')
    put(ws, "nested.ipynb", b'{"cells": [' + b"[" * 200_000 + b"]" * 200_000 + b"]}")
    lines = run_limited(ws, """
        import resource, time
        async def main():
            ctx = dsh_fs.create_context(cwd=".", faces=["notebook_edit"])
            session = dsh_fs.Session(cwd=".")
            before = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0])  # VmHWM: this process's own peak (ru_maxrss counts the test runner that spawned it)
            for name in ("huge.ipynb", "nested.ipynb"):
                result = await ctx.tools.execute("read", {"file_path": name, "limit": 1}, session=session)
                print(name, result.is_error, result.text.replace(chr(10), "|"))
            edited = await ctx.tools.execute("notebook_edit", {"notebook_path": "huge.ipynb", "cell_id": "cell-0",
                                                               "new_source": "y"}, session=session)
            print("edit", edited.is_error, edited.text)
            print("rss", before, int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]))
    """, address_space=2 << 30)
    results = {line.split(" ", 1)[0]: line.split(" ", 2)[1:] for line in lines}
    assert results["huge.ipynb"][0] == "False"
    assert results["huge.ipynb"][1].endswith(f"more than the {32 << 20}-byte limit of the cell view: shown as its JSON "
                                             "text.)|</content>")
    assert results["nested.ipynb"][1].endswith("(This .ipynb file is not a notebook (nested too deeply): shown as its "
                                               "text.)|</content>") or "not valid JSON" in results["nested.ipynb"][1]
    assert results["edit"] == ["True", f'Error: cannot edit "{ws}/huge.ipynb": the notebook is '
                                       f"{os.path.getsize(os.path.join(ws, 'huge.ipynb'))} bytes, more than the limit of "
                                       f"{32 << 20} bytes notebook_edit changes; change it with edit"]
    before, after = (int(n) for n in results["rss"])
    assert after - before < 96 * 1024, (before, after)  # KiB: a window of the text, never the 500 MB
