"""The files an escalated call will change, as its approval prompt names them (docs/SANDBOX.md
"Escalation").

The person asked to approve a wider mode must see the file that will change, not the model's
spelling of it: ``"README.md" + 300 spaces + "/../.git/config"`` is ``.git/config``, and so is
``docs/config`` when the repository's ``docs`` is a symlink to ``.git``. So each path is
resolved through the call's own view of the provider, as the tool will resolve it (the cwd,
``..``, ``~``), and named by its real place (``FileSystem.real_place``): the host path of the
target on the local disk or the far side's real path over a command channel (every symlink
resolved), the provider's display path where names are the files (memory, S3). One
file a line, each line as ``approval.one_line`` prints it (whitespace runs, invisible and
bidirectional characters escaped).

Deviation X6 (default profile, ``ToolSwitches.dotdot_checked``): a ``..`` that follows a name
which does not exist or is not a directory is refused before anyone is asked, with §1.5 #3's
``cannot resolve "<path>": a parent path segment is not a directory`` (the path as the model
wrote it, joined to the cwd): the kernel would refuse that path, and only the lexical ``..`` of
the reference (§2.2) turns it into another file. The reference profile resolves it lexically
and the prompt names the file that resolution reaches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..fs.errors import FsError, FsErrorCode, parent_not_directory
from ..fs.filesystem import FileSystem
from .approval import one_line

if TYPE_CHECKING:
    from ..core.signal import AbortSignal

__all__ = ("Change", "check_parents", "describe", "real_name")


@dataclass(frozen=True, slots=True)
class Change:
    """One file a call will change, as the model named it.

    :param label: what happens to it, as the prompt's line starts (``Write``, ``Edit``;
        apply_patch's ``A``, ``M``, ``D``)
    :param path: the path as the model wrote it
    :param dest: a move's destination, as the model wrote it (``None``: no move)
    """

    label: str
    path: str
    dest: str | None = None


async def check_parents(fs: FileSystem, path: str, *, cwd: str | None, signal: "AbortSignal | None" = None) -> None:
    """Refuse ``path`` when one of its ``..`` components follows a name that is missing or not
    a directory (X6): each such prefix, as spelled, is resolved and ``stat``-ed through ``fs``
    (a path without ``..`` costs nothing). A prefix outside ``fs``'s containment or denied by
    the path rules (``FS_PERMISSION_DENIED``) is skipped, the later ones still checked (the
    whole path's resolution judges where it leads; nothing is said about a denied name); one
    that cannot be resolved for any other reason (a name too long, a file as a parent) is
    refused.

    :raises FsError: ``FS_NOT_FOUND`` ``cannot resolve "<path>": a parent path segment is not a
        directory`` (``<path>`` joined to ``cwd`` when relative, not normalized)
    """
    parts = path.split("/")
    if ".." not in parts:
        return
    for index, part in enumerate(parts):
        if part != ".." or index == 0:
            continue
        prefix = "/".join(parts[:index])
        if prefix.strip("/.") == "":
            continue  # the cwd, ".", or the file system's root: directories
        spelled = path if path.startswith(("/", "~")) or not cwd else cwd.rstrip("/") + "/" + path
        try:
            target = await fs.resolve(prefix, cwd=cwd, signal=signal)
        except FsError as err:
            if err.code == FsErrorCode.PERMISSION_DENIED:
                continue
            raise parent_not_directory(spelled) from err
        info = await fs.stat(target, signal=signal)
        if info is None or info.type != "directory":
            raise parent_not_directory(spelled)


async def real_name(fs: FileSystem, path: str, *, cwd: str | None, signal: "AbortSignal | None" = None) -> str:
    """The real place of the file ``path`` names (``FileSystem.real_place``): its host path
    (symlinks resolved) when the provider stores files on this disk, the far side's real path
    over a command channel, else its display path.

    :raises FsError: the provider's resolution errors (outside the workspace, …), and
        ``real_place``'s
    """
    target = await fs.resolve(path, cwd=cwd, signal=signal)
    return await fs.real_place(target, signal=signal)


async def describe(fs: FileSystem, changes: Sequence[Change], *, cwd: str | None, header: str | None = None,
                   dotdot_checked: bool = True, signal: "AbortSignal | None" = None) -> str:
    """The approval prompt's summary of ``changes``: ``header`` (when given) on the first line,
    then ``<label> <real path>`` (``<label> <real path> -> <real dest>`` for a move) a line,
    each path by ``real_name`` and printed as ``one_line``.

    :param fs: the call's view of the provider (it resolves as the tool will)
    :param dotdot_checked: X6: ``check_parents`` on each path first
    :raises FsError: X6's refusal; a path the provider cannot resolve
    """
    lines = [header] if header else []
    for change in changes:
        spelled = [change.path] if change.dest is None else [change.path, change.dest]
        if dotdot_checked:
            for path in spelled:
                await check_parents(fs, path, cwd=cwd, signal=signal)
        names = [one_line(await real_name(fs, path, cwd=cwd, signal=signal)) for path in spelled]
        lines.append(f"{change.label} " + " -> ".join(names))
    return "\n".join(lines)
