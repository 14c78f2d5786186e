"""``notebook.document`` and ``notebook.view``: parsing, naming cells, and the cell view ``read``
shows (DEVIATIONS F1), on notebooks written by ``nbformat`` and on hand-made hostile ones.
Not here: windowing the view and the envelope (tests/integration/tool_fs/test_notebook_read.py)."""

from __future__ import annotations

import base64
import json

import pytest
from notebookkit import png, sample, written

from dsh_fs.notebook import NotNotebook, is_notebook_path, parse, render
from dsh_fs.notebook.document import Found, cell_name, find_cell, has_cell_ids, language, source_text
from dsh_fs.notebook.view import ViewLimits


def nb(*cells: dict, **top: object) -> dict:
    return {"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5, **top}


def code(source: object = "", *outputs: object, count: object = None, **more: object) -> dict:
    return {"cell_type": "code", "source": source, "outputs": list(outputs), "execution_count": count, **more}


def lines(document: dict, **limits: int) -> list[str]:
    return render(document, ViewLimits(**limits) if limits else None).lines[1:]


def test_the_sample_notebook_as_read_shows_it() -> None:
    view = render(parse(written(sample())))
    assert view.cells == 4
    assert view.lines == [
        '<notebook language="python" cells="4">',
        '<cell id="intro" type="markdown">', "# Sales", "Quarterly numbers.", "</cell>",
        '<cell id="load" type="code" execution_count="1">', "import math", "print(math.pi)", "math.e", "</cell>",
        '<output type="stream" name="stdout">', "3.141592653589793", "</output>",
        '<output type="execute_result">', "2.718281828459045", "</output>",
        '<cell id="plot" type="code" execution_count="2">', "plot()", "</cell>",
        '<output type="display_data">', "<Figure size 640x480 with 1 Axes>", "[image/png image, 64x48 px, 139 bytes]",
        "</output>",
        '<cell id="oops" type="code" execution_count="3">', "1/0", "</cell>",
        '<output type="error">', "ZeroDivisionError: division by zero",
        "---------------------------------------------------------------------------",
        "ZeroDivisionError                         Traceback (most recent call last)",
        "Cell In[4], line 1", "----> 1 1/0", "ZeroDivisionError: division by zero", "</output>",
    ]
    (image,) = view.images
    assert (image.line, image.cell, image.media_type, image.data) == (22, "plot", "image/png", png())
    assert view.text == "\n".join(view.lines)


def test_parse_refuses_what_is_not_a_notebook() -> None:
    for text, reason, detail in [
        ("{", "json", None), ("[1]", "shape", "the top level is not a JSON object"),
        ('{"cells": 3}', "shape", 'there is no "cells" array'), ("{}", "shape", 'there is no "cells" array'),
        ('{"cells": [1]}', "shape", "cell 0 is not a JSON object"),
        ('{"cells": [{}, "x"]}', "shape", "cell 1 is not a JSON object"),
        ("[" * 100_000, "json", "nested too deeply"),
    ]:
        with pytest.raises(NotNotebook) as caught:
            parse(text)
        assert caught.value.reason == reason
        if detail is not None:
            assert caught.value.detail == detail == str(caught.value)
    assert parse('{"cells": []}') == {"cells": []}


def test_cells_are_named_by_id_else_by_index() -> None:
    assert cell_name({"id": "abc"}, 3) == "abc"
    assert cell_name({}, 3) == cell_name({"id": ""}, 3) == cell_name({"id": 7}, 3) == "cell-3"
    cells = [{"id": "a"}, {"id": "cell-0"}, {}]
    assert find_cell(cells, "a") == Found(0, True)
    assert find_cell(cells, "cell-0") == Found(1, True)  # an id wins over an index name
    assert find_cell(cells, "cell-2") == Found(2, True)
    assert find_cell(cells, "cell-3") == Found(3, False)
    assert find_cell(cells, "b") is None
    assert find_cell(cells, "cell-x") is None and find_cell(cells, "cell--1") is None
    assert find_cell(cells, "xcell-1") is None and find_cell(cells, "cell-1x") is None


def test_sources_ids_and_language_read_leniently() -> None:
    assert source_text({"source": ["a\n", "b"]}) == "a\nb"
    assert source_text({"source": ["a", 3, "b"]}) == "ab"
    assert source_text({"source": "s"}) == "s"
    assert source_text({}) == source_text({"source": 5}) == ""
    assert has_cell_ids({"nbformat": 4, "nbformat_minor": 5})
    assert has_cell_ids({"nbformat": 5, "nbformat_minor": 0})
    assert not has_cell_ids({"nbformat": 4, "nbformat_minor": 4})
    assert not has_cell_ids({"nbformat": 3, "nbformat_minor": 9})
    assert not has_cell_ids({"nbformat": 4}) and not has_cell_ids({})
    assert not has_cell_ids({"nbformat": True, "nbformat_minor": 5})
    assert not has_cell_ids({"nbformat": 4, "nbformat_minor": True})
    assert not has_cell_ids({"nbformat": "4", "nbformat_minor": 5})
    assert language({"metadata": {"language_info": {"name": "julia"}, "kernelspec": {"language": "r"}}}) == "julia"
    assert language({"metadata": {"language_info": {"name": ""}, "kernelspec": {"language": "r"}}}) == "r"
    assert language({"metadata": {"kernelspec": {"language": 3}}}) == "python"
    assert language({"metadata": {"language_info": "x", "kernelspec": "y"}}) == "python"
    assert language({"metadata": []}) == language({}) == "python"


def test_is_notebook_path() -> None:
    assert is_notebook_path("/w/a.ipynb") and is_notebook_path("A.IPYNB")
    assert not is_notebook_path("/w/.ipynb") and not is_notebook_path("/w/a.ipynb.txt")
    assert not is_notebook_path("/w/a.json")


def test_cell_tags_quote_their_values() -> None:
    view = lines(nb({"cell_type": "raw", "id": 'a"b\n', "source": "r"}, {"cell_type": 3, "source": ""},
                    code("x", count=True), code("y", count="2")))
    assert view == ['<cell id="a\\"b\\n" type="raw">', "r", "</cell>", '<cell id="cell-1" type="unknown">', "</cell>",
                    '<cell id="cell-2" type="code">', "x", "</cell>", '<cell id="cell-3" type="code">', "y", "</cell>"]
    assert render(nb(metadata={"language_info": {"name": 'ju"lia'}})).lines == ['<notebook language="ju\\"lia" cells="0">']


def test_sources_show_their_lines() -> None:
    assert lines(nb({"cell_type": "markdown", "source": "a\r\nb\rc\n\n"})) == [
        '<cell id="cell-0" type="markdown">', "a", "b", "c", "", "</cell>"]
    assert lines(nb({"cell_type": "markdown", "source": ""})) == ['<cell id="cell-0" type="markdown">', "</cell>"]


def test_outputs_of_markdown_cells_or_of_no_list_are_not_shown() -> None:
    stream = {"output_type": "stream", "name": "stdout", "text": "x"}
    assert lines(nb({"cell_type": "markdown", "source": "m", "outputs": [stream]})) == [
        '<cell id="cell-0" type="markdown">', "m", "</cell>"]
    assert lines(nb({"cell_type": "code", "source": "c", "outputs": "no"})) == [
        '<cell id="cell-0" type="code">', "c", "</cell>"]


def test_every_output_kind() -> None:
    outputs = [
        {"output_type": "stream", "name": "stderr", "text": ["warn\n", "more"]},
        {"output_type": "stream", "text": "no name"},
        {"output_type": "stream", "name": 5, "text": 5},
        {"output_type": "execute_result", "data": {"text/markdown": "**md**", "text/plain": "plain"}},
        {"output_type": "display_data", "data": {"application/json": {"a": [1, "é"]}}},
        {"output_type": "display_data", "data": {"text/markdown": ["# h\n", "p"]}},
        {"output_type": "display_data", "data": "not a bundle"},
        {"output_type": "error", "ename": "E", "evalue": "v", "traceback": ["t1", 5, "t2"]},
        {"output_type": "error", "ename": 1, "evalue": None, "traceback": "x"},
        {"output_type": "update_display_data"},
        {"no": "type"},
        "not an object",
    ]
    assert lines(nb(code("c", *outputs))) == [
        '<cell id="cell-0" type="code">', "c", "</cell>",
        '<output type="stream" name="stderr">', "warn", "more", "</output>",
        '<output type="stream" name="stdout">', "no name", "</output>",
        '<output type="stream" name="stdout">', "</output>",
        '<output type="execute_result">', "plain", "[not shown: text/markdown (6 characters)]", "</output>",
        '<output type="display_data">', '{"a": [1, "é"]}', "</output>",
        '<output type="display_data">', "# h", "p", "</output>",
        '<output type="display_data">', "</output>",
        '<output type="error">', "E: v", "t1", "t2", "</output>",
        '<output type="error">', ": ", "</output>",
        '<output type="update_display_data">', "</output>",
        '<output type="unknown">', "</output>",
    ]


def test_terminal_text_shows_what_a_terminal_shows() -> None:
    progress = "\x1b[32m 10%\x1b[0m\r 50%\r100%\ndone\r\nnext\n"
    assert lines(nb(code("", {"output_type": "stream", "name": "stdout", "text": progress})))[3:-1] == [
        "100%", "done", "next"]
    escapes = "\x1b(Bplain\x1b]x\x1b[1;31;40mred\x1b[K\x1bM!"
    assert lines(nb(code("", {"output_type": "stream", "name": "stdout", "text": escapes})))[3:-1] == ["plainxred!"]
    osc = "\x1b]0;title\x07a\x1b]8;;http://x\x1b\\b"
    assert lines(nb(code("", {"output_type": "stream", "name": "stdout", "text": osc})))[3:-1] == ["ab"]


def test_long_outputs_keep_their_head_and_tail() -> None:
    text = "".join(f"line {n}\n" for n in range(1, 101))
    shown = lines(nb(code("", {"output_type": "stream", "name": "stdout", "text": text})))[3:-1]
    assert shown == [*(f"line {n}" for n in range(1, 31)), "[… 60 more lines of this output not shown …]",
                     *(f"line {n}" for n in range(91, 101))]
    assert lines(nb(code("", {"output_type": "stream", "name": "stdout", "text": text})), output_lines=5,
                 output_tail=2)[3:-1] == ["line 1", "line 2", "line 3", "[… 95 more lines of this output not shown …]",
                                         "line 99", "line 100"]
    exactly = "".join(f"{n}\n" for n in range(40))
    assert len(lines(nb(code("", {"output_type": "stream", "name": "stdout", "text": exactly})))) == 3 + 40 + 1
    tail_only = lines(nb(code("", {"output_type": "stream", "name": "stdout", "text": "a\nb\nc\n"})),
                      output_lines=2, output_tail=5)
    assert tail_only[3:-1] == ["a", "[… 1 more lines of this output not shown …]", "c"]


def test_outputs_stop_at_the_character_cap() -> None:
    text = "\n".join(["x" * 10] * 5)
    out = lines(nb(code("", {"output_type": "stream", "name": "stdout", "text": text})), output_chars=33)[3:-1]
    assert out == ["x" * 10, "x" * 10, "x" * 10, "[… 22 more characters of this output not shown …]"]
    whole = lines(nb(code("", {"output_type": "stream", "name": "stdout", "text": text})), output_chars=55)[3:-1]
    assert whole == ["x" * 10] * 5
    edge = lines(nb(code("", {"output_type": "stream", "name": "stdout", "text": text})), output_chars=44)[3:-1]
    assert edge == ["x" * 10] * 4 + ["[… 11 more characters of this output not shown …]"]


def test_image_outputs_are_one_line_each_and_carry_their_bytes() -> None:
    data = png(3, 2)
    encoded = base64.b64encode(data).decode("ascii")
    wrapped = [encoded[:10] + "\n", encoded[10:]]
    bundle = {"image/png": wrapped, "image/jpeg": "bm90IGEganBlZw==", "image/svg+xml": "<svg/>",
              "text/html": ["<b>", "x</b>"], "image/gif": "%%%"}
    view = render(nb(code("", {"output_type": "display_data", "data": bundle}, id="c1")))
    assert view.lines[4:-1] == [
        f"[image/png image, 3x2 px, {len(data)} bytes]",
        "[image/jpeg image, 10 bytes]",
        "[image/gif image: its data is not valid base64]",
        "[not shown: image/svg+xml (6 characters), text/html (8 characters)]",
    ]
    assert [(i.line, i.cell, i.media_type, i.data) for i in view.images] == [
        (5, "c1", "image/png", data), (6, "c1", "image/jpeg", b"not a jpeg")]


def test_a_notebook_of_many_cells() -> None:
    document = nb(*[code(f"x{n}", count=n) for n in range(300)])
    view = render(document)
    assert view.cells == 300 and len(view.lines) == 1 + 300 * 3
    assert view.lines[-3:] == ['<cell id="cell-299" type="code" execution_count="299">', "x299", "</cell>"]
    assert json.loads(view.lines[0].split("cells=")[1].rstrip(">")) == "300"


def test_the_caps_count_each_line_and_its_break() -> None:
    text = "a\nb\nc\n"
    assert lines(nb(code("", {"output_type": "stream", "name": "stdout", "text": text})), output_chars=4)[3:-1] == [
        "a", "b", "[… 2 more characters of this output not shown …]"]
    long = "y" * 8000 + "\nz\n"
    default = lines(nb(code("", {"output_type": "stream", "name": "stdout", "text": long})))[3:-1]
    assert default == ["[… 8003 more characters of this output not shown …]"]


def test_attribute_values_keep_their_characters() -> None:
    view = render(nb({"cell_type": "markdown", "id": "café", "source": ""}, metadata={"language_info": {"name": "ålang"}}))
    assert view.lines[:2] == ['<notebook language="ålang" cells="1">', '<cell id="café" type="markdown">']
    assert has_cell_ids({"nbformat": 4, "nbformat_minor": 4}) is False and has_cell_ids({}) is False
