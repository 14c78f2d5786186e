"""The seam's values as JSON (``fs_channel.codec``): every value round-trips through the wire
exactly (hypothesis), and a value of the wrong shape — what a far side in a sandbox could send —
is a ``ProtocolError``, never a crash elsewhere."""

from __future__ import annotations

import errno
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from dsh_fs.fs.errors import FsError, FsErrorCode
from dsh_fs.fs.search_host import FollowLinks, HostSearch
from dsh_fs.fs.types import (CreateIfAbsent, DeleteIntent, DirEntry, EditIntent, EditOutcome, EditRequest, Info,
                             PathInfo, ReplaceIfVersion, Target, TargetKey, Version, WalkEntry, WriteOutcome)
from dsh_fs.fs.window import ReadWindow, WindowLine, WindowResult
from dsh_fs.fs_channel import codec
from dsh_fs.fs_channel.wire import FrameReader, ProtocolError, encode_frame

TEXT = st.text(max_size=20)
INTS = st.integers(-(2 ** 40), 2 ** 40)
OPT_INT = st.none() | st.integers(0, 2 ** 40)
TARGETS = st.builds(lambda k, d: Target(key=TargetKey(k), display_path=d), TEXT, TEXT)
VERSIONS = TEXT.map(Version)


def _wire(value: Any) -> Any:
    """``value`` after a trip through a frame (as JSON)."""
    [(message, _)] = FrameReader().feed(encode_frame({"v": value}))
    return message["v"]


@settings(max_examples=80, deadline=None)
@given(TARGETS, st.none() | st.builds(Info, version=VERSIONS, type=st.sampled_from(["file", "directory", "other"]),
                                       size=OPT_INT),
       st.none() | st.builds(PathInfo, version=VERSIONS, type=st.sampled_from(["file", "directory", "symlink", "other"]),
                             size=OPT_INT))
def test_targets_and_metadata_round_trip(target: Target, info: Info | None, path_info: PathInfo | None) -> None:
    assert codec.decode_target(_wire(codec.encode_target(target))) == target
    assert codec.decode_info(_wire(codec.encode_info(info))) == info
    assert codec.decode_path_info(_wire(codec.encode_path_info(path_info))) == path_info


@settings(max_examples=60, deadline=None)
@given(st.lists(st.builds(lambda n, t, tg, v, s: DirEntry(name=n, type=t, target=tg, version=v, size=s), TEXT,
                          st.sampled_from(["file", "directory", "other"]), TARGETS, st.none() | VERSIONS, OPT_INT),
                max_size=4),
       st.lists(st.builds(lambda r, t, tg, s, m: WalkEntry(rel=r, type=t, target=tg, size=s, mtime_ns=m), TEXT,
                          st.sampled_from(["file", "directory"]), TARGETS, OPT_INT, OPT_INT), max_size=4))
def test_listings_round_trip(entries: list[DirEntry], walked: list[WalkEntry]) -> None:
    assert codec.decode_dir_entries(_wire(codec.encode_dir_entries(entries))) == entries
    assert codec.decode_walk_entries(_wire(codec.encode_walk_entries(walked))) == walked


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([None, CreateIfAbsent()]) | st.builds(ReplaceIfVersion, VERSIONS),
       st.builds(lambda o, n, r: EditRequest(old_string=o, new_string=n, replace_all=r), TEXT, TEXT, st.booleans()),
       st.builds(lambda op, v, b, a: WriteOutcome(operation=op, version=v, before=b, after=a),
                 st.sampled_from(["create", "update"]), VERSIONS, st.none() | TEXT, TEXT),
       st.builds(lambda v, b, a, c: EditOutcome(version=v, before=b, after=a, changed=c), VERSIONS,
                 st.none() | TEXT, st.none() | TEXT, st.none() | st.tuples(INTS, INTS)))
def test_intents_and_outcomes_round_trip(intent: Any, edit: EditRequest, written: WriteOutcome,
                                        edited: EditOutcome) -> None:
    assert codec.decode_write_intent(_wire(codec.encode_write_intent(intent))) == intent
    assert codec.decode_edit(_wire(codec.encode_edit(edit))) == edit
    assert codec.decode_write_outcome(_wire(codec.encode_write_outcome(written))) == written
    assert codec.decode_edit_outcome(_wire(codec.encode_edit_outcome(edited))) == edited
    assert codec.decode_delete_outcome(_wire("v1")).version == "v1"
    assert codec.decode_rename_outcome(_wire("v2")).version == "v2"


def test_guard_versions() -> None:
    assert codec.guard_version(None) is None
    assert codec.guard_version(EditIntent(Version("v"))) == "v"
    assert codec.guard_version(DeleteIntent(Version("w"))) == "w"


@settings(max_examples=60, deadline=None)
@given(st.builds(ReadWindow, offset=INTS, limit=INTS, max_line_length=INTS, max_bytes=INTS,
                 always_progress=st.booleans(), exact_truncation=st.booleans()),
       st.integers(1, 50), st.lists(TEXT, max_size=5), st.integers(0, 99), st.booleans())
def test_windows_round_trip(window: ReadWindow, offset: int, texts: list[str], total: int, cut: bool) -> None:
    assert codec.decode_window(_wire(codec.encode_window(window))) == window
    result = WindowResult(offset=offset, lines=[WindowLine(offset + i, t) for i, t in enumerate(texts)],
                          total_lines=total, truncated_by_bytes=cut)
    back = codec.decode_window_result(_wire(codec.encode_window_result(result)))
    assert back is not None and back.texts == texts  # the compact form, as a collector builds it
    assert back == result
    assert codec.decode_window_result(_wire(codec.encode_window_result(None))) is None


@pytest.mark.parametrize("error", [
    FsError("cannot read \"/a\": not found", FsErrorCode.NOT_FOUND),
    FsError("old_string was not found in \"/a\"", FsErrorCode.EDIT_NOT_FOUND, searched_text="x\ny\n", needle="z",
            replacement="w"),
    FsError("old_string matched 2 times in \"/a\"", FsErrorCode.AMBIGUOUS_EDIT, count=2),
])
def test_fs_errors_keep_their_code_message_and_hint_fields(error: FsError) -> None:
    back = codec.decode_error(_wire(codec.encode_error(error)))
    assert isinstance(back, FsError)
    assert (back.code, str(back), back.searched_text, back.needle, back.count, back.replacement) == (
        error.code, str(error), error.searched_text, error.needle, error.count, error.replacement)


def test_other_errors_keep_their_type_when_the_seam_documents_it() -> None:
    assert isinstance(codec.decode_error(_wire(codec.encode_error(ValueError("v")))), ValueError)
    assert isinstance(codec.decode_error(_wire(codec.encode_error(TypeError("t")))), TypeError)
    assert isinstance(codec.decode_error(_wire(codec.encode_error(NotImplementedError("n")))), NotImplementedError)
    other = codec.decode_error(_wire(codec.encode_error(KeyError("k"))))
    assert type(other) is RuntimeError and str(other) == "KeyError on the far side: 'k'"
    os_error = codec.decode_error(_wire(codec.encode_error(FileNotFoundError(errno.ENOENT, "gone"))))
    assert isinstance(os_error, OSError) and (os_error.errno, os_error.strerror) == (errno.ENOENT, "gone")
    assert codec.encode_error(OSError("no errno")) == {"x": "OSError", "m": "no errno"}
    plain = codec.decode_error({"x": "OSError", "m": "no errno"})
    assert type(plain) is RuntimeError and str(plain) == "OSError on the far side: no errno"


@pytest.mark.parametrize("value", [None, "x", [], {"m": 1}, {"m": "x"}, {"m": "x", "c": "FS_NOPE"},
                                   {"m": "x", "c": "FS_NOT_FOUND", "k": "2"}, {"x": "OSError", "m": "e", "en": "2"}])
def test_a_malformed_error_is_a_protocol_error(value: Any) -> None:
    with pytest.raises(ProtocolError):
        codec.decode_error(value)


@pytest.mark.parametrize(("decode", "value"), [
    (codec.decode_target, ["k"]), (codec.decode_target, ["k", 1]), (codec.decode_target, "k"),
    (codec.decode_target, [1, "d"]),
    (codec.decode_info, ["v", "file"]), (codec.decode_info, ["v", "fifo", 1]), (codec.decode_info, [1, "file", 1]),
    (codec.decode_info, ["v", "file", "1"]), (codec.decode_info, ["v", "file", True]),
    (codec.decode_path_info, ["v", "file"]), (codec.decode_path_info, ["v", "fifo", None]),
    (codec.decode_dir_entries, {}), (codec.decode_dir_entries, [["n", "file", "k", "d", None]]),
    (codec.decode_dir_entries, [["n", "link", "k", "d", None, None]]),
    (codec.decode_dir_entries, [["n", "file", 3, "d", None, None]]),
    (codec.decode_dir_entries, [["n", "file", "k", 3, None, None]]),
    (codec.decode_walk_entries, "x"), (codec.decode_walk_entries, 5), (codec.decode_walk_entries, [["r", "other", "k", "d", None, None]]),
    (codec.decode_walk_entries, [["r", "file", "k", "d"]]), (codec.decode_walk_entries, [["r", "file", 1, "d", None, None]]),
    (codec.decode_walk_entries, [["r", "file", "k", 1, None, None]]),
    (codec.decode_write_intent, "x"), (codec.decode_write_intent, ["w", "v"]), (codec.decode_write_intent, ["v"]),
    (codec.decode_edit, ["a", "b"]), (codec.decode_edit, ["a", "b", 1]), (codec.decode_edit, [1, "b", True]),
    (codec.decode_write_outcome, ["create", "v", None]), (codec.decode_write_outcome, ["make", "v", None, "a"]),
    (codec.decode_write_outcome, ["create", "v", None, None]), (codec.decode_write_outcome, ["create", "v", 1, "a"]),
    (codec.decode_edit_outcome, ["v", None, None]), (codec.decode_edit_outcome, ["v", None, None, [1]]),
    (codec.decode_edit_outcome, ["v", None, None, [1, "2"]]), (codec.decode_edit_outcome, ["v", None, None, 3]),
    (codec.decode_edit_outcome, ["v", 1, None, None]),
    (codec.decode_window, [1, 2, 3, 4, True]), (codec.decode_window, [1, 2, 3, 4, True, 0]),
    (codec.decode_window, [1, 2, 3, "4", True, False]), (codec.decode_window, [1, 2, 3, 4, 0, True]),
    (codec.decode_window_result, [1, ["a"], 1]), (codec.decode_window_result, [1, "a", 1, False]),
    (codec.decode_window_result, [1, ["a"], 1, 0]), (codec.decode_window_result, [1, [2], 1, False]),
    (codec.decode_version, 3), (codec.decode_delete_outcome, None),
])
def test_a_value_of_the_wrong_shape_is_a_protocol_error(decode: Any, value: Any) -> None:
    with pytest.raises(ProtocolError):
        decode(value)


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXT, max_size=4), TEXT, st.integers(0, 2 ** 30), st.sampled_from([b"\n", b"\0"]), st.booleans(),
       st.sampled_from(["paths", "matches", "lines", "none"]),
       st.none() | st.builds(FollowLinks, root=TEXT, top=TEXT, check_files=st.booleans()), st.booleans(), st.booleans())
def test_search_requests_round_trip(argv: list[str], cwd: str, cap: int, sep: bytes, fpo: bool, results: Any,
                                    follow: FollowLinks | None, bytes_paths: bool, debug: bool) -> None:
    request = HostSearch(argv=tuple(argv), cwd=cwd, raw_cap=cap, separator=sep, first_page_on_overflow=fpo,
                         results=results, follow=follow, bytes_paths=bytes_paths, debug=debug)
    assert codec.decode_host_search(_wire(codec.encode_host_search(request))) == request


GOOD = codec.encode_host_search(HostSearch(argv=("a",), cwd="/", raw_cap=1, separator=b"\n",
                                           first_page_on_overflow=True, results="none"))


@pytest.mark.parametrize("change", [{"argv": "a"}, {"argv": [1]}, {"follow": ["r", "t"]}, {"follow": ["r", "t", 1]},
                                    {"follow": [1, "t", True]}, {"sep": "\t"}, {"sep": 1}, {"fpo": 1}, {"bp": None},
                                    {"dbg": "x"}, {"res": "files"}, {"cap": "1"}, {"cwd": None}])
def test_a_malformed_search_request_is_a_protocol_error(change: dict[str, Any]) -> None:
    with pytest.raises(ProtocolError):
        codec.decode_host_search({**GOOD, **change})
    with pytest.raises(ProtocolError):
        codec.decode_host_search([GOOD])


RUN = {"exit_code": 0, "signal_name": None, "stderr": "", "stderr_truncated": False, "raw_bytes": 3,
       "stopped": False, "drained": False}


def test_a_search_run_end_is_read_back_with_its_types() -> None:
    assert codec.decode_run(_wire(RUN)) == RUN
    assert codec.decode_run({**RUN, "exit_code": None, "signal_name": "SIGKILL"})["signal_name"] == "SIGKILL"


@pytest.mark.parametrize("change", [{"exit_code": "0"}, {"signal_name": 9}, {"stderr": None}, {"raw_bytes": None},
                                    {"stopped": 0}, {"drained": None}, {"stderr_truncated": "no"}, {"extra": 1}])
def test_a_malformed_search_run_is_a_protocol_error(change: dict[str, Any]) -> None:
    with pytest.raises(ProtocolError):
        codec.decode_run({**RUN, **change})
    with pytest.raises(ProtocolError):
        codec.decode_run({k: v for k, v in RUN.items() if k != "drained"})
    with pytest.raises(ProtocolError):
        codec.decode_run([RUN])


def test_shape_helpers() -> None:
    assert codec.string("a", "x") == "a" and codec.optional_string(None, "x") is None
    assert codec.integer(3, "x") == 3 and codec.optional_integer(None, "x") is None
    with pytest.raises(ProtocolError, match="a count is not an integer"):
        codec.integer(True, "a count")
    with pytest.raises(ProtocolError, match="a name is not a string"):
        codec.string(b"a", "a name")
