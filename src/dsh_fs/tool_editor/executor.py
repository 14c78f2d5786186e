"""The executors of the two text-editor faces (docs/design/EDITING-FACES-DESIGN.md §1.2, §1.3, §3, §6.3).

``Editor(ctx, face=...)`` runs one ``view`` / ``create`` / ``str_replace`` / ``insert`` call
through the seam and the policy events, exactly as ``read`` / ``write`` / ``edit`` do:

* ``view`` of a file stats once, reads, and records the observation (``fs/observed``, like
  ``read``); a missing path records an absence in the default profile (D8); a directory is
  listed two levels deep through ``iter_dir`` (no observation), keeping only the rows the
  clip can show (L5).
* ``create`` — Anthropic: create or overwrite under ``fs/write-intent`` (the policy makes an
  unread existing file ``FS_NOT_OBSERVED``); reference: refused when the path exists, then a
  create-if-absent write.
* ``str_replace`` — ``edit_text`` with a unique match under ``fs/edit-intent`` (D1/D2), the
  face's own texts for "no match" and "several matches" (Anthropic: no stat on success, as
  ``edit``); the reference profile of
  ``str_replace_editor`` matches the raw text as the reference does and writes it back under a
  ``ReplaceIfVersion`` guard.
* ``insert`` — under ``fs/edit-intent``: read the text of the observed version
  (``FileSystem.read_text_at``: a file changed since is refused as the guarded write would
  refuse it), ``insert.insert_text``, then ``write_text`` under ``ReplaceIfVersion`` of that
  version (D4 keeps the BOM). On S3 that is the stat's GetObject and the PutObject alone.

Without a policy the guards are the version just stat'ed (the reference's ``intent ?? info``).
The default profile adds D9's remedies (stale, unobserved), D5's near-match hint to "no match",
and D11 (text arguments must be valid Unicode). Errors the reference raises plain stay plain
(``ToolInputError``); the rest are ``FsError`` with their codes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from ..core.context import Context
from ..core.errors import ToolInputError
from ..core.jsonvalue import js_number_str
from ..core.session import ToolExecution
from ..core.tools import ToolOutput, text_block
from ..fs.errors import FsError, FsErrorCode, by_path_rules, gone, not_regular_file, stale
from ..fs.events import FS_EDIT_INTENT, FS_OBSERVED, FS_WRITE_INTENT
from ..fs.filesystem import FileSystem
from ..fs.paths import is_blank
from ..fs.provider_rules import TextRules
from ..fs.text import normalize
from ..tool_common.switches import ToolSwitches
from ..fs.types import CreateIfAbsent, DirEntry, EditIntent, EditRequest, Info, ReplaceIfVersion, Target, Version
from ..fs_sandbox.tools import call_fs, map_denial
from ..tool_fs.diff import bounded_diffs
from ..tool_fs.listing import held as listing_held
from ..tool_fs.listing import scan as listing_scan
from ..tool_fs.shared import check_unicode, image_hint, near_match_hint, with_remedy
from ..tool_fs.stale_changes import saw, with_changes_at
from . import texts as t
from .insert import content_line_count, insert_text, reference_line_count
from .lines import LineCollector
from .replace import occurrence_lines, occurrences, replace_once
from .undo import UNDO_MAX_CHARS, UNDO_TOOL, change_to_undo, undone_listing
from .view import LISTING_DEPTH, LISTING_MAX_CHARS, ClippedRows, ViewRangeError, listed, render_numbered
from .view import render_reference_file, requested_range, select_range

__all__ = ("Editor", "Face")

Face = Literal["anthropic", "reference"]
"""``anthropic``: ``str_replace_based_edit_tool``; ``reference``: ``str_replace_editor``"""

_TEXT_ARGS = ("path", "file_text", "old_str", "new_str", "insert_text")

_MAYBE_MISSING = frozenset({FsErrorCode.NOT_OBSERVED, FsErrorCode.NOT_FOUND, FsErrorCode.STALE_VERSION,
                            FsErrorCode.NOT_REGULAR_FILE})
"""refusals of an edit that may mean the path is missing or not a file (the face then says so)"""


INSERT_MAX_SIZE = 16 * 1024 * 1024
"""E24 (both profiles): the largest file (bytes) ``insert`` changes (it works on the whole text
split into lines); a bigger one is refused before it is read, naming the limit"""

VIEW_STREAM_MIN_SIZE = 1024 * 1024
"""files of at least this many bytes are viewed from the provider's text stream, holding only
the lines shown (smaller ones are read whole; the view is the same)"""


def _clamped(view_range: Any, count: int) -> Any:
    """E22: ``view_range`` with a second element past the last line brought to ``count`` (the
    same object when nothing changes, or when the range is malformed or its first line is not
    in the file: ``select_range`` then refuses it)."""
    if (isinstance(view_range, (list, tuple)) and len(view_range) == 2
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in view_range)
            and 1 <= view_range[0] <= count < view_range[1]):
        return [view_range[0], count]
    return view_range


class Editor:
    """One face's executor bound to a context.

    :param face: which tool this is (texts and line models differ, EDITING-FACES-DESIGN §3)
    :param max_chars: Anthropic's ``max_characters`` (``None``: whole files) or the
        reference's ``maxOutputChars`` (UTF-16 units)
    """

    def __init__(self, ctx: Context, *, face: Face, max_chars: int | None) -> None:
        self.ctx = ctx
        self.face = face
        self.anthropic = face == "anthropic"
        self.max_chars = max_chars
        self.switches = ToolSwitches.of(ctx.profile)
        self.keep_line_endings = TextRules.for_profile(ctx.profile).keep_line_endings  # D2 for insert

    @property
    def fs(self) -> FileSystem:
        return self.ctx.fs  # type: ignore[no-any-return]

    def _fs(self, execution: ToolExecution) -> FileSystem:
        """The provider of this call: its sandbox view (``execution.fs``), else ``ctx.fs``."""
        return execution.fs or self.fs  # type: ignore[no-any-return]

    # -- dispatch ----------------------------------------------------------------------------
    async def execute(self, args: dict[str, Any], execution: ToolExecution) -> ToolOutput:
        """Run one call (``args`` passed the face's schema)."""
        path: str = args["path"]
        if is_blank(path):
            raise ToolInputError(t.REF_PATH_BLANK)
        if not self.anthropic and not path.startswith("/"):
            raise ToolInputError(t.REF_ABSOLUTE_PATH.format(path=path))
        if self.switches.unicode_arguments:
            for name in _TEXT_ARGS:
                if isinstance(args.get(name), str):
                    check_unicode(name, args[name])
        command: str = args["command"]
        run: Callable[[dict[str, Any], ToolExecution], Awaitable[str | ToolOutput]] = {
            "view": self._view,
            "create": self._create,
            "str_replace": self._str_replace,
            "insert": self._insert,
            "undo_edit": self._undo,  # H10: only in the schema of a context with a history
        }[command]
        if command != "view":  # the standing sandbox policy; this face has no escalation fields
            await call_fs(self.ctx, self.face, args, execution, escalates=False,
                          step_name=t.ANTHROPIC_NAME if self.anthropic else t.REF_NAME)
        try:
            done = await run(args, execution)
        except FsError as err:
            shown = await with_changes_at(self.ctx, self._fs(execution), path, err, execution, self.switches)  # D30
            projected = map_denial(with_remedy(shown, self.switches), self._fs(execution), hint=False)
            if self.switches.image_view_hint and command == "view":  # I5: Anthropic documents view for text
                projected = image_hint(projected, path, offered=self.ctx.tools.get("read_image") is not None)
            if projected is err:
                raise
            raise projected from err
        return done if isinstance(done, ToolOutput) else ToolOutput(content=[text_block(done)])

    # -- shared steps ------------------------------------------------------------------------
    async def _resolve(self, path: str, execution: ToolExecution) -> Target:
        return await self._fs(execution).resolve(path, cwd=execution.cwd, signal=execution.signal)

    def _not_found(self, target: Target) -> FsError:
        if self.anthropic:
            return FsError(t.ANTHROPIC_FILE_NOT_FOUND, FsErrorCode.NOT_FOUND)
        return FsError(t.REF_NOT_FOUND.format(path=target.display_path), FsErrorCode.NOT_FOUND)

    async def _existing(self, target: Target, command: str, execution: ToolExecution) -> Info:
        """The reference's ``statExisting``: the file to change, or the face's error."""
        info = await self._fs(execution).stat(target, signal=execution.signal)
        if info is None:
            if self.switches.record_absence:
                self.ctx.emit(FS_OBSERVED, target, None, execution)  # an absence, as read records it (D8)
            raise self._not_found(target)
        if info.type == "directory":
            raise FsError(t.DIRECTORY_ONLY_VIEW.format(path=target.display_path), FsErrorCode.NOT_REGULAR_FILE)
        if info.type != "file":
            if command == "insert":
                raise FsError(f'cannot insert into "{target.display_path}": not a regular file',
                              FsErrorCode.NOT_REGULAR_FILE)
            raise not_regular_file("edit", target.display_path)
        return info

    async def _edit_guard(self, target: Target, info: Info | None, execution: ToolExecution) -> Version | None:
        """The version the change is guarded by: the observed one (policy) or the stat's."""
        intent: EditIntent | None = await self.ctx.waterfall(FS_EDIT_INTENT, target, execution, default=lambda: None)
        if intent is not None:
            return intent.version
        return info.version if info is not None else None

    def _denied(self, err: FsError) -> FsError:
        """Anthropic's documented text for a write refused by the OS (the tool docs); a refusal
        by the deployment's path rules keeps its own text, which says why (P1)."""
        if self.anthropic and err.code == FsErrorCode.PERMISSION_DENIED and "permission denied" in err.message \
                and not by_path_rules(err):
            return FsError(t.ANTHROPIC_PERMISSION_DENIED, FsErrorCode.PERMISSION_DENIED, cause=err)
        return err

    def _written(self, args: dict[str, Any], text: str, before: str | None, after: str | None,
                 changed: tuple[int, int] | None = None) -> ToolOutput:
        diffs = bounded_diffs(args["path"], before, after, changed=changed)
        return ToolOutput(content=[text_block(text)], meta={"diffs": diffs})

    @staticmethod
    def _required(args: dict[str, Any], name: str, command: str) -> Any:
        if name not in args:
            raise ToolInputError(t.REF_REQUIRED_PARAMETER.format(name=name, command=command))
        return args[name]

    # -- view ----------------------------------------------------------------------------------
    async def _view(self, args: dict[str, Any], execution: ToolExecution) -> str:
        view_range = args.get("view_range")
        target = await self._resolve(args["path"], execution)
        info = await self._fs(execution).stat(target, signal=execution.signal)
        if info is None:
            if self.switches.record_absence:
                self.ctx.emit(FS_OBSERVED, target, None, execution)
            raise self._not_found(target)
        if info.type == "directory":
            if view_range is not None:
                raise ToolInputError(t.REF_VIEW_RANGE_ON_DIRECTORY)
            return await self._listing(target, execution)
        if info.type != "file":
            raise FsError(t.REF_NOT_VIEWABLE.format(path=target.display_path), FsErrorCode.NOT_REGULAR_FILE)
        capped = self.anthropic and self.max_chars is None and self.switches.capped_file_view
        clip = LISTING_MAX_CHARS if capped else self.max_chars if self.anthropic else (self.max_chars or 0)
        want_first, want_last = requested_range(view_range)
        collector = LineCollector(want_first, want_last, crlf=self.anthropic or self.switches.normalized_view,  # E8
                                  model="content" if self.anthropic or self.switches.content_lines else "split",  # E21
                                  keep_chars=clip)
        if info.size is None or info.size >= VIEW_STREAM_MIN_SIZE:  # bounded memory: only the shown lines
            async for chunk in self._fs(execution).stream_text(target, signal=execution.signal):
                collector.feed(chunk)
        else:
            whole = await self._fs(execution).read_text(target, signal=execution.signal)
            collector.feed(whole)
            if view_range is None and (not clip or len(whole) <= clip):  # D30: the whole file seen
                saw(self.ctx, target, info.version, whole, execution)
        kept, count = collector.finish()
        self.ctx.emit(FS_OBSERVED, target, info.version, execution)
        note = ""
        if view_range is not None and self.switches.clamp_view_range:  # E22
            clamped = _clamped(view_range, count)
            if clamped is not view_range:
                view_range, note = clamped, t.VIEW_RANGE_CLAMPED.format(count=count) + "\n"
        try:
            first, last = select_range(view_range, count)
        except ViewRangeError as err:
            raise ToolInputError(str(err)) from None
        lines = kept[first - want_first : last - want_first + 1]
        if self.anthropic:
            shown = render_numbered(lines, first, clip)
            if capped and shown.endswith(t.TRUNCATED_MESSAGE):  # E20: say how to go on
                end = first + shown.count("\n") - 1
                shown += "\n" + t.CONTINUE_WITH_VIEW_RANGE.format(first=first, last=end, next=end + 1)
            return note + shown
        given = int(view_range[1]) if view_range is not None else last  # 2.0 is 2 (select_range)
        return note + render_reference_file(target.display_path, lines, first, given, view_range is not None,
                                            clip, count)

    async def _listing(self, target: Target, execution: ToolExecution) -> str:
        """The two-level listing: each directory read in ``iter_dir`` batches, only the rows the
        clip can still show kept (``ClippedRows``; L5), a subdirectory descended into only while
        its own row is shown, under the context's listing places (``tool_fs.listing``)."""
        clip = self.max_chars
        bounded = self.switches.bounded_directory_view
        if clip is None and bounded:
            clip = LISTING_MAX_CHARS  # E18: a huge tree never floods the context
        rows: ClippedRows[Target] = ClippedRows(target.display_path, clip, utf16_order=not bounded)

        def take(depth: int) -> Callable[[list[DirEntry]], None]:
            def add(batch: list[DirEntry]) -> None:
                for entry in batch:
                    if listed(entry.name):
                        kind = "d" if entry.type == "directory" else "f" if entry.type == "file" else "?"
                        below = entry.type == "directory" and depth < LISTING_DEPTH
                        rows.add(kind, entry.target.display_path, entry.target if below else None)
            return add

        fs = self._fs(execution)
        async with listing_held(self.ctx, execution):
            await listing_scan(fs, target, take(1), signal=execution.signal)
            for path, directory in rows.payloads():  # LISTING_DEPTH is 2: one level below
                if rows.kept(path):
                    await listing_scan(fs, directory, take(2), signal=execution.signal)
        return rows.render()

    # -- create --------------------------------------------------------------------------------
    async def _create(self, args: dict[str, Any], execution: ToolExecution) -> ToolOutput:
        content: str = self._required(args, "file_text", "create")
        if not isinstance(content, str):
            raise ToolInputError(t.REF_REQUIRED_PARAMETER.format(name="file_text", command="create"))
        target = await self._resolve(args["path"], execution)
        if self.anthropic:
            intent = await self.ctx.waterfall(FS_WRITE_INTENT, target, execution, default=lambda: None)
        else:
            if await self._fs(execution).stat(target, signal=execution.signal) is not None:
                raise ToolInputError(t.REF_EXISTS.format(path=target.display_path))
            intent = await self.ctx.waterfall(FS_WRITE_INTENT, target, execution, default=CreateIfAbsent)
            intent = intent if intent is not None else CreateIfAbsent()
        try:
            outcome = await self._fs(execution).write_text(target, content, intent, signal=execution.signal)
        except FsError as err:
            raise self._denied(err) from err
        saw(self.ctx, target, outcome.version, outcome.after, execution)  # D30
        self.ctx.emit(FS_OBSERVED, target, outcome.version, execution)
        done = (t.ANTHROPIC_CREATED if self.anthropic else t.REF_CREATED).format(path=target.display_path)
        return self._written(args, done, outcome.before if outcome.before is not None else "", outcome.after)

    # -- str_replace ---------------------------------------------------------------------------
    async def _str_replace(self, args: dict[str, Any], execution: ToolExecution) -> ToolOutput:
        if self.anthropic:
            return await self._anthropic_replace(args, execution)
        # the reference's order: intent, then the arguments, then the stat
        target = await self._resolve(args["path"], execution)
        intent: EditIntent | None = await self.ctx.waterfall(FS_EDIT_INTENT, target, execution, default=lambda: None)
        old = self._old_str(args)
        info = await self._existing(target, "str_replace", execution)
        guard = intent.version if intent is not None else info.version
        new: str = args.get("new_str", "")
        if not self.switches.str_replace_is_edit:
            return await self._reference_replace(args, target, old, new, guard, execution)
        try:
            outcome = await self._fs(execution).edit_text(
                target, EditRequest(old_string=old, new_string=new), EditIntent(guard), signal=execution.signal)
        except FsError as err:
            raise (await self._match_failure(err, target, old, execution)) from err
        saw(self.ctx, target, outcome.version, outcome.after, execution)  # D30
        self.ctx.emit(FS_OBSERVED, target, outcome.version, execution)
        return self._written(args, t.REF_EDITED.format(path=target.display_path), outcome.before, outcome.after,
                             outcome.changed)

    async def _anthropic_replace(self, args: dict[str, Any], execution: ToolExecution) -> ToolOutput:
        """``edit`` with a unique match, at ``edit``'s cost: no stat unless a failure needs one
        to tell "File not found" or a directory from a guard's refusal."""
        old = self._old_str(args)
        target = await self._resolve(args["path"], execution)
        request = EditRequest(old_string=old, new_string=args.get("new_str", ""))
        try:
            intent: EditIntent | None = await self.ctx.waterfall(FS_EDIT_INTENT, target, execution,
                                                                 default=lambda: None)
            outcome = await self._fs(execution).edit_text(target, request, intent, signal=execution.signal)
        except FsError as err:
            if err.code in _MAYBE_MISSING:
                await self._existing(target, "str_replace", execution)  # raises the face's text if so
            raise (await self._match_failure(err, target, old, execution)) from err
        saw(self.ctx, target, outcome.version, outcome.after, execution)  # D30
        self.ctx.emit(FS_OBSERVED, target, outcome.version, execution)
        return self._written(args, t.ANTHROPIC_REPLACED, outcome.before, outcome.after, outcome.changed)

    def _old_str(self, args: dict[str, Any]) -> str:
        old: str = self._required(args, "old_str", "str_replace")
        if old == "":
            raise ToolInputError(t.REF_EMPTY_PARAMETER.format(name="old_str", command="str_replace"))
        new = args.get("new_str", "")
        if self.switches.refuse_no_op_replace and isinstance(new, str) and normalize(new) == normalize(old):
            raise ToolInputError(t.NO_OP_REPLACE)  # E19 (line endings alone change nothing either: D7)
        return old

    async def _match_failure(self, err: FsError, target: Target, old: str, execution: ToolExecution) -> FsError:
        """The face's text for an ``edit_text`` that found ``old_str`` zero or several times."""
        if err.code == FsErrorCode.EDIT_NOT_FOUND:
            text = t.ANTHROPIC_NO_MATCH if self.anthropic else t.REF_NO_MATCH.format(old=old, path=target.display_path)
            if self.switches.near_match_hints and err.searched_text is not None and err.needle:
                hint = near_match_hint(err.searched_text, err.needle)
                if hint is not None:
                    text += "\n" + hint
            return FsError(text, FsErrorCode.EDIT_NOT_FOUND, cause=err)
        if err.code == FsErrorCode.AMBIGUOUS_EDIT:
            if self.anthropic:
                return FsError(t.ANTHROPIC_MULTIPLE_MATCHES.format(count=err.count), FsErrorCode.AMBIGUOUS_EDIT, cause=err)
            text = normalize(await self._fs(execution).read_text(target, signal=execution.signal))
            lines = occurrence_lines(text, occurrences(text, normalize(old)))
            return FsError(t.REF_MULTIPLE.format(old=old, lines=", ".join(map(str, lines))),
                           FsErrorCode.AMBIGUOUS_EDIT, cause=err)
        return self._denied(err)

    async def _reference_replace(self, args: dict[str, Any], target: Target, old: str, new: str,
                                 guard: Version | None, execution: ToolExecution) -> ToolOutput:
        """The reference profile of ``str_replace_editor``: raw matching, then a guarded write."""
        text = await self._fs(execution).read_text(target, signal=execution.signal)
        found = occurrences(text, old)
        if not found:
            raise FsError(t.REF_NO_MATCH.format(old=old, path=target.display_path), FsErrorCode.EDIT_NOT_FOUND)
        if len(found) > 1:
            lines = ", ".join(map(str, occurrence_lines(text, found)))
            raise FsError(t.REF_MULTIPLE.format(old=old, lines=lines), FsErrorCode.AMBIGUOUS_EDIT)
        assert guard is not None
        outcome = await self._fs(execution).write_text(
            target, replace_once(text, found[0], old, new), ReplaceIfVersion(guard), signal=execution.signal)
        self.ctx.emit(FS_OBSERVED, target, outcome.version, execution)
        return self._written(args, t.REF_EDITED.format(path=target.display_path), outcome.before, outcome.after)

    # -- undo_edit (H10) ---------------------------------------------------------------------
    async def _undo(self, args: dict[str, Any], execution: ToolExecution) -> ToolOutput:
        """OpenHands' ``undo_edit`` on the history (``undo``): the last change this owner made to
        the file, taken back unless someone else changed the file since."""
        from ..history import RewindError, owner_of
        from ..history.rewind import rewind_owner

        fs = self._fs(execution)
        target = await self._resolve(args["path"], execution)
        none = ToolInputError(t.UNDO_NO_HISTORY.format(path=target.display_path))  # OpenHands' plain ToolError
        if execution.session is None or not hasattr(fs, "store"):
            raise none  # no owner, or no history: nothing was recorded
        owner = owner_of(execution.session)
        steps = (await fs.store.history(owner)).steps
        step = change_to_undo(steps, target.key)
        if step is None:
            raise none
        try:
            result = await rewind_owner(fs, owner, to=step.number - 1, only=(target.key,), tool=UNDO_TOOL,
                                        call_id=execution.call_id, signal=execution.signal)
        except RewindError as err:  # its steps were dropped meanwhile
            raise none from err
        refused = next((f for f in result.refusals), None)
        if refused is not None:
            raise ToolInputError(t.UNDO_REFUSED.format(path=target.display_path, reason=refused.reason))
        if result.error is not None:  # the write was refused (a sandbox, a race): the provider's error
            raise result.failure if result.failure is not None else FsError(result.error, FsErrorCode.IO_ERROR)
        mine = next((f for f in result.files if f.path == target.display_path), None)
        version = mine.version if mine is not None else None
        if version is None:  # removed: the change created it
            if self.switches.record_absence:
                self.ctx.emit(FS_OBSERVED, target, None, execution)
            return ToolOutput(content=[text_block(undone_listing(target.display_path, None))])
        self.ctx.emit(FS_OBSERVED, target, Version(version), execution)
        text = await fs.read_text_at(target, Version(version), signal=execution.signal)
        shown = undone_listing(target.display_path, normalize(text) if text is not None else "",
                               max_chars=min(UNDO_MAX_CHARS, self.max_chars or UNDO_MAX_CHARS))
        return ToolOutput(content=[text_block(shown)])

    # -- insert --------------------------------------------------------------------------------
    async def _insert(self, args: dict[str, Any], execution: ToolExecution) -> ToolOutput:
        line: int = self._required(args, "insert_line", "insert")
        if self.anthropic:
            # insert_text is the documented name; older docs and wrappers send new_str (E13)
            value = args["insert_text"] if "insert_text" in args else args.get("new_str")
            if value is None:
                raise ToolInputError(t.REF_REQUIRED_PARAMETER.format(name="insert_text", command="insert"))
        else:
            value = self._required(args, "new_str", "insert")
        number = js_number_str(line)  # as the reference prints it (1e+300, not 301 digits)
        line = int(line)  # 2.0 is 2 (the schema's integer)
        target = await self._resolve(args["path"], execution)
        if self.anthropic:
            info = await self._existing(target, "insert", execution)
            guard = await self._edit_guard(target, info, execution)
        else:
            intent: EditIntent | None = await self.ctx.waterfall(FS_EDIT_INTENT, target, execution,
                                                                 default=lambda: None)
            info = await self._existing(target, "insert", execution)
            guard = intent.version if intent is not None else info.version
        if info.size is not None and info.size > INSERT_MAX_SIZE:  # E24: never a multiple of a huge file in memory
            raise FsError(t.TOO_BIG_TO_INSERT.format(path=target.display_path, size=info.size, limit=INSERT_MAX_SIZE),
                          FsErrorCode.IO_ERROR)
        assert guard is not None
        raw = await self._fs(execution).read_text_at(target, guard, info=info, signal=execution.signal)
        if raw is None:  # changed since the guard's version: what the guarded write would say
            now = await self._fs(execution).stat(target, signal=execution.signal)
            raise gone(target.display_path) if now is None else stale("write", target.display_path)
        whole_lines = self.anthropic or self.switches.content_lines  # E21
        count = content_line_count(raw) if whole_lines else reference_line_count(raw)
        if not 0 <= line <= count:
            template = t.ANTHROPIC_INSERT_RANGE if self.anthropic else t.REF_INSERT_RANGE
            raise ToolInputError(template.format(line=number, count=count))
        after = insert_text(raw, line, value, whole_lines=whole_lines, keep_bytes=self.keep_line_endings)
        try:
            outcome = await self._fs(execution).write_text(
                target, after, ReplaceIfVersion(guard), signal=execution.signal)
        except FsError as err:
            raise self._denied(err) from err
        saw(self.ctx, target, outcome.version, outcome.after, execution)  # D30
        self.ctx.emit(FS_OBSERVED, target, outcome.version, execution)
        done = (t.ANTHROPIC_INSERTED if self.anthropic else t.REF_EDITED).format(path=target.display_path)
        return self._written(args, done, outcome.before, outcome.after)
