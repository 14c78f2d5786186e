"""Formats benchmark (docs/PDF.md, docs/NOTEBOOKS.md, docs/ENCODINGS.md): three rows.

usage::

    python bench/formats_bench.py [--calls 10] [--json]

* ``read_pdf`` of page 50 of a 200-page PDF (text pages written by the benchmark), in process:
  the median call (its worker process included) → reading the file's bytes raw.
* ``read`` of a notebook of 100 code cells and 20 plot outputs (640×480 PNG line plots): the
  tokens the model receives from the cell view (text, and the images as image content where
  images are enabled) → the tokens of the raw JSON a plain ``read`` would return (the reference
  profile). Tokens are estimated: UTF-8 bytes / 4 for text, width × height / 750 for an image
  (Anthropic's vision guide); the call's median time is given too.
* ``edit`` of a 10 MB Shift-JIS file → the same edit of the same text in UTF-8 (one replacement
  in the middle; a fresh copy per call; the policy's read first, not timed).

Each workload runs in its own child process. Library use (``bench/run.py``): ``rows(work)``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any

from workloads import script_result

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
TESTS = os.path.join(os.path.dirname(HERE), "tests")


_PDF = """
import anyio, json, statistics, sys, time
sys.path.insert(0, {src!r}); sys.path.insert(0, {tests!r})
import dsh_fs
from pdfkit import text_pages
folder, calls = {folder!r}, {calls}
with open(folder + "/book.pdf", "wb") as handle:
    handle.write(text_pages(200, words=120))
async def main():
    ctx = dsh_fs.create_context(cwd=folder, pdfs=True)
    times, raws, text = [], [], ""
    for i in range(calls + 1):
        start = time.perf_counter()
        result = await ctx.tools.execute("read_pdf", {{"file_path": "book.pdf", "pages": "50"}})
        if result.is_error:
            raise SystemExit(result.text)
        times.append(time.perf_counter() - start)
        text = result.text
        start = time.perf_counter()
        with open(folder + "/book.pdf", "rb") as handle:
            handle.read()
        raws.append(time.perf_counter() - start)
    print(json.dumps({{"ours": statistics.median(times[1:]), "base": statistics.median(raws[1:]),
                      "tokens": len(text.encode()) / 4}}))
anyio.run(main)
"""

_NOTEBOOK = """
import anyio, base64, io, json, random, statistics, sys, time
sys.path.insert(0, {src!r})
import dsh_fs, nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output
from PIL import Image, ImageDraw
folder, calls = {folder!r}, {calls}
random.seed(7)
def plot(n):
    image = Image.new("RGB", (640, 480), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle([60, 40, 600, 440], outline="black")
    points = [(60 + x * 5, 240 + int(150 * random.uniform(-1, 1))) for x in range(109)]
    draw.line(points, fill=(31, 119, 180), width=2)
    out = io.BytesIO(); image.save(out, format="PNG"); return out.getvalue()
cells = []
for n in range(100):
    outputs = [new_output("stream", name="stdout", text=f"step {{n}}: loss={{random.random():.4f}}\\n")]
    if n % 5 == 0:
        outputs.append(new_output("display_data", data={{"image/png": base64.b64encode(plot(n)).decode(),
                                                          "text/plain": "<Figure size 640x480 with 1 Axes>"}}))
    cells.append(new_code_cell(f"loss_{{n}} = train(model, batch={{n}})\\nplot(loss_{{n}})", execution_count=n + 1,
                               outputs=outputs))
nbformat.write(new_notebook(cells=cells), folder + "/run.ipynb")
async def main():
    view_ctx = dsh_fs.create_context(cwd=folder, images=True, read_limit=2000, read_max_bytes=10**7)
    raw_ctx = dsh_fs.create_context(cwd=folder, profile="reference", read_limit=2000, read_max_bytes=10**7)
    times = []
    for i in range(calls + 1):
        start = time.perf_counter()
        view = await view_ctx.tools.execute("read", {{"file_path": "run.ipynb"}})
        times.append(time.perf_counter() - start)
    raw = await raw_ctx.tools.execute("read", {{"file_path": "run.ipynb"}})
    image_tokens = sum(640 * 480 / 750 for _ in view.images)
    print(json.dumps({{"ours": statistics.median(times[1:]), "view_text": len(view.text.encode()) / 4,
                      "images": len(view.images), "image_tokens": image_tokens,
                      "raw": len(raw.text.encode()) / 4, "raw_file": len(open(folder + "/run.ipynb", "rb").read())}}))
anyio.run(main)
"""

_EDIT = """
import anyio, json, statistics, sys, time
sys.path.insert(0, {src!r})
import dsh_fs
folder, calls, encoding = {folder!r}, {calls}, {encoding!r}
line = "これは日本語のテキストファイルの一行です。編集は真ん中の一行だけを置き換えます。\\n"
count = (10 * 1000 * 1000) // len(line.encode("shift_jis"))
lines = [line] * count
lines[count // 2] = "ここを置き換える\\n"
data = "".join(lines).encode(encoding)
async def main():
    ctx = dsh_fs.create_context(cwd=folder, encodings=["shift_jis"] if encoding == "shift_jis" else [],
                                read_stream_min_size=1 << 40)
    times = []
    for i in range(calls + 1):
        with open(folder + "/big.txt", "wb") as handle:
            handle.write(data)
        session = dsh_fs.Session(cwd=folder)
        seen = await ctx.tools.execute("read", {{"file_path": "big.txt", "limit": 1}}, session=session)
        if seen.is_error:
            raise SystemExit(seen.text)
        start = time.perf_counter()
        result = await ctx.tools.execute("edit", {{"file_path": "big.txt", "old_string": "ここを置き換える",
                                                    "new_string": "置き換えた"}}, session=session)
        times.append(time.perf_counter() - start)
        if result.is_error:
            raise SystemExit(result.text)
    print(json.dumps({{"ours": statistics.median(times[1:]), "size": len(data)}}))
anyio.run(main)
"""


def rows(work: str, *, calls: int = 10) -> list[dict[str, Any]]:
    """The three rows (see the module docstring)."""
    folder = os.path.join(work, "formats")
    os.makedirs(folder, exist_ok=True)
    pdf = script_result(_PDF.format(src=SRC, tests=TESTS, folder=folder, calls=calls), timeout=900)
    notebook = script_result(_NOTEBOOK.format(src=SRC, folder=folder, calls=max(3, calls // 2)), timeout=900)
    sjis = script_result(_EDIT.format(src=SRC, folder=folder, calls=max(3, calls // 2), encoding="shift_jis"),
                         timeout=900)
    utf8 = script_result(_EDIT.format(src=SRC, folder=folder, calls=max(3, calls // 2), encoding="utf-8"), timeout=900)
    view_tokens = notebook["view_text"] + notebook["image_tokens"]
    return [
        {"workload": f"read_pdf of page 50 of a 200-page PDF (≈{pdf['tokens']:.0f} tokens returned), in process",
         "ours": pdf["ours"], "ours_mem": None, "baseline": "raw read of its bytes", "base": pdf["base"],
         "base_mem": None, "ratio": pdf["ours"] / pdf["base"], "target": "(info)", "met": None},
        {"workload": (f"read of a notebook, 100 cells and {notebook['images']} plots "
                      f"({notebook['raw_file'] / 1e6:.1f} MB): ≈{notebook['view_text']:.0f} text tokens + "
                      f"≈{notebook['image_tokens']:.0f} image tokens vs ≈{notebook['raw']:.0f} tokens of JSON"),
         "ours": notebook["ours"], "ours_mem": None, "baseline": "tokens: cell view ÷ raw JSON",
         "base": None, "base_mem": None, "ratio": view_tokens / notebook["raw"], "target": "(info)", "met": None},
        {"workload": f"edit of a {sjis['size'] / 1e6:.0f} MB Shift-JIS file (encodings=[shift_jis])",
         "ours": sjis["ours"], "ours_mem": None, "baseline": "the same edit of the text in UTF-8",
         "base": utf8["ours"], "base_mem": None, "ratio": sjis["ours"] / utf8["ours"], "target": "(info)", "met": None},
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    work = tempfile.mkdtemp(prefix="dsh-fs-formats-bench-")
    os.environ.setdefault("DSH_FS_LOCK_DIR", os.path.join(work, "locks"))
    try:
        found = rows(work, calls=args.calls)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(found))
    else:
        for row in found:
            base = f"{row['base'] * 1e3:.2f} ms" if row["base"] is not None else row["baseline"]
            print(f"{row['workload']}: ours {row['ours'] * 1e3:.1f} ms, base {base}, ratio {row['ratio']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
