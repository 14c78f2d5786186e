"""What the tool plugins share: the faces (``apply_patch``, the text editors), the search
tools and the adapters borrow these from ``tool_fs`` (DEVIATIONS D5, D9, D11, D18, D19).

* Remedies and hints (D9, D30, D5/D18, D19): ``with_remedy`` gives a provider error the default
  profile's recovery remedy (`` — re-read the file, then retry`` for ``FS_STALE_VERSION``,
  followed by what changed when the error carries it, D30,
  `` — read the file, then retry`` for ``FS_NOT_OBSERVED``) or near-match ``Hint: …`` line
  (``old_string was not found``); ``with_hint`` gives any error such a line;
  ``near_match_hint`` is the hint search itself (``tool_fs.hints``).
* Image hints (I1, I5): ``image_hint`` gives a binary-file error on an image path the
  line saying how to see the image (``read_image``, or how a deployment enables it); F6's
  ``pdf_hint`` the same on a ``.pdf`` path (``read_pdf``).
* Unicode checks (D11): ``lone_surrogate``, ``check_unicode``.
* Config helpers: ``positive_integer`` (a plugin setting that must be an integer ≥ 1).

The switches that decide each of them are ``tool_common.switches.ToolSwitches``. Pure: no I/O.
"""

from __future__ import annotations

import math

from ..core.errors import ToolInputError
from ..fs.errors import FsError, FsErrorCode
from ..fs.media import extension_of, image_media_type_for_path
from ..tool_common.switches import ToolSwitches
from .hints import near_match_hint

__all__ = (
    "IMAGE_HINT_DISABLED",
    "IMAGE_HINT_ENABLED",
    "PDF_HINT_DISABLED",
    "PDF_HINT_ENABLED",
    "STALE_REMEDY",
    "UNOBSERVED_REMEDY",
    "check_unicode",
    "image_hint",
    "lone_surrogate",
    "near_match_hint",
    "pdf_hint",
    "positive_integer",
    "with_hint",
    "with_remedy",
)

STALE_REMEDY = " — re-read the file, then retry"
UNOBSERVED_REMEDY = " — read the file, then retry"


IMAGE_HINT_ENABLED = "Hint: this is an image file; use the read_image tool to see it."
"""DEVIATIONS I1: appended to ``read``'s binary-file error on an image path when the context
offers ``read_image``"""
IMAGE_HINT_DISABLED = (
    "Hint: this is an image file; read shows text only. Image reads are not enabled in this deployment "
    "(its operator can enable them for an image-capable model: create_context(images=True) or dsh-fs mcp --images)."
)
"""DEVIATIONS I1: the same, when the context does not offer ``read_image``"""


def image_hint(err: FsError, file_path: str, *, offered: bool) -> FsError:
    """``err`` with I1's hint when it is a binary-file error (``FS_NOT_TEXT``) on a path whose
    extension claims an image (``fs.media``); otherwise ``err`` itself.

    :param offered: whether the context offers ``read_image`` (the hint names it), else the
        hint says how a deployment enables image reads
    """
    if err.code != FsErrorCode.NOT_TEXT or image_media_type_for_path(file_path) is None:
        return err
    return with_hint(err, IMAGE_HINT_ENABLED if offered else IMAGE_HINT_DISABLED)


PDF_HINT_ENABLED = "Hint: this is a PDF file; use the read_pdf tool to read its text."
"""DEVIATIONS F6: appended to ``read``'s not-text error on a ``.pdf`` path when the context offers
``read_pdf``"""
PDF_HINT_DISABLED = (
    "Hint: this is a PDF file; read shows text files only. PDF reads are not enabled in this deployment "
    "(its operator can enable them: create_context(pdfs=True) or dsh-fs mcp --pdfs)."
)
"""DEVIATIONS F6: the same, when the context does not offer ``read_pdf``"""


def pdf_hint(err: FsError, file_path: str, *, offered: bool) -> FsError:
    """``err`` with F6's hint when it is a not-text error (``FS_NOT_TEXT``: binary, or not
    UTF-8) on a ``.pdf`` path; otherwise ``err`` itself.

    :param offered: whether the context offers ``read_pdf`` (the hint names it), else the hint
        says how a deployment enables PDF reads
    """
    if err.code != FsErrorCode.NOT_TEXT or extension_of(file_path).lower() != ".pdf":
        return err
    return with_hint(err, PDF_HINT_ENABLED if offered else PDF_HINT_DISABLED)


def with_remedy(err: FsError, switches: ToolSwitches) -> FsError:
    """The error the model should see under ``switches`` (``err`` itself when unchanged): D9's
    remedy when ``switches.remedies``, then D30's changes block (``err.changes``) when
    ``switches.stale_diffs``; D5/D18's hint when ``switches.near_match_hints``."""
    code = err.code
    if code == FsErrorCode.STALE_VERSION and (switches.remedies or (err.changes and switches.stale_diffs)):
        message = err.message + STALE_REMEDY if switches.remedies else err.message
        if err.changes and switches.stale_diffs:  # D30: what changed, after the first line
            message += "\n" + err.changes
    elif code == FsErrorCode.NOT_OBSERVED and switches.remedies:
        message = err.message + UNOBSERVED_REMEDY
    elif (code == FsErrorCode.EDIT_NOT_FOUND and switches.near_match_hints and err.searched_text is not None
          and err.needle):
        hint = near_match_hint(err.searched_text, err.needle, replacement=err.replacement)
        if hint is None:
            return err
        message = err.message + "\n" + hint
    else:
        return err
    return FsError(message, code, cause=err)


def with_hint(err: FsError, hint: str | None) -> FsError:
    """``err`` with a second line ``hint`` (one ``Hint: …`` line), or ``err`` itself without one."""
    if hint is None:
        return err
    return FsError(err.message + "\n" + hint, err.code, cause=err)


def lone_surrogate(text: str) -> tuple[int, int] | None:
    """``(index, code point)`` of the first unpaired surrogate in ``text``, or ``None``."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
        return None
    except UnicodeEncodeError:
        pass
    i = 0
    n = len(text)
    while i < n:
        cp = ord(text[i])
        if 0xD800 <= cp <= 0xDBFF:
            if i + 1 < n and 0xDC00 <= ord(text[i + 1]) <= 0xDFFF:
                i += 2
                continue
            return i, cp
        if 0xDC00 <= cp <= 0xDFFF:
            return i, cp
        i += 1
    return None


def check_unicode(name: str, text: str) -> None:
    """D11: reject unpaired surrogates instead of writing U+FFFD.

    :raises ToolInputError: ``<name> must be valid Unicode text (lone surrogate U+D83D at index 3)``
    """
    found = lone_surrogate(text)
    if found is not None:
        index, cp = found
        raise ToolInputError(f"{name} must be valid Unicode text (lone surrogate U+{cp:04X} at index {index})")


def positive_integer(name: str, value: object, *, plugin: str = "tool-fs") -> int:
    """A plugin setting that must be an integer ≥ 1 (``2.0`` counts as 2), as ``int``.

    :raises ValueError: ``<plugin>: <name> must be a positive integer``
    """
    ok = (
        isinstance(value, int) and not isinstance(value, bool) and value >= 1
    ) or (isinstance(value, float) and math.isfinite(value) and value.is_integer() and value >= 1)
    if not ok:
        raise ValueError(f"{plugin}: {name} must be a positive integer")
    return int(value)  # type: ignore[arg-type]
