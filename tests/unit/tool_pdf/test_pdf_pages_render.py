"""``tool_pdf.pages`` and ``tool_pdf.render``: Claude Code's ``pages`` syntax and texts, and the
envelope (page markers, byte cap, footers) — pure. Not here: the worker and the tool
(tests/integration/tool_pdf/test_read_pdf.py)."""

from __future__ import annotations

import pytest

from dsh_fs.tool_pdf.pages import MAX_PAGES_PER_READ, PageRange, invalid_pages, parse_pages, too_many_pages
from dsh_fs.tool_pdf.render import Page, cut_utf8, render


@pytest.mark.parametrize(("pages", "expected"), [
    ("3", PageRange(3, 3)), ("1-5", PageRange(1, 5)), ("10-20", PageRange(10, 20)), ("10-", PageRange(10, None)),
    (" 7 ", PageRange(7, 7)), ("2 - 4", PageRange(2, 4)), ("5-5", PageRange(5, 5)), ("007", PageRange(7, 7)),
    ("", None), ("  ", None), ("0", None), ("0-3", None), ("5-4", None), ("-3", None), ("a", None),
    ("3abc", None), ("1.5", None), ("1,3", None), ("1--2", None), ("١", None), ("1-2-3", None),
])
def test_parse_pages_follows_claude_codes_syntax(pages: str, expected: PageRange | None) -> None:
    assert parse_pages(pages) == expected


def test_a_range_knows_its_size() -> None:
    assert PageRange(3, 3).size() == 1 and PageRange(1, 20).size() == 20 and PageRange(4, None).size() is None


def test_claude_codes_texts() -> None:
    assert MAX_PAGES_PER_READ == 20
    assert invalid_pages("x") == 'Invalid pages parameter: "x". Use formats like "1-5", "3", or "10-20". Pages are 1-indexed.'
    assert too_many_pages("1-30") == 'Page range "1-30" exceeds maximum of 20 pages per request. Please use a smaller range.'


def test_cut_utf8_keeps_whole_characters() -> None:
    assert cut_utf8("abc", 3) == "abc" and cut_utf8("abc", 2) == "ab"
    assert cut_utf8("aé", 2) == "a" and cut_utf8("aé", 3) == "aé"
    assert cut_utf8("日本", 5) == "日"


def envelope(body: str, footer: str) -> str:
    return f"<path>/w/d.pdf</path>\n<type>pdf</type>\n<content>\n{body}\n\n{footer}\n</content>"


def test_pages_markers_and_the_end_of_the_file() -> None:
    pages = [Page(1, "one\ntwo"), Page(2, "", 0), Page(3, "", 4)]
    shown = render("/w/d.pdf", 3, pages, max_bytes=1000, images={}, images_enabled=False)
    assert shown.shown == (1, 2, 3)
    assert shown.text == envelope(
        "--- page 1 of 3 ---\none\ntwo\n\n--- page 2 of 3 ---\n[blank page]\n\n--- page 3 of 3 ---\n"
        "[no text layer (scanned or image-only page): image reads are not enabled in this deployment]",
        "(End of file - total 3 pages)")


def test_textless_pages_say_what_became_of_their_image() -> None:
    pages = [Page(4, "   ", 2), Page(5, "", 1), Page(6, "", 1)]
    shown = render("/w/d.pdf", 9, pages, max_bytes=1000, images={4: None, 5: "too big"}, images_enabled=True)
    assert shown.text == envelope(
        "--- page 4 of 9 ---\n[no text layer: the page follows as an image]\n\n"
        "--- page 5 of 9 ---\n[no text layer; its image is not shown: too big]\n\n"
        "--- page 6 of 9 ---\n[no text layer; its image could not be made small enough to send]",
        '(Showing pages 4-6 of 9. Use pages="7-9" to continue.)')


def test_the_footer_names_the_next_range() -> None:
    one = render("/w/d.pdf", 200, [Page(50, "x")], max_bytes=100, images={}, images_enabled=False)
    assert one.text.endswith('\n(Showing page 50 of 200. Use pages="51-70" to continue.)\n</content>')
    near = render("/w/d.pdf", 52, [Page(50, "x")], max_bytes=100, images={}, images_enabled=False)
    assert near.text.endswith('(Showing page 50 of 52. Use pages="51-52" to continue.)\n</content>')
    last = render("/w/d.pdf", 51, [Page(50, "x")], max_bytes=100, images={}, images_enabled=False)
    assert last.text.endswith('(Showing page 50 of 51. Use pages="51" to continue.)\n</content>')


def test_the_byte_cap_stops_before_a_page_that_does_not_fit() -> None:
    pages = [Page(1, "a" * 40), Page(2, "b" * 40), Page(3, "c" * 40)]
    shown = render("/w/d.pdf", 10, pages, max_bytes=80, images={}, images_enabled=False)
    assert shown.shown == (1, 2)
    assert shown.text == envelope(f"--- page 1 of 10 ---\n{'a' * 40}\n\n--- page 2 of 10 ---\n{'b' * 40}",
                                  '(Output capped. Showing pages 1-2 of 10. Use pages="3-22" to continue.)'
                                  .replace("3-22", "3-10"))
    exact = render("/w/d.pdf", 3, pages, max_bytes=120, images={}, images_enabled=False)
    assert exact.shown == (1, 2, 3) and exact.text.endswith("(End of file - total 3 pages)\n</content>")


def test_a_first_page_over_the_cap_is_cut_and_says_so() -> None:
    shown = render("/w/d.pdf", 2, [Page(1, "é" * 10), Page(2, "x")], max_bytes=7, images={}, images_enabled=False)
    assert shown.shown == (1,)
    assert shown.text == envelope(
        "--- page 1 of 2 ---\nééé\n[… the rest of this page (14 bytes) is not shown: it is over the 7-byte limit of "
        "one read]", '(Output capped. Showing page 1 of 2. Use pages="2" to continue.)')
    alone = render("/w/d.pdf", 1, [Page(1, "x" * 20)], max_bytes=10, images={}, images_enabled=False)
    assert alone.text.endswith("one read]\n\n(End of file - total 1 pages)\n</content>")
