"""``tool_fs_search.search_core.SpillSink``: the complete result goes to a spill writer only once
it outgrows the page (§6.1: an uncapped result never makes a file), and a writer that cannot
be opened, written or committed never fails the search (the result is then unsaved)."""

from __future__ import annotations

from typing import Any

import pytest

from dsh_fs.spill.store import SpillWriter
from dsh_fs.tool_fs_search.search_core import SpillSink

pytestmark = pytest.mark.anyio


class Writer(SpillWriter):
    def __init__(self, *, fail_write: bool = False, fail_commit: bool = False) -> None:
        self.text = ""
        self.head: str | None = None
        self.discarded = False
        self.fail_write, self.fail_commit = fail_write, fail_commit

    def write(self, text: str) -> None:
        if self.fail_write:
            raise OSError("disk full")
        self.text += text

    async def commit(self, *, head: str = "") -> Any:
        if self.fail_commit:
            raise OSError("disk full")
        self.head = head
        return "ref"

    async def discard(self) -> None:
        self.discarded = True

    def size(self) -> int:
        return len(self.text)


def _sink(limit: int, writer: Writer | None, opened: list[int]) -> SpillSink:
    def opener() -> Writer | None:
        opened.append(1)
        return writer

    return SpillSink(limit, opener)


async def test_a_result_within_the_page_opens_no_writer() -> None:
    opened: list[int] = []
    sink = _sink(2, Writer(), opened)
    sink("a")
    sink("\nb")
    assert opened == [] and await sink.finish(keep=True) is None


async def test_past_the_page_everything_is_written_once_and_committed() -> None:
    opened: list[int] = []
    writer = Writer()
    sink = _sink(2, writer, opened)
    for piece in ("a", "\nb", "\nc", "\nd"):
        sink(piece)
    assert opened == [1] and writer.text == "a\nb\nc\nd"
    assert await sink.finish(keep=True, head="H") == "ref" and writer.head == "H"
    assert await sink.finish(keep=True) is None  # finished once


async def test_a_dropped_result_is_discarded() -> None:
    writer = Writer()
    sink = _sink(1, writer, [])
    sink("a")
    sink("b")
    assert await sink.finish(keep=False) is None and writer.discarded and writer.head is None


@pytest.mark.parametrize("failure", ["open", "none", "write", "later write", "commit"])
async def test_a_writer_that_fails_leaves_the_result_unsaved(failure: str) -> None:
    writer = Writer(fail_write=failure == "write", fail_commit=failure == "commit")

    def opener() -> Writer | None:
        if failure == "open":
            raise OSError("no room")
        return None if failure == "none" else writer

    sink = SpillSink(1, opener)
    sink("a")
    sink("b")
    if failure == "later write":
        writer.fail_write = True
    sink("c")
    writer.fail_write = False
    sink("d")  # after a failure nothing more is written
    assert sink.failed == (failure != "commit")
    assert await sink.finish(keep=True) is None
    if failure in ("write", "later write"):
        assert writer.discarded and writer.text == ("" if failure == "write" else "ab")
