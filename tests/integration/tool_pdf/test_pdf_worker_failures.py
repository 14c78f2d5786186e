"""How ``read_pdf`` reports a worker that fails (docs/PDF.md, "Bounded"): the worker program is
replaced by small stand-ins that die the ways a PDFium process can — a signal, a bad exit, a
``MemoryError``, ``SIGXCPU``, an answer that is not JSON or is too big, one of the worker's own
error answers — and each is a clear error naming the file, the stand-in's process reaped. The
real worker's limits and bombs: tests/robustness/tool_pdf/test_pdf_bombs.py."""

from __future__ import annotations

import os
import signal
import sys
import textwrap

import pytest
from pdfkit import text_pages

from dsh_fs import create_context
from dsh_fs.tool_pdf import extract

pytestmark = pytest.mark.anyio


@pytest.fixture
def pdf(ws: str) -> str:
    path = os.path.join(ws, "a.pdf")
    with open(path, "wb") as handle:
        handle.write(text_pages(2))
    return path


def stand_in(monkeypatch: pytest.MonkeyPatch, tmp_path: object, body: str) -> None:
    """Make ``body`` (after reading stdin whole) the worker program."""
    program = os.path.join(str(tmp_path), "worker.py")
    with open(program, "w", encoding="utf-8") as handle:
        handle.write("import os, signal, sys\nsys.stdin.buffer.read()\n" + textwrap.dedent(body))
    monkeypatch.setattr(extract, "WORKER", program)


async def read(ws: str, pages: str | None = None, **config: int) -> str:
    ctx = create_context(cwd=ws, pdfs=True, **config)
    args = {"file_path": "a.pdf"} if pages is None else {"file_path": "a.pdf", "pages": pages}
    return (await ctx.tools.execute("read_pdf", args)).text


@pytest.mark.parametrize(("body", "expected"), [
    ("os.kill(os.getpid(), signal.SIGSEGV)\n",
     'the PDF reader stopped on this file (signal 11): it may be damaged, or need more than the 1073741824-byte memory limit'),
    ("sys.exit(3)\n",
     'the PDF reader stopped on this file (exit status 3): it may be damaged, or need more than the 1073741824-byte memory limit'),
    ("sys.exit(0)\n",
     'the PDF reader stopped on this file (exit status 0): it may be damaged, or need more than the 1073741824-byte memory limit'),
    ("raise MemoryError\n", "the PDF could not be read within the 1073741824-byte memory limit"),
    ("sys.stderr.write('terminate called after throwing an instance of std::bad_alloc'); sys.exit(1)\n",
     "the PDF could not be read within the 1073741824-byte memory limit"),
    ("sys.stderr.write('Out of memory'); sys.stderr.flush(); os.abort()\n", "the PDF could not be read within the 1073741824-byte memory limit"),
    ("os.kill(os.getpid(), signal.SIGXCPU)\n", "the PDF could not be read within the 30-second time limit"),
    ("print('not json')\n",
     'the PDF reader stopped on this file (an answer that is not JSON): it may be damaged, or need more than the '
     '1073741824-byte memory limit'),
    ("print('[1, 2]')\n",
     'the PDF reader stopped on this file (an answer that is not a JSON object): it may be damaged, or need more than '
     'the 1073741824-byte memory limit'),
    ("sys.stdout.write('x' * 50_000_000)\n",
     'the PDF reader stopped on this file (an answer over '),
    ('print(\'{"error": "memory", "detail": ""}\')\n', "the PDF could not be read within the 1073741824-byte memory limit"),
    ('print(\'{"error": "damaged", "detail": "x"}\')\n', "PDF file is corrupted or invalid."),
    ('print(\'{"error": "password", "detail": "x"}\')\n',
     "PDF is password-protected. Please provide an unprotected version."),
    ('print(\'{"error": "range"}\')\n', "page 1 is out of range (the PDF has 0 pages)"),
    ('print(\'{"pages": 2, "items": []}\')\n', "PDF file is corrupted or invalid."),
    ('print(\'{"error": "something new"}\')\n', "PDF file is corrupted or invalid."),
])
async def test_each_way_a_worker_fails_is_a_clear_error(ws: str, pdf: str, tmp_path: object,
                                                        monkeypatch: pytest.MonkeyPatch, body: str, expected: str) -> None:
    stand_in(monkeypatch, tmp_path, body)
    text = await read(ws)
    assert text.startswith(f'Error: cannot read "{pdf}": {expected}'), text


async def test_a_stand_in_that_answers_is_rendered(ws: str, pdf: str, tmp_path: object,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The parent reads stderr beside stdout (a worker that writes much to stderr never blocks)
    and takes a JSON answer from a worker that exits 0."""
    stand_in(monkeypatch, tmp_path, """
        sys.stderr.write('w' * 2_000_000); sys.stderr.flush()
        print('{"pages": 1, "items": [{"page": 1, "text": "hello"}]}')
    """)
    assert (await read(ws)).endswith("--- page 1 of 1 ---\nhello\n\n(End of file - total 1 pages)\n</content>")


def test_the_worker_exit_is_classified() -> None:
    ended = extract._ended
    assert ended(-signal.SIGXCPU, b"").kind == "time"
    assert ended(-signal.SIGKILL, b"").how == "signal 9" and ended(-signal.SIGKILL, b"").kind == "crash"
    assert ended(1, b"Traceback\nMemoryError\n").kind == "memory"
    assert ended(-6, b"std::bad_alloc").kind == "memory" and ended(-6, b"Out of memory").kind == "memory"
    assert ended(2, b"").how == "exit status 2" and ended(0, b"").how == "exit status 0"
    failed = extract.WorkerFailed("crash", "x")
    assert (failed.kind, failed.how, failed.args) == ("crash", "x", ("crash", "x"))
    assert os.path.basename(extract.WORKER) == "worker.py" and os.path.isfile(extract.WORKER)
    assert sys.executable


async def test_the_longest_answer_fits_and_one_byte_more_does_not(ws: str, pdf: str, tmp_path: object,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Two pages of ``pdf_max_output_bytes + 1`` astral characters (12 bytes each, JSON-escaped)
    are an answer the parent takes; padded to one byte over ``answer_limit`` it is refused."""
    limit = extract.answer_limit(2, 101, 0)
    assert limit == 2 * (101 * 12 + 256) + 65536
    for pad, refused in ((0, False), (1, True)):
        stand_in(monkeypatch, tmp_path, f"""
            import json
            text = "\\U0001f600" * 101
            answer = json.dumps({{"pages": 2, "items": [{{"page": 1, "text": text}}, {{"page": 2, "text": text}}]}})
            sys.stdout.write(answer + " " * ({limit} - len(answer) + {pad}))
        """)
        text = await read(ws, "1-2", pdf_max_output_bytes=100)
        if refused:
            assert f"(an answer over {limit} bytes)" in text, text
        else:
            assert "--- page 1 of 2 ---" in text and "[… the rest of this page" in text, text
    assert extract.answer_limit(1, 10, 3) == 10 * 12 + 256 + 3 * 4 // 3 + 4 + 65536
    assert extract.answer_limit(20, 1, 0) == 20 * (12 + 256) + 65536
