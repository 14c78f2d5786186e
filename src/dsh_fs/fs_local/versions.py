"""Version tokens of the local provider (REFERENCE-SPEC §2.4; DEVIATIONS A5).

A token is ``dev:ino:size:mtimeNs:ctimeNs``. When the file changed within ``RACY_WINDOW_NS``
of the moment the token is minted, a same-size rewrite inside one timestamp tick could leave
every field unchanged (the "racily clean" problem git solves for its index), so the token
also carries a content digest: ``dev:ino:size:mtimeNs:ctimeNs:<digest>``. A guard compares
the stat fields and, when the expected token carries a digest, the current content's digest.

Files up to ``FULL_DIGEST_MAX`` bytes are digested whole; larger ones by a fixed sample
(head, tail and evenly spaced blocks), so a racy same-size rewrite of a huge file that only
touches unsampled bytes inside one tick is not detected.

Same bytes (DEVIATIONS D29, default profile): a token may also carry the digest of the content
it was minted from without being racy, ``dev:ino:size:mtimeNs:ctimeNs=<digest>`` (``known``:
a read that had the whole file in hand). That digest, or a racy token's full one, is consulted
only when the stat fields differ: a file rewritten with the same bytes (a formatter's rename,
``touch`` then a same-content save) is still the version the token names. Only for files of at
most ``SAME_BYTES_MAX`` bytes, of the token's size (a rewrite of another size is a change
without reading anything); above that, a change of the stat fields is a change, as in the
reference. Never a sampled digest.
"""

from __future__ import annotations

import hashlib
import os
import stat as stat_mod
import time
from collections.abc import Callable

from ..fs.provider_rules import SAME_BYTES_MAX
from . import containment

__all__ = ("FULL_DIGEST_MAX", "RACY_WINDOW_NS", "SAME_BYTES_MAX", "content_digest", "digest_bytes",
           "digest_fd", "digest_file", "fields_of", "is_racy", "knowable", "known", "mint", "same_bytes",
           "same_version", "split_token")

RACY_WINDOW_NS = 3_000_000_000
"""a change this recent (ns) may be invisible to the stat fields (covers 2 s FAT granularity)"""
FULL_DIGEST_MAX = 32 * 1024 * 1024
_SAMPLE_BLOCK = 64 * 1024
_SAMPLE_BLOCKS = 32
_PIECE = 1024 * 1024
_DIGEST_HEX = 24
"""hex digits of a digest kept in a token (96 bits)"""


def fields_of(st: os.stat_result) -> str:
    """The reference's five stat fields."""
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def is_racy(st: os.stat_result) -> bool:
    """Did the file ``st`` describes change within ``RACY_WINDOW_NS`` of now? Then a later
    change may leave its stat fields as they are (A5); otherwise any change shows in them."""
    return time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_WINDOW_NS


def _digest(read_at: Callable[[int, int], bytes | memoryview], size: int) -> str:
    """The content digest: SHA-256 (OpenSSL's, with the CPU's SHA instructions where it has
    them: about twice as fast as BLAKE2b here), its first 96 bits in hex."""
    h = hashlib.sha256()
    if size <= FULL_DIGEST_MAX:
        for offset in range(0, size, _PIECE):  # bounded memory: one piece at a time
            h.update(read_at(offset, min(_PIECE, size - offset)))
    else:
        step = (size - _SAMPLE_BLOCK) // (_SAMPLE_BLOCKS - 1)
        for i in range(_SAMPLE_BLOCKS):
            h.update(read_at(i * step, _SAMPLE_BLOCK))
    return h.hexdigest()[:_DIGEST_HEX]


def digest_bytes(data: bytes) -> str:
    """Digest of in-memory file content (same value ``digest_file`` gives for those bytes)."""
    if len(data) <= _PIECE:
        return hashlib.sha256(data).hexdigest()[:_DIGEST_HEX]  # one piece: no view, no loop
    view = memoryview(data)
    return _digest(lambda off, n: view[off : off + n], len(data))


def digest_fd(fd: int, size: int) -> str:
    """Digest of the first ``size`` bytes of the open file ``fd`` (same value as
    ``digest_bytes`` of them; a sample above ``FULL_DIGEST_MAX``)."""
    return _digest(lambda off, n: os.pread(fd, n, off), size)


def digest_file(path: str, st: os.stat_result, *, root: containment.Root | None = None) -> str | None:
    """Digest of the file at ``path`` (opened beneath ``root`` when given, never outside it),
    or ``None`` when it is not the file ``st`` describes any more (replaced, unreadable) — the
    caller must then treat the version as changed."""
    try:
        fd = containment.open_in(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY, root=root)
    except OSError:
        return None
    try:
        now = os.fstat(fd)
        if not stat_mod.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            return None
        return _digest(lambda off, n: os.pread(fd, n, off), now.st_size)
    except OSError:
        return None
    finally:
        os.close(fd)


UNVERIFIED = "unverified"
"""digest placeholder of a racy token minted without reading; it never matches (fail closed)"""


def mint(st: os.stat_result, path: str, *, content: bytes | None = None, read: bool = True,
         root: containment.Root | None = None) -> str:
    """The version token of ``st`` (for ``path``); racy regular files get a digest.

    :param content: the file's bytes when the caller just wrote them (avoids a re-read)
    :param read: ``False`` never opens the file (listings, §2.6 step 7): a racy token then
        carries ``UNVERIFIED`` and a guard on it fails as stale rather than risk A5
    """
    base = fields_of(st)
    if not stat_mod.S_ISREG(st.st_mode) or not is_racy(st):
        return base
    if content is not None:
        return f"{base}:{digest_bytes(content)}"
    digest = digest_file(path, st, root=root) if read else None
    return f"{base}:{digest if digest is not None else UNVERIFIED}"


def split_token(expected: str) -> tuple[str, str | None]:
    """``expected`` as (stat fields, racy content digest or ``None`` when it carries none); a
    ``known`` digest (D29) is left out: it is consulted only when the fields differ."""
    expected = expected.partition("=")[0]
    if expected.count(":") >= 5:
        fields, _, digest = expected.rpartition(":")
        return fields, digest
    return expected, None


def knowable(token: str, size: int) -> bool:
    """May ``token`` (of a file of ``size`` bytes) take a ``known`` digest (D29): it carries
    none yet (neither racy nor known) and the file is at most ``SAME_BYTES_MAX`` bytes?"""
    return token.count(":") == 4 and "=" not in token and 0 <= size <= SAME_BYTES_MAX


def known(token: str, digest: str) -> str:
    """``token`` with ``digest``, the full digest of the content it was minted from (D29)."""
    return f"{token}={digest}"


def content_digest(expected: str) -> str | None:
    """The full digest of the content ``expected`` was minted from, when it carries one and
    names a file of at most ``SAME_BYTES_MAX`` bytes (D29); else ``None``."""
    fields, racy = split_token(expected)
    digest = expected.partition("=")[2] or racy
    parts = fields.split(":")
    if not digest or digest == UNVERIFIED or len(parts) != 5 or not parts[2].isdigit():
        return None
    return digest if int(parts[2]) <= SAME_BYTES_MAX else None


def same_bytes(expected: str, size: int) -> str | None:
    """The digest a file of ``size`` bytes must have to hold the content of ``expected`` (D29),
    or ``None`` when it cannot (no full digest known, another size, over ``SAME_BYTES_MAX``)."""
    digest = content_digest(expected)
    if digest is None or split_token(expected)[0].split(":")[2] != str(size):
        return None
    return digest


def same_version(expected: str, st: os.stat_result, path: str, *, root: containment.Root | None = None,
                 content: bool = False) -> bool:
    """Does the file at ``path`` (now ``st``) still have version ``expected``?

    :param content: D29 (``LocalRules.same_bytes``): when the stat fields differ, a regular
        file with the bytes ``expected`` was minted from still has it (``same_bytes``)
    """
    fields, digest = split_token(expected)
    if fields != fields_of(st):
        if not content or not stat_mod.S_ISREG(st.st_mode):
            return False
        digest = same_bytes(expected, st.st_size)
        if digest is None:
            return False
    elif digest is None:
        return True
    current = digest_file(path, st, root=root)
    return current is not None and current == digest
