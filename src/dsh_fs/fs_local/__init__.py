"""The local-disk provider: ``LocalFileSystem`` (REFERENCE-SPEC §2, DEVIATIONS A1–A6).

| module | owns |
|---|---|
| ``filesystem`` | ``LocalFileSystem``: the async shell (worker threads, capacity limiter, locks held over each mutation, cheap calls inline) |
| ``fsio`` | the seam's primitives on one target, synchronous: resolve, read, stream, list, write, edit |
| ``files`` | one file: ``probe`` (stat + version), ``open_regular`` (never blocks on a FIFO), what a replace keeps (D3), read-only files (D17) |
| ``rules`` | ``LocalRules``: the profile switches (``TextRules`` plus D3, D12, D17) and the local settings; pure |
| ``atomic`` | the atomic, durable replace (temp file, fsyncs, rename; A2, A3) and access that never widens (D21) |
| ``acl`` | POSIX access ACLs kept across a replace (D21) |
| ``large_edit`` | streamed edits of huge files in bounded memory (the local driver of ``fs.literal_edit_stream``) |
| ``reads``, ``scan``, ``line_index`` | windowed reads: the read itself; the byte scanner (A1, D6, D10); sparse line indexes of recent reads |
| ``versions`` | version tokens, with a content digest when racily clean (A5) |
| ``recent_writes`` | the bytes of the last small writes under the racy versions reported, so an edit guarded by one compares bytes instead of hashing them (A5) |
| ``locks`` | cross-process mutation locks: ``flock`` stripes in a private lock directory (A4) |
| ``containment`` | ``realpath`` that never steps outside the root, opens that walk from it with ``O_NOFOLLOW`` |
| ``roots`` | the containment roots checked at construction: directories, at most 64, none overlapping (D28) |
| ``moves`` | guarded ``delete`` and ``rename`` (``renameat2(RENAME_NOREPLACE)``, else ``link`` + ``unlink``) |
| ``walk`` | raw listings and raw reads for the search tools (``walk``, ``stream_bytes``) |
| ``oserrors`` | OS errors as coded ``FsError`` s with the catalog's messages (A2) |

Only ``LocalFileSystem`` is exported; import the other modules by name.
"""

from .filesystem import LocalFileSystem as LocalFileSystem

__all__ = ("LocalFileSystem",)
