"""Default-profile additions to provider errors (DEVIATIONS D5, D9, D18).

* D9: ``FS_STALE_VERSION`` messages end with `` — re-read the file, then retry``;
  ``FS_NOT_OBSERVED`` messages with `` — read the file, then retry``.
* D5, D18: ``old_string was not found`` gets a second line ``Hint: …`` when a near match
  exists, or when new_string is in the file already (the edit looks applied).
* D19: ``with_hint`` gives any error such a line (the read tool's lookalike names).
"""

from __future__ import annotations

from ..fs.errors import FsError, FsErrorCode
from ..fs.tool_switches import ToolSwitches
from .hints import near_match_hint

__all__ = ("STALE_REMEDY", "UNOBSERVED_REMEDY", "with_hint", "with_remedy")

STALE_REMEDY = " — re-read the file, then retry"
UNOBSERVED_REMEDY = " — read the file, then retry"


def with_remedy(err: FsError, switches: ToolSwitches) -> FsError:
    """The error the model should see under ``switches`` (``err`` itself when unchanged): D9's
    remedy when ``switches.remedies``, D5/D18's hint when ``switches.near_match_hints``."""
    code = err.code
    if code == FsErrorCode.STALE_VERSION and switches.remedies:
        message = err.message + STALE_REMEDY
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
