"""The seam's values as JSON, for the channel protocol: targets, metadata, intents, outcomes,
read windows and errors, each to a JSON value and back (both sides use it). Pure.

Decoding checks shapes (the near side reads what a far side in a sandbox answered): a value of
the wrong shape raises ``ProtocolError``, never a crash elsewhere. Compact keys keep small
messages small; a value's keys are listed by its encoder.
"""

from __future__ import annotations

from typing import Any

from ..fs.errors import FsError, FsErrorCode
from ..fs.types import (
    CreateIfAbsent,
    DeleteIntent,
    DeleteOutcome,
    DirEntry,
    EditIntent,
    EditOutcome,
    EditRequest,
    Info,
    PathInfo,
    RenameIntent,
    RenameOutcome,
    ReplaceIfVersion,
    Target,
    TargetKey,
    Version,
    WalkEntry,
    WriteIntent,
    WriteOutcome,
)
from ..fs.search_host import FollowLinks, HostSearch
from ..fs.window import ReadWindow, WindowResult
from .wire import ProtocolError

__all__ = (
    "RUN_FIELDS",
    "decode_dir_entries",
    "decode_edit",
    "decode_edit_outcome",
    "decode_error",
    "decode_host_search",
    "decode_info",
    "decode_path_info",
    "decode_run",
    "decode_target",
    "decode_version",
    "decode_walk_entries",
    "decode_window",
    "decode_window_result",
    "decode_write_intent",
    "decode_write_outcome",
    "encode_dir_entries",
    "encode_edit",
    "encode_edit_outcome",
    "encode_error",
    "encode_host_search",
    "encode_info",
    "encode_path_info",
    "encode_target",
    "encode_walk_entries",
    "encode_window",
    "encode_window_result",
    "encode_write_intent",
    "encode_write_outcome",
    "integer",
    "optional_integer",
    "optional_string",
    "string",
)

_FILE_TYPES = ("file", "directory", "other")
_PATH_TYPES = ("file", "directory", "symlink", "other")


# -- shape checks ---------------------------------------------------------------------------

def string(value: Any, what: str) -> str:
    """``value`` when it is a string, else ``ProtocolError`` naming ``what``."""
    if not isinstance(value, str):
        raise ProtocolError(f"{what} is not a string")
    return value


def optional_string(value: Any, what: str) -> str | None:
    """``value`` when it is a string or ``None``."""
    return None if value is None else string(value, what)


def integer(value: Any, what: str) -> int:
    """``value`` when it is an integer (not a bool), else ``ProtocolError``."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise ProtocolError(f"{what} is not an integer")
    return value


def optional_integer(value: Any, what: str) -> int | None:
    """``value`` when it is an integer or ``None``."""
    return None if value is None else integer(value, what)


def _mapping(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ProtocolError(f"{what} is not an object")
    return value


def _choice(value: Any, choices: tuple[str, ...], what: str) -> Any:
    if value not in choices:
        raise ProtocolError(f"{what} is not one of {', '.join(choices)}")
    return value


def decode_version(value: Any) -> Version:
    """A version token (a string)."""
    return Version(string(value, "a version"))


# -- targets and metadata -------------------------------------------------------------------

def encode_target(target: Target) -> list[str]:
    """``[key, display_path]``"""
    return [target.key, target.display_path]


def decode_target(value: Any) -> Target:
    if not isinstance(value, list) or len(value) != 2:
        raise ProtocolError("a target is not a [key, display path] pair")
    return Target(key=TargetKey(string(value[0], "a target key")), display_path=string(value[1], "a display path"))


def encode_info(info: Info | None) -> list[Any] | None:
    """``[version, type, size]`` or ``None``"""
    return None if info is None else [info.version, info.type, info.size]


def decode_info(value: Any) -> Info | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 3:
        raise ProtocolError("an info is not a [version, type, size] triple")
    return Info(version=decode_version(value[0]), type=_choice(value[1], _FILE_TYPES, "a file type"),
                size=optional_integer(value[2], "a size"))


def encode_path_info(info: PathInfo | None) -> list[Any] | None:
    """``[version, type, size]`` or ``None``"""
    return None if info is None else [info.version, info.type, info.size]


def decode_path_info(value: Any) -> PathInfo | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 3:
        raise ProtocolError("a path info is not a [version, type, size] triple")
    return PathInfo(version=decode_version(value[0]), type=_choice(value[1], _PATH_TYPES, "a path type"),
                    size=optional_integer(value[2], "a size"))


def encode_dir_entries(entries: list[DirEntry]) -> list[list[Any]]:
    """each ``[name, type, key, display_path, version, size]``"""
    return [[e.name, e.type, e.target.key, e.target.display_path, e.version, e.size] for e in entries]


def decode_dir_entries(value: Any) -> list[DirEntry]:
    if not isinstance(value, list):
        raise ProtocolError("a listing is not a list")
    out = []
    for item in value:
        if not isinstance(item, list) or len(item) != 6:
            raise ProtocolError("a listing entry is not a list of six")
        name, kind, key, display, version, size = item
        out.append(DirEntry(
            name=string(name, "an entry name"), type=_choice(kind, _FILE_TYPES, "an entry type"),
            target=Target(key=TargetKey(string(key, "a target key")), display_path=string(display, "a display path")),
            version=None if version is None else decode_version(version), size=optional_integer(size, "a size"),
        ))
    return out


def encode_walk_entries(entries: list[WalkEntry]) -> list[list[Any]]:
    """each ``[rel, type, key, display_path, size, mtime_ns]``"""
    return [[e.rel, e.type, e.target.key, e.target.display_path, e.size, e.mtime_ns] for e in entries]


def decode_walk_entries(value: Any) -> list[WalkEntry]:
    if not isinstance(value, list):
        raise ProtocolError("a walk batch is not a list")
    out = []
    for item in value:
        if not isinstance(item, list) or len(item) != 6:
            raise ProtocolError("a walk entry is not a list of six")
        rel, kind, key, display, size, mtime = item
        out.append(WalkEntry(
            rel=string(rel, "a walk path"), type=_choice(kind, ("file", "directory"), "a walk entry type"),
            target=Target(key=TargetKey(string(key, "a target key")), display_path=string(display, "a display path")),
            size=optional_integer(size, "a size"), mtime_ns=optional_integer(mtime, "a modification time"),
        ))
    return out


# -- intents and outcomes -------------------------------------------------------------------

def encode_write_intent(intent: WriteIntent | None) -> str | list[str] | None:
    """``None`` (unguarded), ``"c"`` (create if absent) or ``["v", version]``"""
    if intent is None:
        return None
    if isinstance(intent, CreateIfAbsent):
        return "c"
    return ["v", intent.version]


def decode_write_intent(value: Any) -> WriteIntent | None:
    if value is None:
        return None
    if value == "c":
        return CreateIfAbsent()
    if isinstance(value, list) and len(value) == 2 and value[0] == "v":
        return ReplaceIfVersion(decode_version(value[1]))
    raise ProtocolError("a write intent is not None, \"c\" or [\"v\", version]")


def guard_version(intent: EditIntent | DeleteIntent | RenameIntent | None) -> str | None:
    """The version of an edit, delete or rename guard, or ``None`` (unguarded)."""
    return None if intent is None else intent.version


def encode_edit(edit: EditRequest) -> list[Any]:
    """``[old_string, new_string, replace_all]``"""
    return [edit.old_string, edit.new_string, edit.replace_all]


def decode_edit(value: Any) -> EditRequest:
    if not isinstance(value, list) or len(value) != 3 or not isinstance(value[2], bool):
        raise ProtocolError("an edit is not [old, new, replace_all]")
    return EditRequest(old_string=string(value[0], "old_string"), new_string=string(value[1], "new_string"),
                       replace_all=value[2])


def encode_write_outcome(outcome: WriteOutcome) -> list[Any]:
    """``[operation, version, before, after]``"""
    return [outcome.operation, outcome.version, outcome.before, outcome.after]


def decode_write_outcome(value: Any) -> WriteOutcome:
    if not isinstance(value, list) or len(value) != 4:
        raise ProtocolError("a write outcome is not a list of four")
    return WriteOutcome(operation=_choice(value[0], ("create", "update"), "a write operation"),
                        version=decode_version(value[1]), before=optional_string(value[2], "before"),
                        after=string(value[3], "after"))


def encode_edit_outcome(outcome: EditOutcome) -> list[Any]:
    """``[version, before, after, changed]`` (``changed``: ``[start, end]`` or ``None``)"""
    changed = list(outcome.changed) if outcome.changed is not None else None
    return [outcome.version, outcome.before, outcome.after, changed]


def decode_edit_outcome(value: Any) -> EditOutcome:
    if not isinstance(value, list) or len(value) != 4:
        raise ProtocolError("an edit outcome is not a list of four")
    changed = value[3]
    if changed is not None:
        if not isinstance(changed, list) or len(changed) != 2:
            raise ProtocolError("an edit's changed span is not [start, end]")
        changed = (integer(changed[0], "a span start"), integer(changed[1], "a span end"))
    return EditOutcome(version=decode_version(value[0]), before=optional_string(value[1], "before"),
                       after=optional_string(value[2], "after"), changed=changed)


def decode_delete_outcome(value: Any) -> DeleteOutcome:
    return DeleteOutcome(version=decode_version(value))


def decode_rename_outcome(value: Any) -> RenameOutcome:
    return RenameOutcome(version=decode_version(value))


# -- read windows ---------------------------------------------------------------------------

def encode_window(window: ReadWindow) -> list[Any]:
    """``[offset, limit, max_line_length, max_bytes, always_progress, exact_truncation]``"""
    return [window.offset, window.limit, window.max_line_length, window.max_bytes, window.always_progress,
            window.exact_truncation]


def decode_window(value: Any) -> ReadWindow:
    if not isinstance(value, list) or len(value) != 6 or not all(isinstance(v, bool) for v in value[4:]):
        raise ProtocolError("a read window is not a list of six")
    return ReadWindow(offset=integer(value[0], "an offset"), limit=integer(value[1], "a limit"),
                      max_line_length=integer(value[2], "a line length"), max_bytes=integer(value[3], "a byte cap"),
                      always_progress=value[4], exact_truncation=value[5])


def encode_window_result(result: WindowResult | None) -> list[Any] | None:
    """``[offset, texts, total_lines, truncated_by_bytes]`` (line numbers follow ``offset``)"""
    if result is None:
        return None
    texts = result.texts if result.texts is not None else [line.text for line in result.lines]
    return [result.offset, texts, result.total_lines, result.truncated_by_bytes]


def decode_window_result(value: Any) -> WindowResult | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 4 or not isinstance(value[1], list) \
            or not isinstance(value[3], bool):
        raise ProtocolError("a window result is not a list of four")
    result = WindowResult(offset=integer(value[0], "an offset"), total_lines=integer(value[2], "a line count"),
                          truncated_by_bytes=value[3])
    result._extend([string(text, "a line") for text in value[1]])
    return result


# -- errors ---------------------------------------------------------------------------------

_PLAIN = {"ValueError": ValueError, "TypeError": TypeError, "NotImplementedError": NotImplementedError}
"""exceptions other than ``FsError`` that keep their type across the channel (a provider's
documented refusals); any other becomes ``RuntimeError``"""


def encode_error(exc: BaseException) -> dict[str, Any]:
    """``{"c": code, "m": message, …}`` for an ``FsError`` (its hint fields ``st``, ``n``,
    ``k``, ``r`` when set); ``{"x": "OSError", "m", "en": errno, "se": strerror}`` for an OS
    error; ``{"x": type name, "m": message}`` for any other exception."""
    if isinstance(exc, FsError):
        out: dict[str, Any] = {"c": exc.code, "m": exc.message}
        for key, value in (("st", exc.searched_text), ("n", exc.needle), ("k", exc.count), ("r", exc.replacement)):
            if value is not None:
                out[key] = value
        return out
    if isinstance(exc, OSError) and exc.errno is not None:
        return {"x": "OSError", "m": str(exc), "en": exc.errno, "se": exc.strerror or ""}
    return {"x": type(exc).__name__, "m": str(exc)}


def decode_error(value: Any) -> Exception:
    """The exception ``encode_error`` described (an ``FsError`` with its code, message and hint
    fields; ``ValueError``/``TypeError``/``NotImplementedError``; else ``RuntimeError`` naming
    the far side's type)."""
    found = _mapping(value, "an error")
    message = string(found.get("m"), "an error message")
    code = found.get("c")
    if code is None:
        kind = string(found.get("x"), "an error type")
        if kind == "OSError" and "en" in found:
            return OSError(integer(found["en"], "an errno"), string(found.get("se"), "a reason"))
        known = _PLAIN.get(kind)
        return known(message) if known is not None else RuntimeError(f"{kind} on the far side: {message}")
    try:
        fs_code = FsErrorCode(code)
    except ValueError:
        raise ProtocolError("an error code is not an FsError code") from None
    return FsError(message, fs_code, searched_text=optional_string(found.get("st"), "searched text"),
                   needle=optional_string(found.get("n"), "a needle"),
                   count=optional_integer(found.get("k"), "a count"),
                   replacement=optional_string(found.get("r"), "a replacement"))


# -- search requests (``fs.search_host``) -------------------------------------------------------

_RESULTS = ("paths", "matches", "lines", "none")


def encode_host_search(request: HostSearch) -> dict[str, Any]:
    """``{"argv", "cwd", "cap", "sep", "fpo", "res", "follow": [root, top, check_files] | None,
    "bp", "dbg"}``"""
    follow = request.follow
    return {"argv": list(request.argv), "cwd": request.cwd, "cap": request.raw_cap,
            "sep": request.separator.decode("latin-1"), "fpo": request.first_page_on_overflow,
            "res": request.results, "follow": [follow.root, follow.top, follow.check_files] if follow else None,
            "bp": request.bytes_paths, "dbg": request.debug}


def decode_host_search(value: Any) -> HostSearch:
    found = _mapping(value, "a search request")
    argv = found.get("argv")
    if not isinstance(argv, list):
        raise ProtocolError("a search request's argv is not a list")
    follow = found.get("follow")
    if follow is not None:
        if not isinstance(follow, list) or len(follow) != 3 or not isinstance(follow[2], bool):
            raise ProtocolError("a search request's follow is not [root, top, check_files]")
        follow = FollowLinks(root=string(follow[0], "a root"), top=string(follow[1], "a top"), check_files=follow[2])
    separator = string(found.get("sep"), "a separator").encode("latin-1")
    if separator not in (b"\n", b"\0"):
        raise ProtocolError("a search request's separator is not a line break or a NUL")
    flags = [found.get(key) for key in ("fpo", "bp", "dbg")]
    if not all(isinstance(flag, bool) for flag in flags):
        raise ProtocolError("a search request's flags are not booleans")
    return HostSearch(argv=tuple(string(a, "an argument") for a in argv), cwd=string(found.get("cwd"), "a cwd"),
                      raw_cap=integer(found.get("cap"), "a cap"), separator=separator, first_page_on_overflow=flags[0],
                      results=_choice(found.get("res"), _RESULTS, "a result kind"), follow=follow,
                      bytes_paths=flags[1], debug=flags[2])


RUN_FIELDS = ("exit_code", "signal_name", "stderr", "stderr_truncated", "raw_bytes", "stopped", "drained")
"""the fields of a search run's end (``tool_fs_search.engine.Run``), in a far side's answer"""


def decode_run(value: Any) -> dict[str, Any]:
    """A search run's end: a mapping of exactly ``RUN_FIELDS`` with their types."""
    found = _mapping(value, "a search run")
    if set(found) != set(RUN_FIELDS):
        raise ProtocolError("a search run's fields are not the run's")
    optional_integer(found["exit_code"], "an exit code")
    optional_string(found["signal_name"], "a signal name")
    string(found["stderr"], "stderr")
    integer(found["raw_bytes"], "a byte count")
    if not all(isinstance(found[k], bool) for k in ("stderr_truncated", "stopped", "drained")):
        raise ProtocolError("a search run's flags are not booleans")
    return dict(found)
