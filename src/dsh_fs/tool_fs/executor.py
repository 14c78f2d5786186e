"""The executors of ``read``, ``write`` and ``edit`` (REFERENCE-SPEC §4.6–§4.12).

They call the provider directly and dispatch the ``fs/*`` events; they never catch a
failure (the registry turns it into an error result), except to add the default profile's
remedies and hints (D5, D9, D18, D19: a ``read`` of a missing path lists its directory for a
lookalike name). Stat budget: read stats once, write and edit never (§4.11).

Read windows: the provider windows the file itself when it can (``FileSystem.read_window``,
e.g. the local provider on bytes with a line index); otherwise the executor windows
``read_text`` (files below ``read_stream_min_size``, held whole: ``window_whole``) or
``stream_text``. Same result either way. A read from a ``column`` past 1 (D35: reading on in a
line too long to show whole) is always windowed here.

Diff metadata is bounded (``tool_fs.diff.bounded_diffs``): hunks are computed only when both sides of the
diff basis are at most ``DIFF_META_MAX_CHARS`` characters; beyond that ``edit`` attaches
``{"diffs": []}`` and ``write`` no ``meta``. The local provider already returns no diff basis
for an edit it streamed, or a write over a file it did not hold (files of at least
``stream_edit_min_size`` bytes, 32 MiB by default).
"""

from __future__ import annotations

from typing import Any, NoReturn

from ..core.context import Context
from ..core.session import ToolExecution
from ..core.tools import ContentBlock, ToolOutput, text_block
from ..fs.errors import FsError, FsErrorCode, not_found, not_regular_file
from ..fs.legacy_text import LEGACY_MAX_BYTES, encoding_note
from ..fs.events import FS_EDIT_INTENT, FS_OBSERVED, FS_WRITE_INTENT
from ..fs.filesystem import FileSystem
from ..tool_common.switches import ToolSwitches
from ..fs.window import window_whole
from ..fs.types import EditRequest, Target, Version
from ..fs_sandbox.changes import Change
from ..fs_sandbox.tools import call_fs, escalation_offered, map_denial
from ..core.errors import ToolInputError
from .args import check_file_path, check_positive_integer, differ_only_in_line_endings
from .config import ToolFsConfig
from .diff import bounded_diffs
from .edit_facts import what_is_wrong
from .read_render import ReadWindow, build_window, format_read_output
from .list_tool import directory_hint
from ..notebook import is_notebook_path
from .notebook_read import NotShownAsCells, notebook_blocks, too_big_note
from .lookup import lookalike_hint
from .seen import SeenTexts
from .shared import check_unicode, image_hint, pdf_hint, with_hint, with_remedy
from .stale_changes import with_changes

__all__ = ("FsTools",)

class FsTools:
    """The three executors bound to one context and configuration."""

    def __init__(self, ctx: Context, config: ToolFsConfig) -> None:
        self.ctx = ctx
        self.config = config
        self.switches = ToolSwitches.of(config.profile)
        self._windows: dict[tuple[int, int, int], ReadWindow] = {}  # (offset, limit, column) → window
        self.seen: SeenTexts | None = None
        """D30: the texts each owner last saw (set by the plugin when it provides them)"""

    def _window(self, offset: int, limit: int, column: int = 1) -> ReadWindow:
        """The read window of these arguments (immutable, so shared between calls)."""
        window = self._windows.get((offset, limit, column))
        if window is None:
            if len(self._windows) >= 256:
                self._windows.clear()
            window = self._windows[(offset, limit, column)] = ReadWindow(
                offset=offset,
                limit=limit,
                max_line_length=self.config.read_max_line_length,
                max_bytes=self.config.read_max_bytes,
                always_progress=self.switches.always_progress,
                exact_truncation=self.switches.exact_truncation,
                column=column,
            )
        return window

    @property
    def fs(self) -> FileSystem:
        return self.ctx.fs  # type: ignore[no-any-return]

    def _fs(self, execution: ToolExecution) -> FileSystem:
        """The provider of this call: its sandbox view (``execution.fs``), else ``ctx.fs``."""
        return execution.fs or self.fs  # type: ignore[no-any-return]

    async def _resolve(self, file_path: str, execution: ToolExecution) -> Target:
        return await self._fs(execution).resolve(file_path, cwd=execution.cwd, signal=execution.signal)

    async def _sandboxed(self, name: str, args: dict[str, Any], execution: ToolExecution, run: Any) -> Any:
        """``run()`` under the call's sandbox policy (``fs_sandbox.tools.call_fs``: escalation
        fields, approval), its ``FS_SANDBOX_DENIED`` shown as the marker and the escalation hint."""
        await call_fs(self.ctx, name, args, execution, escalates=True,
                      changes=[Change(name.capitalize(), args["file_path"])])
        try:
            return await run()
        except FsError as err:
            view = self._fs(execution)
            mapped = map_denial(err, view, hint=escalation_offered(view, self.ctx.profile))  # D37
            if mapped is err:
                raise
            raise mapped from err

    async def _guarded(self, run: Any) -> Any:
        if not (self.switches.remedies or self.switches.near_match_hints):
            return await run()
        try:
            return await run()
        except FsError as err:
            projected = with_remedy(err, self.switches)
            if projected is err:
                raise
            raise projected from err

    # -- read (§4.6) -----------------------------------------------------------------------
    async def read(self, args: dict[str, Any], execution: ToolExecution) -> list[ContentBlock]:
        """Line-numbered window of a UTF-8 file; records the observation on success."""
        file_path: str = args["file_path"]
        check_file_path(file_path)
        offset = check_positive_integer("offset", args["offset"]) if "offset" in args else 1
        limit = check_positive_integer("limit", args["limit"]) if "limit" in args else self.config.read_limit
        if limit > self.config.read_limit:
            raise ToolInputError(f"limit must be less than or equal to {self.config.read_limit}")
        column = 1
        if "column" in args and self.switches.read_on_in_long_lines:  # D35
            column = check_positive_integer("column", args["column"])
        if self.switches.unicode_arguments:
            check_unicode("file_path", file_path)
        try:
            return await self._read(file_path, offset, limit, execution, column)
        except FsError as err:
            self._read_failed(err, file_path)

    def _read_failed(self, err: FsError, file_path: str) -> NoReturn:
        """Raise what the model sees of a failed read: ``err`` with the remedies and hints of
        ``_guarded`` (D5, D9, D18), then I1's image hint or F6's PDF hint (each chained to what it
        replaced)."""
        try:
            if not (self.switches.remedies or self.switches.near_match_hints):
                raise err
            projected = with_remedy(err, self.switches)
            if projected is err:
                raise err
            raise projected from err
        except FsError as shown:
            hinted = shown
            if self.switches.image_read_hint:
                hinted = image_hint(shown, file_path, offered=self.ctx.tools.get("read_image") is not None)
            if self.switches.pdf_read_hint and hinted is shown:  # F6
                hinted = pdf_hint(shown, file_path, offered=self.ctx.tools.get("read_pdf") is not None)
            if hinted is shown:
                raise
            raise hinted from shown

    def _spilled(self, file_path: str, execution: ToolExecution) -> FileSystem | None:
        """The read-only provider of a saved search result (``spill_store.reader``), when
        ``file_path`` is the locator of one of this session's: the model pages a capped
        ``glob``/``grep`` result even where the workspace provider cannot reach it."""
        if execution.session is None or not self.ctx.has("spill_store"):
            return None
        return self.ctx.spill_store.reader(file_path, session_id=execution.session.id)  # type: ignore[no-any-return]

    async def _read(self, file_path: str, offset: int, limit: int, execution: ToolExecution,
                    column: int = 1) -> list[ContentBlock]:
        fs = self._spilled(file_path, execution) or self.fs
        signal = execution.signal
        target = await fs.resolve(file_path, cwd=execution.cwd, signal=signal)
        info = await fs.stat(target, signal=signal)
        if info is None:
            if self.switches.record_absence:  # D8 (the reference never emits on a failure, §4.10)
                self.ctx.emit(FS_OBSERVED, target, None, execution)
            if not self.switches.lookalike_names:
                raise not_found("read", target.display_path)
            hint = await lookalike_hint(fs, target.display_path, signal=signal)  # D19
            raise with_hint(not_found("read", target.display_path), hint)
        if info.type != "file":
            err = not_regular_file("read", target.display_path)
            if info.type == "directory" and self.switches.read_directory_hint and "list" in self.ctx.tools.names():
                raise with_hint(err, directory_hint(target.display_path))  # L4
            raise err
        window = self._window(offset, limit, column)
        notes: tuple[str, ...] = ()
        if (target.display_path[-6:].lower() == ".ipynb" and self.switches.notebook_cells and fs is self.fs
                and is_notebook_path(target.display_path)):  # F1 (the slice: no call for any other file)
            limit_bytes = self.config.notebook_max_bytes
            if info.size is not None and info.size > limit_bytes:
                notes = (too_big_note(info.size, limit_bytes),)
            else:
                text = await fs.read_text(target, signal=signal)
                try:
                    blocks = await notebook_blocks(text, target.display_path, window,
                                                   admission=self.ctx.image_admission if self.ctx.has("image_admission") else None)
                except NotShownAsCells as shown_as_text:
                    result = window_whole(text, window, target.display_path)
                    self.ctx.emit(FS_OBSERVED, target, info.version, execution)
                    return [text_block(format_read_output(target.display_path, result, notes=(shown_as_text.note,)))]
                if self.seen is not None:  # D30: the notebook's text, read whole
                    self.seen.remember(execution.session, target.key, str(info.version), text)
                self.ctx.emit(FS_OBSERVED, target, info.version, execution)
                return blocks
        streamed = info.size is None or info.size >= self.config.read_stream_min_size
        result = None
        try:
            if column == 1:  # a provider windows whole lines only (D35: the tool skips into a line)
                result = await fs.read_window(target, window, info=info, streamed=streamed, signal=signal)
            if result is None:
                if streamed:
                    result = await build_window(fs.stream_text(target, signal=signal), window, target.display_path)
                else:
                    result = window_whole(await fs.read_text(target, signal=signal), window, target.display_path)
        except FsError as err:
            result = await self._legacy_window(fs, target, info, window, err, execution)
        # D29: the provider may know the version better (with the digest of the bytes read)
        version = Version(result.version) if result.version else info.version
        if self.seen is not None and column == 1 and fs is self.fs:  # D30: a whole file seen
            self._saw_window(target, version, result, execution)
        self.ctx.emit(FS_OBSERVED, target, version, execution)
        if result.encoding is not None:  # F7
            notes = (*notes, encoding_note(result.encoding))
        if notes:
            return [text_block(format_read_output(target.display_path, result, notes=notes))]
        return [text_block(format_read_output(target.display_path, result))]

    def _saw_window(self, target: Target, version: Version, result: Any, execution: ToolExecution) -> None:
        """D30: keep what the model saw of the file when no line of the window was cut (a cut
        line is longer than ``read_max_line_length``): the whole text when the window showed it
        all, else its lines, which add up with the other windows of that version."""
        texts = result.texts if result.texts is not None else [line.text for line in result.lines]
        if texts and max(map(len, texts)) > self.config.read_max_line_length:
            return
        last = not result.truncated_by_bytes and result.offset + len(texts) - 1 == result.total_lines
        if result.offset == 1 and last:
            self.seen.remember(execution.session, target.key, str(version), "\n".join(texts))  # type: ignore[union-attr]
        elif texts:
            self.seen.remember_lines(execution.session, target.key, str(version),  # type: ignore[union-attr]
                                     result.offset, texts, last=last)

    async def _legacy_window(self, fs: FileSystem, target: Target, info: Any, window: ReadWindow, err: FsError,
                             execution: ToolExecution) -> Any:
        """F7: the window of a file in one of the provider's legacy encodings, whose windowed or
        streamed read (UTF-8 only: the local provider windows bytes) refused it as not text —
        read whole (at most ``LEGACY_MAX_BYTES``) through ``read_text``, which decodes it.

        :raises FsError: ``err`` itself when it is another error, the provider lists no
            encoding or the file is bigger; what ``read_text`` raises
        """
        if (err.code != FsErrorCode.NOT_TEXT or not fs.text_encodings
                or info.size is None or info.size > LEGACY_MAX_BYTES):
            raise err
        text = await fs.read_text(target, signal=execution.signal)
        return window_whole(text, window, target.display_path)

    # -- write (§4.7) ----------------------------------------------------------------------
    async def write(self, args: dict[str, Any], execution: ToolExecution) -> ToolOutput:
        """Create or replace a file under the write intent the policy decides.

        ``meta`` carries the hunk diffs of an update; none when a side of the diff basis
        exceeds ``DIFF_META_MAX_CHARS``.
        """
        file_path: str = args["file_path"]
        content: str = args["content"]
        check_file_path(file_path)
        if self.switches.unicode_arguments:
            check_unicode("file_path", file_path)
            check_unicode("content", content)
        return await self._sandboxed(
            "write", args, execution, lambda: self._guarded(lambda: self._write(file_path, content, execution)))

    async def _write(self, file_path: str, content: str, execution: ToolExecution) -> ToolOutput:
        target = await self._resolve(file_path, execution)
        intent = await self.ctx.waterfall(FS_WRITE_INTENT, target, execution, default=lambda: None)
        fs = self._fs(execution)
        try:
            outcome = await fs.write_text(target, content, intent, signal=execution.signal)
        except FsError as err:
            shown = await with_changes(self.ctx, fs, target, err, execution, self.switches)  # D30
            if shown is err:
                raise
            raise shown from err
        if self.seen is not None:  # D30: the text the write left
            self.seen.remember(execution.session, target.key, str(outcome.version), outcome.after)
        self.ctx.emit(FS_OBSERVED, target, outcome.version, execution)
        diffs = bounded_diffs(file_path, outcome.before, outcome.after)
        word = "Updated file" if outcome.operation == "update" else "Created file"
        text = f"<path>{target.display_path}</path>\n<type>file</type>\n<content>\n{word}\n</content>"
        return ToolOutput(content=[text_block(text)], meta={"diffs": diffs} if diffs else None)

    # -- edit (§4.8) -----------------------------------------------------------------------
    async def edit(self, args: dict[str, Any], execution: ToolExecution) -> ToolOutput:
        """Literal replacement under the edit intent the policy decides.

        ``meta`` is always ``{"diffs": [...]}`` (§4.8); the list is empty when the provider
        returned no diff basis (the local provider's streamed edits of huge files) or a side
        exceeds ``DIFF_META_MAX_CHARS``.
        """
        file_path: str = args["file_path"]
        old_string: str = args["old_string"]
        new_string: str = args["new_string"]
        replace_all: bool = args.get("replace_all", False)
        check_file_path(file_path)
        if old_string == "":
            raise ToolInputError("old_string must be a non-empty string")
        if old_string == new_string or (
            self.switches.crlf_only_change_refused and differ_only_in_line_endings(old_string, new_string)
        ):
            raise ToolInputError("old_string and new_string must differ")
        if self.switches.unicode_arguments:
            check_unicode("file_path", file_path)
            check_unicode("new_string", new_string)
        request = EditRequest(old_string=old_string, new_string=new_string, replace_all=replace_all)
        return await self._sandboxed(
            "edit", args, execution, lambda: self._guarded(lambda: self._edit(file_path, request, execution)))

    async def _edit(self, file_path: str, request: EditRequest, execution: ToolExecution) -> ToolOutput:
        target = await self._resolve(file_path, execution)
        try:
            intent = await self.ctx.waterfall(FS_EDIT_INTENT, target, execution, default=lambda: None)
            outcome = await self._fs(execution).edit_text(target, request, intent, signal=execution.signal)
        except FsError as err:
            fs = self._fs(execution)
            fact = await what_is_wrong(fs, target, err, self.switches, signal=execution.signal)  # D26, D27
            if fact is err:
                fact = await with_changes(self.ctx, fs, target, err, execution, self.switches)  # D30
            if fact is err:
                raise
            raise fact from err
        if self.seen is not None and outcome.after is not None:  # D30: the text the edit left
            self.seen.remember(execution.session, target.key, str(outcome.version), outcome.after)
        self.ctx.emit(FS_OBSERVED, target, outcome.version, execution)
        diffs = bounded_diffs(file_path, outcome.before, outcome.after, changed=outcome.changed)
        if request.replace_all:
            text = f"The file {target.display_path} has been updated. All occurrences were successfully replaced."
        else:
            text = f"The file {target.display_path} has been updated successfully."
        return ToolOutput(content=[text_block(text)], meta={"diffs": diffs})
