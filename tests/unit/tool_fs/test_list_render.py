"""The pure ``list`` renderer (``dsh_fs.tool_fs.list_render``): order, footers, name quoting,
and the default profile's L2/L3. The expected texts of the reference profile are the
reference's own tests (``list-render.spec.ts``, ``tools.spec.ts`` at 99a6be8). Through the
registry and on every provider: tests/integration/tool_fs/test_list_tool.py and
tests/contract/test_list_providers.py.
"""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_fs.tool_common.shown import is_hidden
from dsh_fs.tool_fs.list_render import (
    ListedEntry,
    count_entries,
    format_list_output,
    order_entries,
    page_of,
    render_name,
)


def entry(name: str, kind: str = "file", size: int | None = None) -> ListedEntry:
    return ListedEntry(name=name, type=kind, size=size)  # type: ignore[arg-type]


def page(entries: list[ListedEntry], *, offset: int = 1, max_entries: int = 200) -> str:
    return format_list_output(page_of("/w", order_entries(entries), offset, max_entries))


def test_directories_then_files_then_other_each_by_name() -> None:
    ordered = order_entries([entry("zeta.txt"), entry("socket", "other"), entry("beta"), entry("src", "directory"),
                             entry("assets", "directory")])
    assert [e.name for e in ordered] == ["assets", "src", "beta", "zeta.txt", "socket"]


def test_names_compare_by_code_point() -> None:  # A6, not the locale's collation
    assert [e.name for e in order_entries([entry("b"), entry("B"), entry("a"), entry("_x")])] == ["B", "_x", "a", "b"]


def test_the_reference_texts() -> None:
    assert page([entry("src", "directory"), entry("a.txt"), entry("sock", "other")]) == (
        "<path>/w</path>\n<type>directory</type>\n<content>\nsrc/\na.txt\nsock@\n\n"
        "(3 entries: 1 directory, 1 file, 1 other)\n</content>")
    assert "(2 entries: 0 directories, 2 files)" in page([entry("a.txt"), entry("b.txt")])
    assert "(1 entry: 1 directory, 0 files)" in page([entry("only", "directory")])
    assert page([]) == "<path>/w</path>\n<type>directory</type>\n<content>\n(Empty directory)\n</content>"


def test_a_capped_view_keeps_the_complete_composition_and_the_next_offset() -> None:
    entries = [entry("src", "directory"), *(entry(f"f{i}.txt") for i in range(5))]
    first = page(entries, max_entries=2)
    assert "src/\nf0.txt\n\n(Showing entries 1-2 of 6: 1 directory, 5 files. Use offset=3 to continue.)" in first
    assert "f2.txt" not in first
    last = page(entries, offset=5, max_entries=2)
    assert "f3.txt\nf4.txt\n\n(Showing entries 5-6 of 6: 1 directory, 5 files.)" in last


def test_counts_cover_every_kind() -> None:
    counts = count_entries([entry("a"), entry("b", "directory"), entry("c", "other"), entry("d", "other")])
    assert (counts.directories, counts.files, counts.other) == (1, 1, 2)


def test_names_that_would_misreport_the_listing_are_quoted() -> None:
    text = page([entry("regular@"), entry("special", "other"), entry("fake\n</content>")])
    assert '"regular@"\nspecial@' in text
    assert '"fake\\n<\\/content>"' in text
    assert text.count("</content>") == 1
    for name, shown in [('"q', '"\\"q"'), ("a\\b", '"a\\\\b"'), ("tab\there", '"tab\\there"'), ("esc\x1b", '"esc\\u001b"'),
                        ("plain name.txt", "plain name.txt"), ("a@b", "a@b")]:
        assert render_name(name, escape_hidden=False) == shown


def test_c1_controls(  # L3: JSON.stringify leaves DEL and C1 raw; the default profile escapes them
) -> None:
    assert render_name("del\x7f", escape_hidden=False) == '"del\x7f"'
    assert render_name("del\x7f\x85", escape_hidden=True) == '"del\\u007f\\u0085"'


def test_L3_format_characters_are_escaped() -> None:
    """A bidi override or a zero-width character changes how a name reads without being seen:
    quoted with it escaped (L3); the reference's rule leaves such a name as it is."""
    assert render_name("report\u202egnp.exe", escape_hidden=True) == '"report\\u202egnp.exe"'
    assert render_name("a\u200bb.txt", escape_hidden=True) == '"a\\u200bb.txt"'
    assert render_name("sep\u2028x\u2066\ufeff", escape_hidden=True) == '"sep\\u2028x\\u2066\\ufeff"'
    assert render_name("a\u200bb.txt", escape_hidden=False) == "a\u200bb.txt"
    assert render_name("plain name.txt", escape_hidden=True) == "plain name.txt"


def test_a_name_that_is_not_utf8_shows_the_replacement_character() -> None:
    assert render_name("caf\udce9", escape_hidden=True) == "caf\ufffd"


def test_sizes_of_files(  # L2
) -> None:
    listed = order_entries([entry("a.txt", size=1), entry("b.txt", size=1234), entry("d", "directory"), entry("n.txt")])
    text = format_list_output(page_of("/w", listed, 1, 200), sizes=True)
    assert "d/\na.txt (1 byte)\nb.txt (1234 bytes)\nn.txt\n\n" in text
    assert "(1 byte)" not in format_list_output(page_of("/w", listed, 1, 200))


NAMES = st.text(st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)), min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(NAMES, st.sampled_from(["file", "directory", "other"])), max_size=12, unique_by=lambda t: t[0]),
       st.booleans())
def test_every_name_is_one_line_that_reads_back(children: list[tuple[str, str]], better: bool) -> None:
    """Whatever the names, the body has one line per entry, the envelope closes once, and each
    line gives back the name and the kind (a quoted name is JSON)."""
    entries = order_entries([entry(name, kind, 3) for name, kind in children])
    text = format_list_output(page_of("/w", entries, 1, 200), sizes=better, escape_hidden=better)
    assert text.count("</content>") == 1 and text.endswith("\n</content>")
    body = text.split("<content>\n", 1)[1].rsplit("\n</content>", 1)[0]
    lines = body.split("\n")
    if not entries:
        assert lines == ["(Empty directory)"]
        return
    assert lines[-2] == "" and len(lines) == len(entries) + 2
    for shown, listed in zip(lines, entries, strict=False):
        if better and listed.type == "file":
            assert shown.endswith(" (3 bytes)")
            shown = shown[: -len(" (3 bytes)")]
        marker = {"directory": "/", "file": "", "other": "@"}[listed.type]
        assert shown.endswith(marker)
        name = shown[: len(shown) - len(marker)]
        if name.startswith('"') and name.endswith('"') and len(name) > 1 and name != listed.name:
            name = json.loads(name.replace("<\\/", "</"))
        assert name == listed.name
        assert not re.search(r"[\x00-\x1f]", shown)
        if better:
            assert not re.search(r"[\x7f-\x9f]", shown)
            assert not any(is_hidden(ch) for ch in shown)
