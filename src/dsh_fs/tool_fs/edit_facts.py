"""``edit`` of a path that is missing or not a regular file says so first (DEVIATIONS D26,
D27; ``ToolSwitches.edit_missing_first`` / ``edit_not_file_first``). One ``stat`` through the
caller's provider.

REFERENCE-SPEC §4.8 asks the policy (``fs/edit-intent``) before anything looks at the file, so
an edit of a missing path answers "requires reading … first" (and without the policy, the
provider's "file changed since it was read"); the model then reads and learns the real fault.
In the default profile a refusal that can mean a missing path or a non-file is checked with one
``stat`` — only then, so a successful edit still never stats (§4.11) — and replaced by what is
wrong: ``not found`` (with ``read``'s lookalike-name hint, D19) or ``not a regular file``.
"""

from __future__ import annotations

from ..fs.errors import FsError, FsErrorCode, not_found, not_regular_file
from ..fs.filesystem import FileSystem
from ..tool_common.switches import ToolSwitches
from ..fs.types import Target
from .lookup import lookalike_hint
from .shared import with_hint

__all__ = ("what_is_wrong",)

_MAYBE = frozenset({FsErrorCode.NOT_OBSERVED, FsErrorCode.STALE_VERSION, FsErrorCode.NOT_FOUND,
                    FsErrorCode.NOT_REGULAR_FILE})
"""refusals an edit of a missing path or a non-file can come back with"""


async def what_is_wrong(fs: FileSystem, target: Target, err: FsError, switches: ToolSwitches,
                        *, signal: object = None) -> FsError:
    """The error to report for an ``edit`` of ``target`` refused with ``err``: ``not found`` or
    ``not a regular file`` when a ``stat`` shows that is the fault (and its switch, D26 or D27,
    is on), else ``err`` itself. Never raises an ``FsError`` of its own (a failing ``stat`` keeps ``err``)."""
    if err.code not in _MAYBE or not (switches.edit_missing_first or switches.edit_not_file_first):
        return err
    try:
        info = await fs.stat(target, signal=signal)  # type: ignore[arg-type]
    except FsError:
        return err
    if info is None:
        if not switches.edit_missing_first:
            return err
        hint = await lookalike_hint(fs, target.display_path, signal=signal)  # type: ignore[arg-type]
        return with_hint(not_found("edit", target.display_path), hint)
    if info.type != "file" and switches.edit_not_file_first:
        return not_regular_file("edit", target.display_path)
    return err
