"""``read`` of a Jupyter notebook through the registry (DEVIATIONS F1; docs/NOTEBOOKS.md): the cell
view on the local disk and in memory, paged with ``offset``/``limit``, images as image content
where the deployment takes images (``read_image`` loaded), the JSON text in the ``reference``
profile, and the fallbacks (too big, not a notebook) with their notes. The observation is
recorded: ``edit`` of the JSON text works after a cell view. S3: tests/s3/test_s3_formats.py."""

from __future__ import annotations

import base64
import json

import pytest
from nbformat.v4 import new_output
from notebookkit import png, put, sample, with_images, written

import dsh_fs
from dsh_fs import Session, create_context
from dsh_fs.fs_memory import MemoryFileSystem

pytestmark = pytest.mark.anyio

VIEW = [
    '<notebook language="python" cells="4">',
    '<cell id="intro" type="markdown">', "# Sales", "Quarterly numbers.", "</cell>",
    '<cell id="load" type="code" execution_count="1">', "import math", "print(math.pi)", "math.e", "</cell>",
    '<output type="stream" name="stdout">', "3.141592653589793", "</output>",
    '<output type="execute_result">', "2.718281828459045", "</output>",
    '<cell id="plot" type="code" execution_count="2">', "plot()", "</cell>",
    '<output type="display_data">', "<Figure size 640x480 with 1 Axes>", f"[image/png image, 64x48 px, {len(png())} bytes]",
    "</output>",
    '<cell id="oops" type="code" execution_count="3">', "1/0", "</cell>",
    '<output type="error">', "ZeroDivisionError: division by zero",
    "---------------------------------------------------------------------------",
    "ZeroDivisionError                         Traceback (most recent call last)",
    "Cell In[4], line 1", "----> 1 1/0", "ZeroDivisionError: division by zero", "</output>",
]


def envelope(path: str, lines: list[str], first: int, footer: str, *notes: str, kind: str = "notebook") -> str:
    body = "\n".join(f"{n}: {text}" for n, text in enumerate(lines, start=first))
    tail = "\n".join((footer, *notes))
    return f"<path>{path}</path>\n<type>{kind}</type>\n<content>\n{body}\n\n{tail}\n</content>"


async def read(ctx: dsh_fs.Context, path: str, session: Session | None = None, **window: int) -> dsh_fs.ToolResult:
    return await ctx.tools.execute("read", {"file_path": path, **window}, session=session)


async def test_F1_read_shows_the_cells_not_the_json(ws: str) -> None:
    path = put(ws, "sales.ipynb", written(sample()))
    result = await read(create_context(cwd=ws), "sales.ipynb")
    assert not result.is_error
    assert result.content == [{"type": "text", "text": envelope(
        path, VIEW, 1, f"(End of file - total {len(VIEW)} lines)",
        "(1 image output is shown as a placeholder only: image reads are not enabled in this deployment.)")}]


async def test_the_reference_profile_shows_the_json_text(ws: str) -> None:
    text = written(sample())
    path = put(ws, "sales.ipynb", text)
    result = await read(create_context(cwd=ws, profile="reference"), "sales.ipynb", limit=3)
    assert result.text == envelope(path, text.split("\n")[:3], 1,
                                   f"(Showing lines 1-3 of {text.count(chr(10))}. Use offset=4 to continue.)", kind="file")


async def test_offset_and_limit_page_through_the_view(ws: str) -> None:
    path = put(ws, "sales.ipynb", written(sample()))
    ctx = create_context(cwd=ws)
    page = await read(ctx, "sales.ipynb", offset=6, limit=5)
    assert page.text == envelope(path, VIEW[5:10], 6, f"(Showing lines 6-10 of {len(VIEW)}. Use offset=11 to continue.)")
    tail = await read(ctx, "sales.ipynb", offset=30)
    assert tail.text == envelope(path, VIEW[29:], 30, f"(End of file - total {len(VIEW)} lines)")
    beyond = await read(ctx, "sales.ipynb", offset=99)
    assert beyond.text == f'Error: offset 99 is out of range for "{path}" ({len(VIEW)} lines)'
    capped = await read(create_context(cwd=ws, read_max_bytes=100), "sales.ipynb")
    assert capped.text.endswith("(Output capped. Showing lines 1-4. Use offset=5 to continue.)\n</content>")


async def test_images_are_image_content_where_the_deployment_takes_images(ws: str) -> None:
    path = put(ws, "sales.ipynb", written(sample()))
    result = await read(create_context(cwd=ws, images=True), "sales.ipynb")
    text, image = result.content
    assert text["text"] == envelope(path, VIEW, 1, f"(End of file - total {len(VIEW)} lines)",
                                    "(The image of line 22 follows as image content.)")
    assert image == {"type": "image", "data": base64.b64encode(png()).decode("ascii"), "mimeType": "image/png"}
    outside = await read(create_context(cwd=ws, images=True), "sales.ipynb", limit=10)
    assert outside.images == [] and "image" not in outside.text.split("</cell>")[-1]


async def test_image_caps_and_refusals_are_said(ws: str) -> None:
    path = put(ws, "many.ipynb", written(with_images(25, 25)))
    result = await read(create_context(cwd=ws, images=True), "many.ipynb")
    assert len(result.images) == 20
    text = result.text
    lines = [int(line.split(": ", 1)[0]) for line in text.split("\n") if line.split(": ", 1)[-1].startswith("[image/png")]
    assert f"(The images of lines {', '.join(map(str, lines[:20]))} follow as image content.)" in text
    for line in lines[20:]:
        assert (f"(The image of line {line} is not shown: one read returns at most 20 images; "
                f"read from offset={line} for it.)") in text
    wide = with_images(1, 0)
    wide.cells[0].outputs.append(new_output("display_data", data={"image/png": base64.b64encode(png(2500, 10)).decode()}))
    wide.cells[0].outputs.append(new_output("display_data", data={"image/jpeg": base64.b64encode(png(5, 5)).decode()}))
    put(ws, "wide.ipynb", written(wide))
    refused = await read(create_context(cwd=ws, images=True), "wide.ipynb")
    assert refused.images == []
    numbered = {text: int(n) for n, _, text in (line.partition(": ") for line in refused.text.split("\n")[3:])
                if text.startswith("[image/")}
    wide_line = numbered[f"[image/png image, 2500x10 px, {len(png(2500, 10))} bytes]"]
    jpeg_line = numbered[f"[image/jpeg image, 5x5 px, {len(png(5, 5))} bytes]"]
    assert f"(The image of line {wide_line} is not shown: at least one image side exceeds the 2000px limit)" in refused.text
    assert (f"(The image of line {jpeg_line} is not shown: the bytes are another image format than the declared one)"
            in refused.text)
    small = await read(create_context(cwd=ws, images=True, image_max_message_bytes=1000), "many.ipynb", limit=25)
    assert len(small.images) == 1 and "would pass the 1000-byte limit" in small.text
    gif_only = create_context(cwd=ws, images=True, image_media_types=["image/gif"])
    assert "image/png images are not accepted by this deployment" in (await read(gif_only, "many.ipynb", limit=12)).text
    assert path


async def test_fallbacks_show_the_text_with_a_note(ws: str) -> None:
    put(ws, "broken.ipynb", '{"cells": [')
    put(ws, "list.ipynb", "[1, 2]\n")
    ctx = create_context(cwd=ws)
    broken = await read(ctx, "broken.ipynb")
    assert broken.text == envelope(f"{ws}/broken.ipynb", ['{"cells": ['], 1, "(End of file - total 1 lines)",
                                   "(This .ipynb file is not a notebook (not valid JSON): shown as its text.)", kind="file")
    shaped = await read(ctx, "list.ipynb")
    assert shaped.text.endswith("(This .ipynb file is not a notebook (the top level is not a JSON object): "
                                "shown as its text.)\n</content>")
    text = written(sample())
    put(ws, "big.ipynb", text)
    big = await read(create_context(cwd=ws, notebook_max_bytes=100), "big.ipynb", limit=2)
    assert big.text == envelope(f"{ws}/big.ipynb", text.split("\n")[:2], 1,
                                f"(Showing lines 1-2 of {text.count(chr(10))}. Use offset=3 to continue.)",
                                f"(This notebook is {len(text)} bytes, more than the 100-byte limit of the cell view: "
                                "shown as its JSON text.)", kind="file")
    with pytest.raises(ValueError, match="tool-fs: notebook_max_bytes must be a positive integer"):
        create_context(cwd=ws, notebook_max_bytes=0)


async def test_a_notebook_that_is_not_text_fails_as_read_does(ws: str) -> None:
    put(ws, "bin.ipynb", b"\x00\x01")
    result = await read(create_context(cwd=ws), "bin.ipynb")
    assert result.text.startswith(f'Error: cannot read "{ws}/bin.ipynb": binary file')


async def test_the_cell_view_is_a_read_for_the_policy(ws: str) -> None:
    text = written(sample())
    put(ws, "sales.ipynb", text)
    ctx, session = create_context(cwd=ws), Session(cwd=ws)
    refused = await ctx.tools.execute("edit", {"file_path": "sales.ipynb", "old_string": "Quarterly", "new_string": "Yearly"},
                                      session=session)
    assert refused.is_error and "read" in refused.text
    await read(ctx, "sales.ipynb", session)
    done = await ctx.tools.execute("edit", {"file_path": "sales.ipynb", "old_string": "Quarterly", "new_string": "Yearly"},
                                   session=session)
    assert not done.is_error, done.text
    with open(f"{ws}/sales.ipynb", encoding="utf-8") as handle:
        assert handle.read() == text.replace("Quarterly", "Yearly")


async def test_the_memory_provider_shows_the_same_view() -> None:
    text = written(sample())
    fs = MemoryFileSystem(files={"/w/sales.ipynb": text}, cwd="/w")
    result = await read(create_context(provider=fs, search=False), "sales.ipynb")
    assert result.text == envelope("/w/sales.ipynb", VIEW, 1, f"(End of file - total {len(VIEW)} lines)",
                                   "(1 image output is shown as a placeholder only: image reads are not enabled in this "
                                   "deployment.)")
    assert json.loads(text)["cells"][0]["id"] == "intro"


async def test_images_at_the_window_edges_and_their_notes(ws: str) -> None:
    put(ws, "sales.ipynb", written(sample()))
    ctx = create_context(cwd=ws, images=True)
    assert len((await read(ctx, "sales.ipynb", offset=22, limit=1)).images) == 1  # the image's own line
    assert (await read(ctx, "sales.ipynb", limit=21)).images == []  # the window ends just before it
    assert len((await read(ctx, "sales.ipynb", limit=22)).images) == 1
    put(ws, "two.ipynb", written(with_images(2, 2)))
    both = await read(ctx, "two.ipynb")
    assert len(both.images) == 2 and "(The images of lines 11, 22 follow as image content.)" in both.text
    plain = await read(create_context(cwd=ws), "two.ipynb")
    assert "(2 image outputs are shown as placeholders only: image reads are not enabled in this deployment.)" in plain.text
    one_image = len(png(320, 240, (0, 80, 160)))
    exact = await read(create_context(cwd=ws, images=True, image_max_message_bytes=one_image), "two.ipynb", limit=12)
    assert len(exact.images) == 1  # an image of exactly the remaining budget is sent
