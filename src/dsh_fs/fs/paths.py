"""Path text rules shared by providers (REFERENCE-SPEC §2.2, §9 items 1 and 7). Pure: no I/O."""

from __future__ import annotations

import os
import posixpath

__all__ = ("JS_WHITESPACE", "expand_home", "is_blank", "names_home", "node_resolve")

JS_WHITESPACE = frozenset(
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
"""the characters JavaScript's ``String.prototype.trim`` strips"""


_JS_WHITESPACE_CHARS = "".join(sorted(JS_WHITESPACE))


def is_blank(text: str) -> bool:
    """``True`` when ``text`` is empty or only JS whitespace (``text.trim() === ""``)."""
    return not text.strip(_JS_WHITESPACE_CHARS)


def node_resolve(base: str, path: str) -> str:
    """Node's ``path.resolve(base, path)`` on POSIX: absolute, ``.``/``..`` collapsed
    lexically, no trailing slash, leading ``//`` collapsed to ``/``."""
    if path.startswith("/"):
        joined = path
    else:
        if not base.startswith("/"):
            base = posixpath.join(os.getcwd(), base)
        joined = base + path if base.endswith("/") else base + "/" + path  # posixpath.join(base, path)
    out = posixpath.normpath(joined)
    if out.startswith("//"):
        out = "/" + out.lstrip("/")
    return out



def names_home(path: str) -> bool:
    """Does ``path`` start with the home directory, ``~`` alone or ``~/`` (DEVIATIONS D20)?

    ``~user`` is not expanded (a name may start with ``~``, e.g. ``~$report.docx``), and
    ``./~`` names a file or directory called ``~``.
    """
    return path == "~" or path.startswith("~/")


def expand_home(path: str, home: str) -> str:
    """``path`` with its leading ``~`` replaced by ``home`` (when :func:`names_home`)."""
    return home + path[1:] if names_home(path) else path
