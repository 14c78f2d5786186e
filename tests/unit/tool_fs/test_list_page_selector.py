"""``list_render.PageSelector`` (L5): the page of a listing whose children arrive in batches in
any order equals the page of the whole listing ordered (``page_of(order_entries(...))``), while
at most twice the entries up to the page (plus one batch) are held. Pure."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from dsh_fs.tool_fs.list_render import ListedEntry, PageSelector, order_entries, page_of

KINDS = st.sampled_from(["file", "directory", "other"])
NAMES = st.text(st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)), min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(NAMES, KINDS, st.none() | st.integers(0, 99)), max_size=60, unique_by=lambda t: t[0]),
       st.integers(1, 70), st.integers(1, 12), st.integers(1, 9), st.randoms())
def test_the_page_is_the_page_of_the_whole_ordered_listing(children, offset, size, batch, rnd):
    entries = [ListedEntry(name=n, type=k, size=s if k == "file" else None) for n, k, s in children]
    rnd.shuffle(entries)
    selector = PageSelector(offset, size)
    held = 0
    for start in range(0, len(entries), batch):
        selector.add(entries[start : start + batch])
        held = max(held, len(selector._kept))
    assert held <= 2 * (offset - 1 + size) + batch
    assert selector.total == len(entries)
    assert selector.page("/w") == page_of("/w", order_entries(entries), offset, size)


def test_a_first_page_of_a_huge_directory_holds_only_a_few_pages():
    selector = PageSelector(1, 200)
    for start in range(0, 200_000, 512):
        selector.add(ListedEntry(name=f"f{i:06d}", type="file", size=0) for i in range(start, min(start + 512, 200_000)))
        assert len(selector._kept) <= 2 * 200 + 512
    page = selector.page("/w")
    assert page.total_entries == 200_000 and page.entries[0].name == "f000000" and len(page.entries) == 200
