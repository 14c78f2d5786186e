"""``tool_fs.seen.SeenTexts``: the texts each owner last saw whole (DEVIATIONS D30): per owner
and file, dropped on another version observed, bounded in files and characters, owners held
weakly."""

from __future__ import annotations

import gc
from types import SimpleNamespace

import pytest

from dsh_fs.tool_fs.seen import FILE_CHARS, FILES, OWNER_CHARS, SeenTexts


class Owner:
    pass


def test_the_defaults() -> None:
    assert (FILES, FILE_CHARS, OWNER_CHARS) == (16, 256 * 1024, 1024 * 1024)
    store = SeenTexts()
    assert (store.files, store.file_chars, store.chars) == (FILES, FILE_CHARS, OWNER_CHARS)
    assert SeenTexts(file_chars=10, chars=5).file_chars == 5


@pytest.mark.parametrize("bounds", [{"files": 0}, {"file_chars": 0}, {"chars": 0}])
def test_bounds_below_one_are_refused(bounds: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        SeenTexts(**bounds)
    SeenTexts(files=1, file_chars=1, chars=1)


def test_kept_per_owner_and_file() -> None:
    store, a, b = SeenTexts(), Owner(), Owner()
    store.remember(a, "/x", "v1", "one")
    assert store.get(a, "/x") == "one" and store.get(b, "/x") is None and store.get(a, "/y") is None
    store.remember(a, "/x", "v2", "two")
    assert store.get(a, "/x") == "two" and store.count(a) == (1, 3)
    store.remember(None, "/x", "v1", "one")
    assert store.get(None, "/x") is None and store.count(b) == (0, 0)


def test_another_version_observed_drops_the_text() -> None:
    store, a, b = SeenTexts(), Owner(), Owner()
    store.remember(a, "/x", "v1", "one")
    store.remember(b, "/x", "v1", "uno")
    store.observed(a, "/x", "v1")  # the same version: kept
    assert store.get(a, "/x") == "one"
    store.listener(SimpleNamespace(key="/x"), "v2", SimpleNamespace(session=a))
    assert store.get(a, "/x") is None and store.count(a) == (0, 0)
    assert store.get(b, "/x") == "uno"
    store.observed(b, "/x", None)  # an absence
    assert store.get(b, "/x") is None
    store.observed(None, "/x", "v3")
    store.observed(Owner(), "/x", "v3")
    store.listener(SimpleNamespace(key="/y"), "v1", SimpleNamespace())  # no session: nothing


def test_too_long_a_text_is_not_kept_and_drops_the_older_one() -> None:
    store, a = SeenTexts(file_chars=4), Owner()
    store.remember(a, "/x", "v1", "four")
    assert store.get(a, "/x") == "four"
    store.remember(a, "/x", "v2", "fives")
    assert store.get(a, "/x") is None and store.count(a) == (0, 0)


def test_bounded_in_files_least_recent_first() -> None:
    store, a = SeenTexts(files=2), Owner()
    store.remember(a, "/1", "v", "a")
    store.remember(a, "/2", "v", "b")
    store.remember(a, "/1", "w", "c")  # kept again: now the most recent
    store.remember(a, "/3", "v", "d")
    assert [store.get(a, k) for k in ("/1", "/2", "/3")] == ["c", None, "d"]
    assert store.count(a) == (2, 2)


def test_bounded_in_characters() -> None:
    store, a = SeenTexts(file_chars=5, chars=8), Owner()
    store.remember(a, "/1", "v", "aaaa")
    store.remember(a, "/2", "v", "bbbb")
    assert store.count(a) == (2, 8)
    store.remember(a, "/3", "v", "c")
    assert store.get(a, "/1") is None and store.count(a) == (2, 5)
    store.remember(a, "/4", "v", "ddddd")
    assert [store.get(a, k) for k in ("/2", "/3", "/4")] == [None, "c", "ddddd"] and store.count(a) == (2, 6)


def test_owners_are_held_weakly() -> None:
    store, a = SeenTexts(), Owner()
    store.remember(a, "/x", "v", "one")
    del a
    gc.collect()
    assert len(store._by_owner) == 0


def test_windows_of_one_version_add_up_to_the_text() -> None:
    store, a = SeenTexts(), Owner()
    store.remember_lines(a, "/x", "v1", 3, ["c", "d"], last=True)
    assert store.get(a, "/x") is None and store.count(a) == (1, 4)
    store.remember_lines(a, "/x", "v1", 2, ["b", "c"], last=False)  # overlapping: counted once
    assert store.get(a, "/x") is None and store.count(a) == (1, 6)
    store.remember_lines(a, "/x", "v1", 1, ["a"], last=False)
    assert store.get(a, "/x") == "a\nb\nc\nd" and store.count(a) == (1, 7)
    store.remember_lines(a, "/x", "v1", 1, ["A"], last=True)  # whole already: kept as it was
    assert store.get(a, "/x") == "a\nb\nc\nd"
    store.remember_lines(a, "/x", "v2", 1, ["z"], last=False)  # another version starts over
    assert store.get(a, "/x") is None and store.count(a) == (1, 2)
    store.remember_lines(None, "/x", "v2", 1, ["z"], last=True)
    store.remember_lines(a, "/e", "v1", 1, [], last=True)  # an empty file
    assert store.get(a, "/e") == ""


def test_a_gap_keeps_the_windows_apart() -> None:
    store, a = SeenTexts(), Owner()
    store.remember_lines(a, "/x", "v1", 1, ["a"], last=False)
    store.remember_lines(a, "/x", "v1", 3, ["c"], last=True)
    assert store.get(a, "/x") is None
    store.remember_lines(a, "/x", "v1", 2, ["b"], last=False)
    assert store.get(a, "/x") == "a\nb\nc"


def test_windows_are_bounded_as_texts() -> None:
    store, a = SeenTexts(file_chars=4), Owner()
    store.remember_lines(a, "/x", "v1", 1, ["ab"], last=False)
    assert store.count(a) == (1, 3)
    store.remember_lines(a, "/x", "v1", 2, ["cd"], last=False)
    assert store.count(a) == (0, 0)
    store.remember(a, "/y", "v", "abc")
    store.observed(a, "/y", "w")
    assert store.count(a) == (0, 0)
