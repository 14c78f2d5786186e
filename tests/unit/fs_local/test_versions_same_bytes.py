"""The local version tokens' same-bytes rule (DEVIATIONS D29): a ``known`` digest beside the
stat fields, consulted only when they differ, for files of the token's size up to
``SAME_BYTES_MAX`` bytes; and ``KnownContents``, the in-memory provider's digests."""

from __future__ import annotations

import os
import time
from typing import Any

from dsh_fs.fs.provider_rules import SAME_BYTES_MAX, KnownContents
from dsh_fs.fs_local import versions

OLD = time.time() - 3600


def written(path: str, data: bytes) -> os.stat_result:
    with open(path, "wb") as f:
        f.write(data)
    os.utime(path, (OLD, OLD))
    return os.stat(path)


def test_the_cap() -> None:
    assert SAME_BYTES_MAX == 4 * 1024 * 1024


def test_split_token_leaves_a_known_digest_out() -> None:
    assert versions.split_token("1:2:3:4:5") == ("1:2:3:4:5", None)
    assert versions.split_token("1:2:3:4:5:abc") == ("1:2:3:4:5", "abc")
    assert versions.split_token("1:2:3:4:5=abc") == ("1:2:3:4:5", None)


def test_knowable_and_known() -> None:
    assert versions.knowable("1:2:3:4:5", 3)
    assert versions.knowable("1:2:3:4:5", 0)
    assert versions.knowable("1:2:3:4:5", SAME_BYTES_MAX)
    assert not versions.knowable("1:2:3:4:5", SAME_BYTES_MAX + 1)
    assert not versions.knowable("1:2:3:4:5", -1)
    assert not versions.knowable("1:2:3:4:5:abc", 3)  # racy: has its digest
    assert not versions.knowable("1:2:3:4:5=abc", 3)
    assert not versions.knowable("1:2:3:4", 3)
    assert versions.known("1:2:3:4:5", "abc") == "1:2:3:4:5=abc"


def test_content_digest_and_same_bytes() -> None:
    assert versions.content_digest("1:2:3:4:5=abc") == "abc"
    assert versions.content_digest("1:2:3:4:5:abc") == "abc"
    assert versions.content_digest("1:2:3:4:5") is None
    assert versions.content_digest(f"1:2:3:4:5:{versions.UNVERIFIED}") is None
    assert versions.content_digest(f"1:2:{SAME_BYTES_MAX}:4:5=abc") == "abc"
    assert versions.content_digest(f"1:2:{SAME_BYTES_MAX + 1}:4:5:abc") is None  # a sample, maybe
    assert versions.content_digest("1:2:x:4:5=abc") is None
    assert versions.content_digest("missing:/a=b") is None
    assert versions.content_digest("1:2:3:4:5=") is None
    assert versions.same_bytes("1:2:3:4:5=abc", 3) == "abc"
    assert versions.same_bytes("1:2:3:4:5=abc", 4) is None
    assert versions.same_bytes("1:2:3:4:5", 3) is None


def test_same_version_consults_the_digest_only_when_the_fields_differ(tmp_path: Any) -> None:
    path = str(tmp_path / "a.txt")
    st = written(path, b"hello\n")
    plain = versions.fields_of(st)
    token = versions.known(plain, versions.digest_bytes(b"hello\n"))
    assert versions.same_version(token, st, path) and versions.same_version(token, st, path, content=True)
    wrong = versions.known(plain, "0" * 24)  # fields match: the known digest is not read
    assert versions.same_version(wrong, st, path, content=True)
    os.replace(path, path + ".old")
    st2 = written(path, b"hello\n")  # a formatter's rename: new inode, same bytes
    assert not versions.same_version(token, st2, path)
    assert versions.same_version(token, st2, path, content=True)
    assert not versions.same_version(plain, st2, path, content=True)  # no digest known
    assert not versions.same_version(wrong, st2, path, content=True)
    st3 = written(path, b"HELLO\n")
    assert not versions.same_version(token, st3, path, content=True)
    st4 = written(path, b"hello!\n")
    assert not versions.same_version(token, st4, path, content=True)
    os.remove(path)
    os.mkdir(path)
    assert not versions.same_version(token, os.stat(path), path, content=True)


def test_a_racy_token_is_still_checked_when_the_fields_match(tmp_path: Any) -> None:
    path = str(tmp_path / "a.txt")
    st = written(path, b"abc")
    racy = versions.fields_of(st) + ":" + versions.digest_bytes(b"abc")
    assert versions.same_version(racy, st, path, content=True)
    assert not versions.same_version(versions.fields_of(st) + ":" + "0" * 24, st, path, content=True)


def test_digest_fd_is_digest_bytes(tmp_path: Any) -> None:
    path = str(tmp_path / "a.bin")
    data = os.urandom(3 * 1024 * 1024 + 5)
    written(path, data)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert versions.digest_fd(fd, len(data)) == versions.digest_bytes(data)
    finally:
        os.close(fd)


def test_known_contents() -> None:
    known = KnownContents(capacity=2)
    known.remember("m1", b"a")
    known.remember("m2", b"b")
    assert known.same("m1", b"a") and not known.same("m1", b"b") and not known.same("m9", b"a")
    known.remember("m3", b"c")
    assert not known.same("m1", b"a") and known.same("m2", b"b") and known.same("m3", b"c")
    big = b"x" * (SAME_BYTES_MAX + 1)
    known.remember("m4", big)
    assert not known.same("m4", big) and known.same("m3", b"c")
    edge = b"y" * SAME_BYTES_MAX
    known.remember("m5", edge)
    assert known.same("m5", edge)
    assert KnownContents().capacity == 4096
