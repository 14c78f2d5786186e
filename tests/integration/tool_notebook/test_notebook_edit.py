"""``notebook_edit`` through the registry (docs/NOTEBOOKS.md; DEVIATIONS F2–F5): Claude Code's
``NotebookEdit`` arguments and texts, on notebooks written by ``nbformat``, under the observation
policy (read first; a notebook changed since, e.g. by a kernel's autosave, is refused), with the
result read back from the disk and validated by ``nbformat``. Every failure leaves the file
byte-identical. The memory provider too; S3: tests/s3/test_s3_formats.py; MCP and the CLI:
tests/e2e/mcp/test_mcp_formats.py."""

from __future__ import annotations

import difflib
import os

import nbformat
import pytest
from nbformat.v4 import new_markdown_cell, new_notebook
from notebookkit import put, sample, with_images, written

import dsh_fs
from dsh_fs import Session, create_context
from dsh_fs.fs_memory import MemoryFileSystem
from dsh_fs.tool_notebook import ToolNotebookEdit

pytestmark = pytest.mark.anyio


def on_disk(path: str) -> str:
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


async def edit(ctx: dsh_fs.Context, session: Session | None, **args: object) -> dsh_fs.ToolResult:
    return await ctx.tools.execute("notebook_edit", {"notebook_path": "sales.ipynb", **args}, session=session)


@pytest.fixture
def nb(ws: str) -> str:
    return put(ws, "sales.ipynb", written(sample()))


@pytest.fixture
async def ready(ws: str, nb: str) -> tuple[dsh_fs.Context, Session]:
    ctx, session = create_context(cwd=ws, faces=["notebook_edit"]), Session(cwd=ws)
    assert not (await ctx.tools.execute("read", {"file_path": "sales.ipynb"}, session=session)).is_error
    return ctx, session


def test_the_schema_is_claude_codes(ws: str) -> None:
    """The description and parameter texts, compared with ``@anthropic-ai/claude-code`` 2.1.100's
    ``NotebookEdit`` (also in ``@anthropic-ai/claude-agent-sdk`` 0.3.337's ``sdk-tools.d.ts``)."""
    schema = create_context(cwd=ws, faces=["notebook_edit"]).tools.get("notebook_edit").schema()
    assert schema == {"name": "notebook_edit", "description": (
        "Completely replaces the contents of a specific cell in a Jupyter notebook (.ipynb file) with new source. "
        "Jupyter notebooks are interactive documents that combine code, text, and visualizations, commonly used for "
        "data analysis and scientific computing. The notebook_path parameter must be an absolute path, not a relative "
        "path. The cell_number is 0-indexed. Use edit_mode=insert to add a new cell at the index specified by "
        "cell_number. Use edit_mode=delete to delete the cell at the index specified by cell_number."),
        "parameters": {"type": "object", "properties": {
            "notebook_path": {"type": "string", "description":
                              "The absolute path to the Jupyter notebook file to edit (must be absolute, not relative)"},
            "cell_id": {"type": "string", "description":
                        "The ID of the cell to edit. When inserting a new cell, the new cell will be inserted after the "
                        "cell with this ID, or at the beginning if not specified."},
            "new_source": {"type": "string", "description": "The new source for the cell"},
            "cell_type": {"type": "string", "enum": ["code", "markdown"], "description":
                          "The type of the cell (code or markdown). If not specified, it defaults to the current cell "
                          "type. If using edit_mode=insert, this is required."},
            "edit_mode": {"type": "string", "enum": ["replace", "insert", "delete"], "description":
                          "The type of edit to make (replace, insert, delete). Defaults to replace."}},
            "required": ["notebook_path", "new_source"]}}
    assert "notebook_edit" not in create_context(cwd=ws).tools.names()
    assert not create_context(cwd=ws, faces=["notebook_edit"]).tools.is_parallel(
        "notebook_edit", {"notebook_path": "a.ipynb", "new_source": ""})


async def test_replace_insert_delete_as_claude_code_answers(ready: tuple[dsh_fs.Context, Session], nb: str) -> None:
    ctx, session = ready
    replaced = await edit(ctx, session, cell_id="load", new_source="x = 2\nprint(x)")
    assert (replaced.is_error, replaced.text) == (False, "Updated cell load with x = 2\nprint(x)")
    assert replaced.meta["diffs"] and replaced.meta["diffs"][0]["path"] == "sales.ipynb"
    inserted = await edit(ctx, session, cell_id="intro", new_source="## Setup", cell_type="markdown", edit_mode="insert")
    new_id = nbformat.read(nb, as_version=4).cells[1].id
    assert inserted.text == f"Inserted cell {new_id} with ## Setup"
    deleted = await edit(ctx, session, cell_id="oops", new_source="", edit_mode="delete")
    assert deleted.text == "Deleted cell oops"
    by_index = await edit(ctx, session, cell_id="cell-0", new_source="# Report")
    assert by_index.text == "Updated cell cell-0 with # Report"
    spare = await edit(ctx, session, cell_id="cell-3", new_source="extra", cell_type="code", edit_mode="insert")
    deleted_by_index = await edit(ctx, session, cell_id="cell-4", new_source="", edit_mode="delete")
    assert not spare.is_error and deleted_by_index.text == "Deleted cell cell-4"
    book = nbformat.read(nb, as_version=4)
    nbformat.validate(book)
    assert [(c.id, c.cell_type, c.source) for c in book.cells] == [
        ("intro", "markdown", "# Report"), (new_id, "markdown", "## Setup"), ("load", "code", "x = 2\nprint(x)"),
        ("plot", "code", "plot()")]
    assert book.cells[2].outputs == [] and book.cells[2].execution_count is None
    assert book.cells[3].outputs  # the other cells keep their outputs


async def test_F5_only_the_edited_cells_lines_change(ready: tuple[dsh_fs.Context, Session], nb: str) -> None:
    before = on_disk(nb)
    await edit(ctx := ready[0], ready[1], cell_id="intro", new_source="# Sales 2026\nQuarterly numbers.")
    after = on_disk(nb)
    changed = [line for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line[:1] in "+-"]
    assert changed == ['- ' + '    "# Sales\\n",', '+ ' + '    "# Sales 2026\\n",']
    assert after == written(nbformat.read(nb, as_version=4))
    assert ctx


async def test_policy_read_first_and_stale_refused(ws: str, nb: str) -> None:
    ctx, session = create_context(cwd=ws, faces=["notebook_edit"]), Session(cwd=ws)
    before = on_disk(nb)
    unread = await edit(ctx, session, cell_id="load", new_source="x")
    assert unread.error is not None and unread.error.code == "FS_NOT_OBSERVED"
    assert unread.text == f'Error: edit requires reading "{nb}" first — read the file, then retry'
    await ctx.tools.execute("read", {"file_path": "sales.ipynb"}, session=session)
    saved = sample()
    saved.cells[0].source = "# Saved by the kernel"
    put(ws, "sales.ipynb", written(saved))  # a running kernel's autosave
    changed = on_disk(nb)
    stale = await edit(ctx, session, cell_id="load", new_source="x")
    assert stale.error is not None and stale.error.code == "FS_STALE_VERSION"
    first, header, *diff = stale.text.split("\n")
    assert first == f'Error: cannot edit "{nb}": file changed since it was read — re-read the file, then retry'
    assert header.startswith("What changed since you last saw it")  # DEVIATIONS D30: the notebook's JSON text
    assert [line for line in diff if line[:1] in "+-" and line[:3] not in ("---", "+++")] == [
        '-    "# Sales\\n",', '-    "Quarterly numbers."', '+    "# Saved by the kernel"']
    assert on_disk(nb) == changed != before
    bare = create_context(cwd=ws, faces=["notebook_edit"], policy=False)
    assert not (await edit(bare, None, cell_id="load", new_source="y")).is_error


async def test_claude_codes_refusals_leave_the_file_alone(ready: tuple[dsh_fs.Context, Session], nb: str, ws: str) -> None:
    ctx, session = ready
    before = on_disk(nb)
    cases = [
        ({"cell_id": "nope", "new_source": "x"}, 'Cell with ID "nope" not found in notebook.'),
        ({"cell_id": "cell-9", "new_source": "x"}, "Cell with index 9 does not exist in notebook."),
        ({"new_source": "x"}, "Cell ID must be specified when not inserting a new cell."),
        ({"new_source": "x", "edit_mode": "insert"}, "Cell type is required when using edit_mode=insert."),
        ({"notebook_path": "missing.ipynb", "new_source": "x", "cell_id": "a"}, "Notebook file does not exist."),
        ({"notebook_path": " ", "new_source": "x"}, "file_path must be a non-empty string"),
    ]
    for args, text in cases:
        result = await edit(ctx, session, **args)
        assert (result.is_error, result.text) == (True, "Error: " + text), args
    missing = await edit(ctx, session, notebook_path="missing.ipynb", new_source="x", cell_id="a")
    assert missing.error is not None and missing.error.code == "FS_NOT_FOUND"
    bad_mode = await ctx.tools.execute("notebook_edit", {"notebook_path": "sales.ipynb", "new_source": "x",
                                                         "edit_mode": "append"}, session=session)
    assert bad_mode.error is not None and bad_mode.error.code == "INVALID_ARGS"
    os.mkdir(os.path.join(ws, "dir.ipynb"))
    folder = await edit(ctx, session, notebook_path="dir.ipynb", new_source="x", cell_id="a")
    assert folder.text == f'Error: cannot edit "{ws}/dir.ipynb": not a regular file'
    surrogate = await edit(ctx, session, cell_id="load", new_source="\ud800")
    assert surrogate.text == "Error: new_source must be valid Unicode text (lone surrogate U+D800 at index 0)"
    assert on_disk(nb) == before


async def test_F2_a_path_that_is_not_a_notebook(ws: str) -> None:
    put(ws, "a.py", "x = 1\n")
    for profile, tool in (("default", "edit"), ("reference", "FileEdit")):
        ctx = create_context(cwd=ws, faces=["notebook_edit"], profile=profile)
        result = await edit(ctx, None, notebook_path="a.py", new_source="y")
        assert result.text == (f"Error: File must be a Jupyter notebook (.ipynb file). For editing other file types, "
                               f"use the {tool} tool.")
        assert (await edit(ctx, None, notebook_path="a.IPYNB", new_source="y")).text == result.text


async def test_F3_an_invalid_notebook_is_refused(ws: str) -> None:
    ctx, session = create_context(cwd=ws, faces=["notebook_edit"]), Session(cwd=ws)
    bad = written(sample()).replace('"nbformat_minor": 5', '"nbformat_minor": "five"')
    path = put(ws, "sales.ipynb", bad)
    put(ws, "json.ipynb", '{"cells": [')
    put(ws, "shape.ipynb", '{"cells": 1}\n')
    for name in ("sales.ipynb", "json.ipynb", "shape.ipynb"):
        await ctx.tools.execute("read", {"file_path": name}, session=session)
    invalid = await edit(ctx, session, cell_id="load", new_source="x")
    assert invalid.text == (f'Error: cannot edit "{path}": the notebook is not valid nbformat (AssertionError); '
                            "nothing was written (fix it with edit or write first)")  # nbformat's own assert
    assert on_disk(path) == bad
    assert (await edit(ctx, session, notebook_path="json.ipynb", cell_id="a", new_source="x")).text == (
        "Error: Notebook is not valid JSON.")
    assert (await edit(ctx, session, notebook_path="shape.ipynb", cell_id="a", new_source="x")).text == (
        f'Error: cannot edit "{ws}/shape.ipynb": the notebook is not valid nbformat (there is no "cells" array); '
        "nothing was written (fix it with edit or write first)")
    extra = sample()
    extra.cells[0]["foo"] = 1
    put(ws, "extra.ipynb", written(extra))
    await ctx.tools.execute("read", {"file_path": "extra.ipynb"}, session=session)
    assert (await edit(ctx, session, notebook_path="extra.ipynb", cell_id="load", new_source="x")).text == (
        f'Error: cannot edit "{ws}/extra.ipynb": the notebook is not valid nbformat (Additional properties are not '
        "allowed ('foo' was unexpected)); nothing was written (fix it with edit or write first)")
    good = put(ws, "ok.ipynb", written(sample()))
    await ctx.tools.execute("read", {"file_path": "ok.ipynb"}, session=session)
    made_invalid = await edit(ctx, session, notebook_path="ok.ipynb", cell_id="intro", new_source="# x",
                              cell_type="markdown")
    assert not made_invalid.is_error
    assert good


async def test_line_endings_and_bom_are_kept(ws: str) -> None:
    text = "\ufeff" + written(sample()).replace("\n", "\r\n")
    path = put(ws, "sales.ipynb", text)
    ctx, session = create_context(cwd=ws, faces=["notebook_edit"]), Session(cwd=ws)
    await ctx.tools.execute("read", {"file_path": "sales.ipynb"}, session=session)
    assert not (await edit(ctx, session, cell_id="intro", new_source="# CRLF")).is_error
    after = on_disk(path)
    assert after.startswith("\ufeff{\r\n") and "\n" not in after.replace("\r\n", "")
    assert after == text.replace('"# Sales\\n",\r\n    "Quarterly numbers."', '"# CRLF"')


async def test_older_notebooks_without_ids(ws: str) -> None:
    old = new_notebook(cells=[new_markdown_cell("a"), new_markdown_cell("b")])
    old.nbformat_minor = 4
    for cell in old.cells:
        del cell["id"]
    path = put(ws, "sales.ipynb", written(old))
    ctx, session = create_context(cwd=ws, faces=["notebook_edit"]), Session(cwd=ws)
    view = await ctx.tools.execute("read", {"file_path": "sales.ipynb"}, session=session)
    assert '<cell id="cell-1" type="markdown">' in view.text
    inserted = await edit(ctx, session, cell_id="cell-1", new_source="c", cell_type="markdown", edit_mode="insert")
    assert inserted.text == "Inserted cell cell-2 with c"  # F4: Claude Code says "undefined"
    book = nbformat.read(path, as_version=4)
    assert [c.source for c in book.cells] == ["a", "b", "c"] and "id" not in book.cells[2]


async def test_a_big_notebook_is_edited_off_the_loop_and_a_huge_one_refused(ws: str) -> None:
    path = put(ws, "sales.ipynb", written(with_images(300, 300)))
    assert os.path.getsize(path) > 256 * 1024
    ctx, session = create_context(cwd=ws, faces=["notebook_edit"]), Session(cwd=ws)
    await ctx.tools.execute("read", {"file_path": "sales.ipynb"}, session=session)
    assert (await edit(ctx, session, cell_id="c299", new_source="done()")).text == "Updated cell c299 with done()"
    assert nbformat.read(path, as_version=4).cells[299].source == "done()"
    small = create_context(cwd=ws)
    small.plugin(ToolNotebookEdit, notebook_max_bytes=1000)
    await small.tools.execute("read", {"file_path": "sales.ipynb"}, session=session)
    await small.tools.execute("read", {"file_path": "sales.ipynb"}, session=session)
    before = on_disk(path)
    refused = await small.tools.execute("notebook_edit", {"notebook_path": "sales.ipynb", "cell_id": "c1",
                                                          "new_source": "x"}, session=session)
    size = os.path.getsize(path)
    assert refused.text == (f'Error: cannot edit "{path}": the notebook is {size} bytes, more than the limit of 1000 '
                            "bytes notebook_edit changes; change it with edit")
    assert on_disk(path) == before
    exact = create_context(cwd=ws)
    exact.plugin(ToolNotebookEdit, notebook_max_bytes=size)
    await exact.tools.execute("read", {"file_path": "sales.ipynb"}, session=session)
    at_limit = await exact.tools.execute("notebook_edit", {"notebook_path": "sales.ipynb", "cell_id": "c1",
                                                           "new_source": "x"}, session=session)
    assert not at_limit.is_error, at_limit.text  # a notebook of exactly the limit is changed
    with pytest.raises(ValueError, match="tool-notebook-edit: notebook_max_bytes must be a positive integer"):
        create_context(cwd=ws).plugin(ToolNotebookEdit, notebook_max_bytes=0)


async def test_on_the_memory_provider() -> None:
    fs = MemoryFileSystem(files={"/w/sales.ipynb": written(sample())}, cwd="/w")
    ctx, session = create_context(provider=fs, faces=["notebook_edit"], search=False), Session(cwd="/w")
    await ctx.tools.execute("read", {"file_path": "sales.ipynb"}, session=session)
    assert (await edit(ctx, session, cell_id="plot", new_source="", edit_mode="delete")).text == "Deleted cell plot"
    target = await fs.resolve("/w/sales.ipynb")
    book = nbformat.reads(await fs.read_text(target), as_version=4)
    assert [c.id for c in book.cells] == ["intro", "load", "oops"]


async def test_escalation_fields_are_not_this_faces(ready: tuple[dsh_fs.Context, Session], nb: str) -> None:
    """``notebook_edit`` takes no sandbox escalation fields: without a sandbox they are ignored
    (X1 refuses them only for the tools that take them)."""
    ctx, session = ready
    result = await edit(ctx, session, cell_id="load", new_source="y", sandbox_permissions="require_escalated",
                        justification="because")
    assert result.text == "Updated cell load with y"
