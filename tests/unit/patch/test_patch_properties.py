"""Hypothesis properties of the patch engine and the editor's insert
(docs/design/EDITING-FACES-DESIGN.md §2, §3.3):

* ``parse(format(p)) == p`` for the Codex envelope and for V4A operation diffs;
* a patch made from a random ``(before, after)`` pair turns ``before`` into ``after`` exactly,
  in both dialects, for LF and CRLF files;
* an update never changes a byte outside its hunks (D2), whatever the mix of line breaks;
* line edits agree with the plain list model, and the default-profile insert agrees with the
  reference's split/join on LF text.

Not covered here: named cases and error texts (test_patch_parser.py, test_patch_apply.py).
"""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dsh_fs.patch import AddFile, Chunk, DeleteFile, Patch, UpdateFile, apply_chunks, format_operation_diff
from dsh_fs.patch import format_patch, parse_operation, parse_patch
from dsh_fs.patch.apply import apply_line_edits
from dsh_fs.patch.parser import split_lines
from dsh_fs.testing.commits import update_chunks
from dsh_fs.tool_editor.insert import insert_text

CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r")
FEW = st.sampled_from(["a", "b", "  a", "a ", "}", "", "\t}", "x\u2014y", "say \u201chi\u201d"])
line_text = st.one_of(FEW, st.text(CHARS, max_size=6))
path = st.text("abz09_./-", max_size=8).map(lambda p: "p" + p)
anchor = st.one_of(st.just(""), st.text(CHARS, max_size=5).map(lambda a: "@" + a))
diff_line = st.tuples(st.sampled_from([" ", "-", "+"]), line_text)


@st.composite
def chunks(draw: st.DrawFn) -> tuple[Chunk, ...]:
    out = []
    for i in range(draw(st.integers(1, 3))):
        anchors = draw(st.lists(anchor, min_size=0 if i == 0 else 1, max_size=2))
        lines = draw(st.lists(diff_line, min_size=1, max_size=5))
        if not anchors and not "".join(lines[0]).strip():
            anchors = [""]  # blank lines before a first hunk without @@ are skipped (Codex)
        out.append(Chunk(anchors=tuple(anchors), lines=tuple(lines), end_of_file=draw(st.booleans())))
    return tuple(out)


def lines_text(lines: list[str], breaks: list[str], final: str) -> str:
    return "".join(line + brk for line, brk in zip(lines, breaks)) + final


@st.composite
def added_text(draw: st.DrawFn) -> str:
    lines = draw(st.lists(st.text(CHARS, max_size=5), max_size=4))
    breaks = draw(st.lists(st.sampled_from(["\n", "\r\n"]), min_size=len(lines), max_size=len(lines)))
    return lines_text(lines, breaks, "")


@st.composite
def patches(draw: st.DrawFn) -> Patch:
    ops = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["add", "delete", "update"]))
        if kind == "add":
            ops.append(AddFile(path=draw(path), text=draw(added_text())))
        elif kind == "delete":
            ops.append(DeleteFile(path=draw(path)))
        else:
            move = draw(st.one_of(st.none(), path))
            ops.append(UpdateFile(path=draw(path), move_to=move, chunks=draw(chunks())))
    return Patch(ops=tuple(ops))


@settings(max_examples=300)
@given(patches())
def test_codex_envelope_round_trips(patch: Patch) -> None:
    assert parse_patch(format_patch(patch)) == patch


@settings(max_examples=300)
@given(st.one_of(st.text(st.characters(blacklist_categories=("Cs",)), max_size=20), added_text()), chunks())
def test_v4a_operation_diffs_round_trip(text: str, hunks: tuple[Chunk, ...]) -> None:
    add = AddFile(path="p", text=text)
    assert parse_operation("create_file", "p", format_operation_diff(add)) == add
    update = UpdateFile(path="p", chunks=hunks, dialect="v4a")
    assert parse_operation("update_file", "p", format_operation_diff(update)) == update


texts = st.builds(
    lambda lines, final: "\n".join(lines) + ("\n" if final and lines else ""),
    st.lists(st.one_of(FEW, st.text(CHARS, max_size=4)), max_size=12),
    st.booleans(),
)


@settings(max_examples=300)
@given(texts, texts, st.booleans())
def test_a_patch_made_from_two_texts_turns_one_into_the_other(before: str, after: str, crlf: bool) -> None:
    if crlf:
        assume("\n" in before or "\n" not in after)  # new line breaks take the file's dominant style
        before, after = before.replace("\n", "\r\n"), after.replace("\n", "\r\n")
    hunks = update_chunks(before, after)
    envelope = format_patch(Patch(ops=(UpdateFile(path="f", chunks=hunks),)))
    (op,) = parse_patch(envelope).ops
    assert apply_chunks(before, op.chunks, dialect="codex", path="f") == after  # type: ignore[union-attr]
    diff = format_operation_diff(UpdateFile(path="f", chunks=hunks, dialect="v4a"))
    op = parse_operation("update_file", "f", diff)
    assert apply_chunks(before, op.chunks, dialect="v4a", path="f") == after  # type: ignore[union-attr]


@settings(max_examples=300)
@given(
    st.lists(st.tuples(st.text(CHARS, max_size=4), st.sampled_from(["\n", "\r\n"])), min_size=1, max_size=8),
    st.sampled_from(["", "\n", "\r\n"]),
    st.data(),
)
def test_an_update_changes_no_byte_outside_its_hunk(rows: list[tuple[str, str]], final: str, data: st.DataObject) -> None:
    lines = [f"{i}:{text}" for i, (text, _) in enumerate(rows)]  # unique lines: no ambiguity
    breaks = [brk for _, brk in rows]
    breaks[-1] = final
    raw = lines_text(lines, breaks, "")
    k = data.draw(st.integers(0, len(lines) - 1))
    new = data.draw(st.lists(st.text(CHARS, max_size=4), max_size=3))
    body = ([(" ", lines[k - 1])] if k else []) + [("-", lines[k])] + [("+", n) for n in new]
    if k + 1 < len(lines):
        body.append((" ", lines[k + 1]))
    result = apply_chunks(raw, (Chunk(lines=tuple(body)),), dialect="codex", path="f")  # type: ignore[arg-type]
    start = sum(len(line) + len(brk) for line, brk in zip(lines[:k], breaks[:k]))
    crlf = raw.count("\r\n") > raw.count("\n") - raw.count("\r\n")
    if new:
        middle = ("\r\n" if crlf else "\n").join(new)
        assert result == raw[:start] + middle + raw[start + len(lines[k]) :]
    elif breaks[k]:  # the line goes with its own line break
        assert result == raw[:start] + raw[start + len(lines[k]) + len(breaks[k]) :]
    else:  # a last line without one goes with the line break before it
        assert result == (raw[: start - len(breaks[k - 1])] if k else "")


@settings(max_examples=300)
@given(st.lists(st.text(CHARS, max_size=3), min_size=1, max_size=8), st.data())
def test_line_edits_agree_with_the_list_model(lines: list[str], data: st.DataObject) -> None:
    edits = []
    at = 0
    while at <= len(lines) and data.draw(st.booleans()):
        start = data.draw(st.integers(at, len(lines)))
        removed = data.draw(st.integers(0, len(lines) - start))
        inserted = data.draw(st.lists(st.text(CHARS, max_size=3), max_size=2))
        edits.append((start, removed, inserted))
        at = start + removed + 1
    model = list(lines)
    for start, removed, inserted in reversed(edits):
        model[start : start + removed] = inserted
    lf = "\n".join(lines)
    assert apply_line_edits(lf, edits) == "\n".join(model)
    if len(lines) > 1:  # a CRLF file: every line break, old or new, is CRLF
        assert apply_line_edits("\r\n".join(lines), edits) == "\r\n".join(model)


@settings(max_examples=200)
@given(texts, st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"), max_size=8), st.data())
def test_default_insert_agrees_with_the_reference_on_lf_text(text: str, new: str, data: st.DataObject) -> None:
    line = data.draw(st.integers(0, text.count("\n") + 1))
    reference = insert_text(text, line, new, whole_lines=False, keep_bytes=False)
    assert insert_text(text, line, new, whole_lines=False, keep_bytes=True) == reference


@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=30))
def test_split_lines_keeps_every_character(text: str) -> None:
    assert "".join(content + brk for content, brk in split_lines(text)) == text
