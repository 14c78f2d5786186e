"""Real Jupyter notebooks for the notebook tests, written by ``nbformat`` (imported as
``notebookkit``; no tests here).

``sample()`` is a small analysis notebook: a markdown cell, a code cell with a stream and an
``execute_result``, one with a PNG plot and one that failed (an error with a coloured
traceback). ``written(nb)`` is its text as Jupyter saves it (``nbformat.write``: indent 1,
sorted keys, a final line break); ``with_images(cells, images)`` a notebook of many cells and
image outputs (the benchmark's shape).
"""

from __future__ import annotations

import base64
import io
import os
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from PIL import Image

__all__ = ("png", "put", "sample", "with_images", "written")


def png(width: int = 64, height: int = 48, colour: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A real PNG of one colour."""
    out = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(out, format="PNG")
    return out.getvalue()


def sample() -> Any:
    """The sample notebook (nbformat 4.5, with cell ids ``intro``, ``load``, ``plot``, ``oops``)."""
    plot = new_output("display_data", data={"image/png": base64.b64encode(png()).decode("ascii"),
                                            "text/plain": "<Figure size 640x480 with 1 Axes>"})
    error = new_output("error", ename="ZeroDivisionError", evalue="division by zero",
                       traceback=["\x1b[0;31m---------------------------------------------------------------------------\x1b[0m",
                                  "\x1b[0;31mZeroDivisionError\x1b[0m                         Traceback (most recent call last)",
                                  "Cell \x1b[0;32mIn[4], line 1\x1b[0m\n\x1b[0;32m----> 1\x1b[0m \x1b[38;5;241m1\x1b[39m\x1b[38;5;241m/\x1b[39m\x1b[38;5;241m0\x1b[39m",
                                  "\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"])
    cells = [
        new_markdown_cell("# Sales\nQuarterly numbers.", id="intro"),
        new_code_cell("import math\nprint(math.pi)\nmath.e", id="load", execution_count=1,
                      outputs=[new_output("stream", name="stdout", text="3.141592653589793\n"),
                               new_output("execute_result", data={"text/plain": "2.718281828459045"}, execution_count=1)]),
        new_code_cell("plot()", id="plot", execution_count=2, outputs=[plot]),
        new_code_cell("1/0", id="oops", execution_count=3, outputs=[error]),
    ]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def with_images(cells: int, images: int) -> Any:
    """A notebook of ``cells`` code cells, the first ``images`` of which show a PNG plot."""
    out = []
    for index in range(cells):
        outputs = [new_output("stream", name="stdout", text=f"step {index}\n")]
        if index < images:
            outputs.append(new_output("display_data", data={
                "image/png": base64.b64encode(png(320, 240, (index % 256, 80, 160))).decode("ascii"),
                "text/plain": "<Figure size 640x480 with 1 Axes>"}))
        out.append(new_code_cell(f"result_{index} = compute({index})\nplot(result_{index})", id=f"c{index}",
                                 execution_count=index + 1, outputs=outputs))
    return new_notebook(cells=out)


def written(nb: Any) -> str:
    """``nb`` as Jupyter saves it (``nbformat.write``: a final line break)."""
    return nbformat.writes(nb) + "\n"


def put(ws: str, name: str, text: str | bytes) -> str:
    """Write ``text`` (UTF-8) or bytes to ``ws/name``; return the path."""
    path = os.path.join(ws, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(text.encode("utf-8") if isinstance(text, str) else text)
    return path
