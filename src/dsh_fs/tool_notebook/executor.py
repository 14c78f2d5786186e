"""The ``notebook_edit`` executor: Claude Code's ``NotebookEdit`` under dsh-fs's guarantees
(docs/NOTEBOOKS.md).

One call: the argument checks Claude Code makes first (the extension, the edit mode, a cell type
for an insert), then resolve → one stat → the policy's edit intent (the notebook must have been
read, ``read`` or a face's ``view``, and be unchanged since: else ``FS_NOT_OBSERVED`` /
``FS_STALE_VERSION``, with the default profile's remedies) → the text of exactly that version
(``read_text_at``) → parse, edit, write back in the file's layout (``notebook.cells``) → the edited
notebook validated with ``nbformat`` (F3) → one guarded write (``ReplaceIfVersion``: atomic,
under the file's lock; a notebook saved by a running kernel in between is refused as stale) →
``fs/observed`` at the new version.

Notebooks over ``max_bytes`` are refused before they are read. Parsing, editing, writing back and
validating a notebook of more than ``ON_LOOP_MAX_BYTES`` run in a worker thread.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

import anyio.to_thread

from ..core.context import Context
from ..core.errors import ToolInputError
from ..core.session import ToolExecution
from ..core.tools import ToolOutput, text_block
from ..fs.errors import FsError, FsErrorCode, gone, not_regular_file, stale
from ..fs.events import FS_EDIT_INTENT, FS_OBSERVED
from ..fs.filesystem import FileSystem
from ..fs.media import extension_of
from ..tool_common.switches import ToolSwitches
from ..fs.types import EditIntent, ReplaceIfVersion
from ..fs_sandbox.tools import call_fs, map_denial
from ..notebook import cells as nbcells
from ..notebook.document import NotNotebook, parse
from ..tool_fs.args import check_file_path
from ..tool_fs.diff import bounded_diffs
from ..tool_fs.shared import check_unicode, with_remedy
from ..tool_fs.stale_changes import saw, with_changes_at
from . import texts as t

__all__ = ("NotebookEditor", "ON_LOOP_MAX_BYTES", "validate_nbformat")

ON_LOOP_MAX_BYTES = 256 * 1024
"""notebooks of more bytes are parsed, edited and validated in a worker thread"""

_MODES = ("replace", "insert", "delete")


def validate_nbformat(document: dict[str, Any]) -> str | None:
    """Why ``document`` is not valid nbformat (the validator's first message, one line), or
    ``None`` when it is. The document is not changed (nbformat's repairs apply to a copy)."""
    import nbformat

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            nbformat.validate(copy.deepcopy(document))
        except nbformat.ValidationError as exc:
            return " ".join(str(exc.message).split())
        except Exception as exc:  # nbformat refuses what it cannot read (an unknown nbformat version)
            return " ".join(str(exc).split()) or type(exc).__name__
    return None


class _Outcome:
    """What the pure step made: the text to write and the result text."""

    __slots__ = ("text", "result")

    def __init__(self, text: str, result: str) -> None:
        self.text = text
        self.result = result


class NotebookEditor:
    """The executor bound to one context.

    :param max_bytes: notebooks of more bytes are refused before they are read
    """

    def __init__(self, ctx: Context, *, max_bytes: int) -> None:
        self.ctx = ctx
        self.max_bytes = max_bytes
        self.switches = ToolSwitches.of(ctx.profile)

    def _fs(self, execution: ToolExecution) -> FileSystem:
        return execution.fs or self.ctx.fs  # type: ignore[no-any-return]

    async def __call__(self, args: dict[str, Any], execution: ToolExecution) -> ToolOutput:
        """Replace, insert or delete one cell (``args`` passed the schema).

        :raises ToolInputError: Claude Code's argument and cell texts (``texts``); F3's
            refusal of a notebook that is not valid nbformat
        :raises FsError: ``Notebook file does not exist.`` (``FS_NOT_FOUND``); from resolve,
            the policy (``FS_NOT_OBSERVED``, ``FS_STALE_VERSION``), the read and the write
        """
        path: str = args["notebook_path"]
        check_file_path(path)
        if self.switches.unicode_arguments:
            for name in ("notebook_path", "new_source", "cell_id"):
                if isinstance(args.get(name), str):
                    check_unicode(name, args[name])
        mode = args.get("edit_mode", "replace")
        cell_type = args.get("cell_type")
        if extension_of(path) != ".ipynb":
            raise ToolInputError(t.not_a_notebook(self.switches.notebook_edit_names_edit))
        if mode not in _MODES:
            raise ToolInputError(t.EDIT_MODE_INVALID)
        if mode == "insert" and cell_type is None:
            raise ToolInputError(t.CELL_TYPE_REQUIRED)
        await call_fs(self.ctx, t.NAME, args, execution, escalates=False)
        try:
            return await self._edit(path, args, mode, execution)
        except FsError as err:
            shown = await with_changes_at(self.ctx, self._fs(execution), path, err, execution, self.switches)  # D30
            projected = map_denial(with_remedy(shown, self.switches), self._fs(execution), hint=False)
            if projected is err:
                raise
            raise projected from err

    async def _edit(self, path: str, args: dict[str, Any], mode: str, execution: ToolExecution) -> ToolOutput:
        fs = self._fs(execution)
        signal = execution.signal
        target = await fs.resolve(path, cwd=execution.cwd, signal=signal)
        display = target.display_path
        info = await fs.stat(target, signal=signal)
        if info is None:
            if self.switches.record_absence:  # D8: an absence, as read records it
                self.ctx.emit(FS_OBSERVED, target, None, execution)
            raise FsError(t.NOT_FOUND, FsErrorCode.NOT_FOUND)
        if info.type != "file":
            raise not_regular_file("edit", display)
        intent: EditIntent | None = await self.ctx.waterfall(FS_EDIT_INTENT, target, execution, default=lambda: None)
        guard = intent.version if intent is not None else info.version
        if info.size is not None and info.size > self.max_bytes:
            raise FsError(f'cannot edit "{display}": the notebook is {info.size} bytes, more than the limit of '
                          f"{self.max_bytes} bytes notebook_edit changes; change it with edit",
                          FsErrorCode.IO_ERROR)
        text = await fs.read_text_at(target, guard, info=info, signal=signal)
        if text is None:  # changed since the guard's version: what the guarded write would say
            now = await fs.stat(target, signal=signal)
            raise gone(display) if now is None else stale("edit", display)
        work = (display, text, args.get("cell_id"), args["new_source"], args.get("cell_type"), mode)
        if len(text) > ON_LOOP_MAX_BYTES:
            outcome = await anyio.to_thread.run_sync(_edited, *work)
        else:
            outcome = _edited(*work)
        written = await fs.write_text(target, outcome.text, ReplaceIfVersion(guard), signal=signal)
        saw(self.ctx, target, written.version, written.after, execution)  # D30
        self.ctx.emit(FS_OBSERVED, target, written.version, execution)
        diffs = bounded_diffs(path, written.before, written.after)
        return ToolOutput(content=[text_block(outcome.result)], meta={"diffs": diffs})


def _edited(display: str, text: str, cell_id: str | None, new_source: str, cell_type: str | None,
            mode: str) -> _Outcome:
    """The pure step: parse ``text``, apply the edit, write it back, validate (F3).

    :raises ToolInputError: ``Notebook is not valid JSON.``; a notebook without a ``cells``
        array or one that nbformat refuses (F3); the ``notebook.cells.EditRefused`` texts
    """
    try:
        document = parse(text)
    except NotNotebook as exc:
        if exc.reason == "json":
            raise ToolInputError(t.NOT_JSON) from None
        raise ToolInputError(t.invalid_nbformat(display, exc.detail, already=True)) from None
    before = copy.deepcopy(document)
    try:
        applied = nbcells.apply(document, cell_id=cell_id, new_source=new_source, cell_type=cell_type,
                                edit_mode=mode)  # type: ignore[arg-type]
    except nbcells.EditRefused as exc:
        raise ToolInputError(str(exc)) from None
    reason = validate_nbformat(document)
    if reason is not None:
        earlier = validate_nbformat(before)
        raise ToolInputError(t.invalid_nbformat(display, earlier or reason, already=earlier is not None))
    if applied.mode == "insert":
        result = t.inserted(applied.cell, new_source)
    elif applied.mode == "delete":
        result = t.deleted(cell_id or applied.cell)
    else:
        result = t.updated(cell_id or applied.cell, new_source)
    return _Outcome(nbcells.dump(document, text), result)
