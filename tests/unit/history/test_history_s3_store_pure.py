"""``history.s3_store`` without a service: where a ``--history-s3`` URL keeps histories, the
store's options, and the bounded memory of the copies it knows (its requests: tests/s3/)."""

from __future__ import annotations

import pytest

from dsh_fs.history import s3_store
from dsh_fs.history.s3_store import DEFAULT_PREFIX, S3HistoryStore, history_place


def test_a_history_url_names_a_bucket_and_a_prefix() -> None:
    assert history_place("s3://team") == ("team", DEFAULT_PREFIX) == ("team", ".dsh-fs-history/")
    assert history_place("s3://team/histories") == ("team", "histories/")
    assert history_place("s3://team/a/b/") == ("team", "a/b/")
    with pytest.raises(ValueError, match="expected an s3://bucket/prefix URL"):
        history_place("team/histories")


def test_the_options_are_checked() -> None:
    with pytest.raises(ValueError, match="^the history prefix ends with /$"):
        S3HistoryStore("b", prefix="no-slash")
    with pytest.raises(ValueError, match="^max_owner_bytes must not be negative$"):
        S3HistoryStore("b", max_owner_bytes=-1)
    store = S3HistoryStore("b", max_owner_bytes=0)  # nothing kept past the newest step: allowed
    assert (store.max_owner_bytes, store.prefix) == (0, DEFAULT_PREFIX)


def test_the_known_copies_are_the_most_recently_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(s3_store, "KNOWN_MAX", 3)
    state = s3_store._Owner()
    for digest in "abcd":
        state.remember(digest)
    assert list(state.known) == ["b", "c", "d"]  # the oldest forgotten first
    state.remember("b")  # kept again: the most recent now
    state.remember("e")
    assert list(state.known) == ["d", "b", "e"]
