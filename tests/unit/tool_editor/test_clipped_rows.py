"""``view.ClippedRows`` (L5): the rows of a directory listing arriving in any order, of which only
those a clipped listing can show are kept, render exactly as ``render_listing`` of every row;
the rows held stay within the clip, whatever the tree's size. Pure."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from dsh_fs.tool_editor.view import ClippedRows, render_listing

PATHS = st.text(st.characters(blacklist_characters="\x00\n", blacklist_categories=("Cs",)), min_size=1, max_size=8)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("df?"), PATHS), max_size=50, unique_by=lambda t: t[1]),
       st.none() | st.integers(0, 200), st.booleans())
def test_the_kept_rows_render_as_every_row(rows, clip, utf16):
    rows = [(kind, "/w/" + path) for kind, path in rows]
    kept: ClippedRows[None] = ClippedRows("/w", clip, utf16_order=utf16)
    for kind, path in rows:
        kept.add(kind, path)
    assert kept.render() == render_listing("/w", rows, clip, utf16_order=utf16)


def test_a_huge_tree_holds_about_the_clip():
    kept: ClippedRows[int] = ClippedRows("/w", 16_000)
    for i in range(200_000, 0, -1):  # the worst order: each row sorts before the kept ones
        kept.add("f", f"/w/f{i:06d}", i)
        assert len(kept._rows) <= 16_000 // 12 + 2
    assert kept.render().startswith("Here're the files and directories up to 2 levels deep in /w")
    assert kept.kept("/w/f000001") and not kept.kept("/w/f199999")
    assert [p for p, _ in kept.payloads()][:2] == ["/w/f000001", "/w/f000002"]
