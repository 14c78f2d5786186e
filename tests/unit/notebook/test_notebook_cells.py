"""``notebook.cells``: Claude Code's ``NotebookEdit`` operations on a parsed notebook and the text
that writes it back (DEVIATIONS F4, F5). Pure; properties over random notebooks written by
``nbformat``: what ``dump`` writes is what Jupyter itself would write for the edited notebook.
Not here: reading, the policy and the write (tests/integration/tool_notebook/)."""

from __future__ import annotations

import json

import nbformat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from notebookkit import sample, written

from dsh_fs.notebook import parse
from dsh_fs.notebook.cells import CELL_ID_REQUIRED, Applied, EditRefused, apply, dump, split_source


def doc(*cells: dict, minor: int = 5) -> dict:
    return {"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": minor}


def edit(document: dict, cell_id: str | None, new_source: str, cell_type: str | None = None,
         mode: str = "replace") -> Applied:
    return apply(document, cell_id=cell_id, new_source=new_source, cell_type=cell_type, edit_mode=mode)  # type: ignore[arg-type]


def test_split_source_is_nbformats_line_list() -> None:
    assert split_source("") == []
    assert split_source("a") == ["a"]
    assert split_source("a\n") == ["a\n"]
    assert split_source("a\nb") == ["a\n", "b"]
    assert split_source("a\n\nb\n") == ["a\n", "\n", "b\n"]
    assert split_source("a\rb\x0cc") == ["a\r", "b\x0c", "c"]  # nbformat's splitlines


def test_replace_sets_the_source_and_clears_a_code_cells_outputs() -> None:
    document = parse(written(sample()))
    assert edit(document, "load", "x = 2\ny") == Applied("replace", "load", "import math\nprint(math.pi)\nmath.e")
    cell = document["cells"][1]
    assert cell["source"] == ["x = 2\n", "y"] and cell["outputs"] == [] and cell["execution_count"] is None
    assert edit(document, "intro", "# New") == Applied("replace", "intro", "# Sales\nQuarterly numbers.")
    assert document["cells"][0] == {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# New"]}
    string = doc({"cell_type": "markdown", "source": "old"})
    edit(string, "cell-0", "a\nb")
    assert string["cells"][0]["source"] == "a\nb"  # stored as the cell stored it


def test_insert_after_the_named_cell_or_at_the_top() -> None:
    document = doc({"cell_type": "markdown", "id": "a", "metadata": {}, "source": ["x"]},
                   {"cell_type": "markdown", "id": "b", "metadata": {}, "source": "y"})
    applied = edit(document, "a", "new\nsrc", "code", "insert")
    new = document["cells"][1]
    assert applied == Applied("insert", new["id"], None)
    assert list(new) == ["cell_type", "execution_count", "id", "metadata", "outputs", "source"]
    assert new == {"cell_type": "code", "execution_count": None, "id": new["id"], "metadata": {}, "outputs": [],
                   "source": ["new\n", "src"]}
    assert len(new["id"]) == 8 and int(new["id"], 16) >= 0 and new["id"] not in ("a", "b")
    top = edit(document, None, "t", "markdown", "insert")
    assert document["cells"][0] == {"cell_type": "markdown", "id": top.cell, "metadata": {}, "source": ["t"]}
    last = edit(document, "b", "z", "markdown", "insert")
    assert document["cells"][-1]["id"] == last.cell and len(document["cells"]) == 5
    plain = doc({"cell_type": "markdown", "source": "s"})
    assert edit(plain, None, "u", "markdown", "insert").cell == plain["cells"][0]["id"]
    assert plain["cells"][0]["source"] == "u"  # no cell stores a list: a string
    defaulted = doc()
    edit(defaulted, None, "d", None, "insert")
    assert defaulted["cells"][0]["cell_type"] == "code"


def test_insert_without_ids_names_the_cell_by_index() -> None:
    """F4: Claude Code answers ``Inserted cell undefined`` for a notebook without ids."""
    document = doc({"cell_type": "markdown", "source": "a"}, {"cell_type": "markdown", "source": "b"}, minor=4)
    assert edit(document, "cell-0", "x", "markdown", "insert") == Applied("insert", "cell-1", None)
    assert "id" not in document["cells"][1]


def test_new_ids_are_unused(monkeypatch: pytest.MonkeyPatch) -> None:
    draws = iter(["aaaaaaaa", "aaaaaaaa", "bbbbbbbb"])
    monkeypatch.setattr("dsh_fs.notebook.cells.secrets.token_hex", lambda n: next(draws))
    document = doc({"cell_type": "markdown", "id": "aaaaaaaa", "source": ""})
    assert edit(document, None, "x", "markdown", "insert").cell == "bbbbbbbb"


def test_delete_removes_the_named_cell() -> None:
    document = parse(written(sample()))
    assert edit(document, "cell-2", "", None, "delete") == Applied("delete", "plot", "plot()")
    assert [cell["id"] for cell in document["cells"]] == ["intro", "load", "oops"]


def test_refusals_are_claude_codes_texts() -> None:
    document = parse(written(sample()))
    before = json.dumps(document)
    for cell_id, mode, text in [
        (None, "replace", CELL_ID_REQUIRED), (None, "delete", CELL_ID_REQUIRED),
        ("nope", "replace", 'Cell with ID "nope" not found in notebook.'),
        ("nope", "insert", 'Cell with ID "nope" not found in notebook.'),
        ("cell-4", "delete", "Cell with index 4 does not exist in notebook."),
        ("cell-4", "insert", "Cell with index 4 does not exist in notebook."),
    ]:
        with pytest.raises(EditRefused) as caught:
            edit(document, cell_id, "x", "code", mode)
        assert str(caught.value) == text
    assert CELL_ID_REQUIRED == "Cell ID must be specified when not inserting a new cell."
    assert json.dumps(document) == before


def test_converting_a_cell_adds_and_removes_its_type_keys() -> None:
    """F4: Claude Code leaves ``outputs`` on a cell turned to markdown (invalid nbformat)."""
    document = parse(written(sample()))
    edit(document, "load", "# md", "markdown")
    assert document["cells"][1] == {"cell_type": "markdown", "id": "load", "metadata": {}, "source": ["# md"]}
    edit(document, "intro", "x = 1", "code")
    assert list(document["cells"][0]) == ["cell_type", "execution_count", "id", "metadata", "outputs", "source"]
    nbformat.validate(document)
    unsorted = doc({"source": "s", "cell_type": "markdown", "metadata": {}})
    edit(unsorted, "cell-0", "c", "code")
    assert list(unsorted["cells"][0]) == ["source", "cell_type", "metadata", "execution_count", "outputs"]
    same = doc({"cell_type": "code", "source": "s", "outputs": [{"output_type": "stream"}], "execution_count": 3,
                "metadata": {}})
    edit(same, "cell-0", "t", "code")
    assert same["cells"][0]["outputs"] == [] and same["cells"][0]["execution_count"] is None


def test_a_markdown_cell_with_attachments_is_not_made_code() -> None:
    document = doc({"cell_type": "markdown", "id": "m", "metadata": {}, "source": "![x](attachment:x.png)",
                    "attachments": {"x.png": {"image/png": "AAAA"}}})
    before = json.dumps(document)
    with pytest.raises(EditRefused, match="^Cell m has attachments, which a code cell cannot hold; it was not "
                                          "changed to a code cell.$"):
        edit(document, "m", "x", "code")
    assert json.dumps(document) == before
    empty = doc({"cell_type": "markdown", "id": "m", "metadata": {}, "source": "", "attachments": {}})
    edit(empty, "m", "x", "code")
    assert "attachments" not in empty["cells"][0]


def test_dump_keeps_the_files_layout() -> None:
    text = written(sample())
    assert dump(parse(text), text) == text
    assert dump(parse(text.rstrip("\n")), text.rstrip("\n")) == text.rstrip("\n")
    two = json.dumps(parse(text), indent=2)
    assert dump(parse(two), two) == two
    tabs = json.dumps(parse(text), indent="\t") + "\n"
    assert dump(parse(tabs), tabs) == tabs
    compact = json.dumps(parse(text), separators=(",", ":"))
    assert dump(parse(compact), compact) == compact
    spaced = json.dumps(parse(text))  # one line, default separators: written compact
    assert dump(parse(spaced), spaced) == compact
    bare = '{"cells": [],\n"x": 1}'
    assert dump(parse(bare), bare) == '{\n "cells": [],\n "x": 1\n}'
    bom = "\ufeff" + text
    assert dump(parse(text), bom) == text


def test_dump_escapes_as_the_file_did() -> None:
    document = doc({"cell_type": "markdown", "source": "é"})
    raw = json.dumps(document, indent=1, ensure_ascii=False)
    escaped = json.dumps(document, indent=1)
    assert dump(parse(raw), raw) == raw and "é" in raw
    assert dump(parse(escaped), escaped) == escaped and "\\u00e9" in escaped
    plain = '{\n "cells": [\n  {\n   "source": "\\u001b \\\\u00e9"\n  }\n ]\n}'  # no escape of U+007F on
    assert dump(parse(plain), plain) == plain
    document["cells"][0]["source"] = "\x7f"
    assert "\x7f" in dump(document, plain) and "\\u007f" in dump(document, escaped)
    lone = '{\n "cells": [\n  {\n   "source": "\\ud800 é"\n  }\n ]\n}'
    out = dump(parse(lone), lone)
    assert out == '{\n "cells": [\n  {\n   "source": "\\ud800 \\u00e9"\n  }\n ]\n}'
    out.encode("utf-8")


_sources = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)


@st.composite
def notebooks(draw: st.DrawFn) -> object:
    cells = []
    for index in range(draw(st.integers(1, 5))):
        source = draw(_sources)
        if draw(st.booleans()):
            cells.append(new_markdown_cell(source, id=f"m{index}"))
        else:
            outputs = [new_output("stream", name="stdout", text=draw(_sources))] if draw(st.booleans()) else []
            cells.append(new_code_cell(source, id=f"c{index}", execution_count=draw(st.none() | st.integers(1, 99)),
                                       outputs=outputs))
    return new_notebook(cells=cells, metadata={"title": draw(_sources)})


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nb=notebooks(), source=_sources, pick=st.integers(0, 10), mode=st.sampled_from(["replace", "insert", "delete"]),
       kind=st.sampled_from([None, "code", "markdown"]))
def test_an_edit_writes_what_jupyter_would_write(nb: object, source: str, pick: int, mode: str, kind: str | None) -> None:
    """For a notebook as Jupyter saves it, the edited text is byte for byte what nbformat writes
    for the edited notebook: only the edited cell's lines differ from the file (F5), and the
    result is valid nbformat."""
    text = written(nb)
    document = parse(text)
    assert dump(document, text) == text
    cells = document["cells"]
    name = cells[pick % len(cells)]["id"]
    if mode == "insert" and kind is None:
        kind = "code"
    edit(document, name, source, kind, mode)
    out = dump(document, text)
    assert out == nbformat.writes(nbformat.from_dict(document)) + "\n"
    nbformat.validate(nbformat.reads(out, as_version=nbformat.NO_CONVERT))
    assert parse(out) == document
