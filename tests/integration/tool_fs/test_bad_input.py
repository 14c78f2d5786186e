"""Hostile and malformed tool calls through ``ctx.tools.execute``, in both profiles.

For every call: ``execute`` returns (never raises), within a timeout (FIFOs and sockets are
never opened for reading), the result is an error whose text is valid Unicode, and the
workspace is byte-identical afterwards (files, modes, inodes, links, no temp-file litter).
Exact texts are asserted wherever REFERENCE-SPEC (§1.5, §4.4, §5.2–§5.4, §9 item 10) or
DEVIATIONS (A2, D9, D11) define them.

Covers: wrong JSON types, NaN/±Infinity/-0, booleans for numbers, huge numbers (1e308,
10**30, 2**64, 2**1100), blank and JS-whitespace paths, NUL bytes, paths through a regular
file, directories, a FIFO, a unix socket, symlink loops, over-long names, lone surrogates,
100k-deep nesting, non-object arguments, non-JSON Python values and unknown tools.

Not covered here: valid calls (test_tools.py) and random failing sequences (test_properties.py).
"""

from __future__ import annotations

import json
import math
import os
import socket
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest

from dsh_fs import Context, Session
from dsh_fs.core.tools import ToolResult

pytestmark = pytest.mark.anyio

PROFILES = ["default", "reference"]
LOSSLESS = "Error: tool execution arguments must be losslessly JSON-serializable"
NAMES = {"INVALID_ARGS": "ToolArgsError", "UNKNOWN_TOOL": "ToolNotFoundError"}


def _deep_list(depth: int) -> list[Any]:
    root: list[Any] = []
    cur = root
    for _ in range(depth):
        nxt: list[Any] = []
        cur.append(nxt)
        cur = nxt
    return root


def _deep_dict(depth: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    cur = root
    for _ in range(depth):
        nxt: dict[str, Any] = {}
        cur["a"] = nxt
        cur = nxt
    return root


class Bench:
    """A workspace full of awkward entries, a deployment over it and one session."""

    def __init__(self, ws: str, ctx: Context, profile: str, snapshot: Callable[[str], Any]) -> None:
        self.ws = ws
        self.ctx = ctx
        self.profile = profile
        self.session = Session(ws)
        self._snapshot = snapshot
        self.unread = " — read the file, then retry" if profile == "default" else ""

    def fmt(self, text: str) -> str:
        return text.replace("{ws}", self.ws).replace("{unread}", self.unread)

    async def call(self, tool: str, args: Any, *, session: Any = "default") -> ToolResult:
        before = self._snapshot(self.ws)
        with anyio.fail_after(60):
            result = await self.ctx.tools.execute(tool, args, session=self.session if session == "default" else session)
        assert isinstance(result, ToolResult)
        assert self._snapshot(self.ws) == before, "a failed call changed the workspace"
        assert result.is_error and result.text.startswith("Error: ") and result.meta is None, result.text
        result.text.encode("utf-8")  # no lone surrogate reaches the model
        json.dumps(result.text, ensure_ascii=False)
        return result

    async def expect(self, tool: str, args: Any, text: str | None, code: str | None, *, prefix: str | None = None) -> ToolResult:
        result = await self.call(tool, args)
        if text is not None:
            assert result.text == self.fmt(text)
        if prefix is not None:
            assert result.text.startswith(self.fmt(prefix)), result.text
        if code is None:
            assert result.error is None, result.error
        else:
            assert result.error is not None and result.error.code == code, result.text
            assert result.error.name == NAMES.get(code, "FsError")
        return result


@pytest.fixture
def bench_factory(ws: str, make_ctx: Callable[..., Context], tree: Callable[[str], Any],
                  monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Bench]]:
    with open(os.path.join(ws, "a.txt"), "w") as handle:
        handle.write("hello\n")
    with open(os.path.join(ws, "afile"), "w") as handle:
        handle.write("plain file\n")
    os.mkdir(os.path.join(ws, "d"))
    os.mkfifo(os.path.join(ws, "fifo"))
    os.symlink("loop", os.path.join(ws, "loop"))
    sock = socket.socket(socket.AF_UNIX)
    monkeypatch.chdir(ws)
    try:
        sock.bind("sock")
    except OSError:  # pragma: no cover - sandboxes without unix sockets
        pass

    def build(profile: str = "default", policy: bool = True, **config: Any) -> Bench:
        # no containment root: the bad targets include paths outside the workspace (/, /dev/…)
        return Bench(ws, make_ctx(profile=profile, policy=policy, root=None, **config), profile, tree)

    try:
        yield build
    finally:
        sock.close()


@pytest.fixture(params=PROFILES)
def bench(request: pytest.FixtureRequest, bench_factory: Callable[..., Bench]) -> Bench:
    return bench_factory(request.param)


# ------------------------------------------------------------------------------------------
# wrong JSON types (§4.4 step 3, §5.4)
# ------------------------------------------------------------------------------------------

TYPE_CASES = [
    ("read", {"file_path": 1}, '"file_path" must be a string'),
    ("read", {"file_path": None}, '"file_path" must be a string'),
    ("read", {"file_path": ["a.txt"]}, '"file_path" must be a string'),
    ("read", {"file_path": {"path": "a.txt"}}, '"file_path" must be a string'),
    ("read", {"file_path": True}, '"file_path" must be a string'),
    ("read", {"file_path": "a.txt", "offset": "1"}, '"offset" must be a number'),
    ("read", {"file_path": "a.txt", "offset": None}, '"offset" must be a number'),
    ("read", {"file_path": "a.txt", "limit": [1]}, '"limit" must be a number'),
    ("read", {"file_path": "a.txt", "offset": True}, '"offset" must be a number'),
    ("read", {"file_path": "a.txt", "offset": False, "limit": True}, '"offset" must be a number; "limit" must be a number'),
    ("read", {}, 'missing required property "file_path"'),
    ("read", {"path": "a.txt"}, 'missing required property "file_path"'),
    ("write", {"file_path": "n.txt", "content": 5}, '"content" must be a string'),
    ("write", {"file_path": "n.txt", "content": None}, '"content" must be a string'),
    ("write", {"file_path": "n.txt", "content": ["x"]}, '"content" must be a string'),
    ("write", {"file_path": "n.txt"}, 'missing required property "content"'),
    ("write", {"content": "x"}, 'missing required property "file_path"'),
    ("edit", {"file_path": "a.txt", "old_string": "hello", "new_string": "x", "replace_all": "true"},
     '"replace_all" must be a boolean'),
    ("edit", {"file_path": "a.txt", "old_string": "hello", "new_string": "x", "replace_all": 1},
     '"replace_all" must be a boolean'),
    ("edit", {"file_path": "a.txt", "old_string": "hello", "new_string": "x", "replace_all": None},
     '"replace_all" must be a boolean'),
    ("edit", {"file_path": "a.txt", "old_string": 1, "new_string": None},
     '"old_string" must be a string; "new_string" must be a string'),
    ("edit", {"file_path": "a.txt"}, 'missing required property "old_string"; missing required property "new_string"'),
]


@pytest.mark.parametrize("tool,args,violations", TYPE_CASES)
async def test_wrong_json_types(bench: Bench, tool: str, args: Any, violations: str) -> None:
    await bench.expect(tool, args, "Error: invalid arguments: " + violations, "INVALID_ARGS")


@pytest.mark.parametrize("arguments", [[], ["a.txt"], None, "a.txt", '{"file_path": "a.txt"}', 1, 1.5, True, ""])
@pytest.mark.parametrize("tool", ["read", "write", "edit"])
async def test_non_object_arguments(bench: Bench, tool: str, arguments: Any) -> None:
    await bench.expect(tool, arguments, 'Error: invalid arguments: "arguments" must be an object', "INVALID_ARGS")


# ------------------------------------------------------------------------------------------
# NaN / Infinity / -0 and non-JSON values (§5.3 step 1, §9 item 10)
# ------------------------------------------------------------------------------------------

class _Opaque:
    pass


def _cycle() -> dict[str, Any]:
    cyclic: dict[str, Any] = {"file_path": "a.txt"}
    cyclic["self"] = cyclic
    return cyclic


NON_JSON = [
    ("read", lambda: {"file_path": "a.txt", "offset": math.nan}),
    ("read", lambda: {"file_path": "a.txt", "offset": math.inf}),
    ("read", lambda: {"file_path": "a.txt", "limit": -math.inf}),
    ("read", lambda: {"file_path": "a.txt", "offset": -0.0}),
    ("read", lambda: {"file_path": "a.txt", "offset": 2**1100}),
    ("read", lambda: {"file_path": "a.txt", "limit": -(2**1100)}),
    ("write", lambda: {"file_path": "n.txt", "content": "x", "extra": [1, {"deep": math.nan}]}),
    ("edit", lambda: {"file_path": "a.txt", "old_string": "hello", "new_string": "x", "replace_all": False,
                      "unused": -0.0}),
    ("read", lambda: ("a.txt",)),
    ("read", lambda: {"file_path": b"a.txt"}),
    ("read", lambda: {"file_path": "a.txt", "offset": {1, 2}}),
    ("read", lambda: {"file_path": _Opaque()}),
    ("read", lambda: {1: "a.txt"}),
    ("read", _cycle),
    ("nope", lambda: {"x": math.nan}),  # checked before the tool lookup
]


@pytest.mark.parametrize("tool,make", NON_JSON, ids=[f"{t}-{i}" for i, (t, _) in enumerate(NON_JSON)])
async def test_non_json_values_fail_the_lossless_check(bench: Bench, tool: str, make: Callable[[], Any]) -> None:
    await bench.expect(tool, make(), LOSSLESS, None)


# ------------------------------------------------------------------------------------------
# numbers: huge, tiny, fractional (§4.4 step 4, §4.6.4, §9 item 11)
# ------------------------------------------------------------------------------------------

NUMBER_CASES = [
    ({"offset": 1e308}, 'Error: offset 1e+308 is out of range for "{ws}/a.txt" (1 lines)', "FS_NOT_FOUND"),
    ({"offset": 10**30}, 'Error: offset 1e+30 is out of range for "{ws}/a.txt" (1 lines)', "FS_NOT_FOUND"),
    ({"offset": 2**64}, 'Error: offset 18446744073709552000 is out of range for "{ws}/a.txt" (1 lines)', "FS_NOT_FOUND"),
    ({"offset": 2**53}, 'Error: offset 9007199254740992 is out of range for "{ws}/a.txt" (1 lines)', "FS_NOT_FOUND"),
    ({"offset": 2.0e3}, 'Error: offset 2000 is out of range for "{ws}/a.txt" (1 lines)', "FS_NOT_FOUND"),
    ({"limit": 1e308}, "Error: limit must be less than or equal to 2000", None),
    ({"limit": 10**30}, "Error: limit must be less than or equal to 2000", None),
    ({"limit": 2001.0}, "Error: limit must be less than or equal to 2000", None),
    ({"offset": 1e-300}, "Error: offset must be a positive integer", None),
    ({"offset": 1.5}, "Error: offset must be a positive integer", None),
    ({"offset": -(10**30)}, "Error: offset must be a positive integer", None),
    ({"offset": 0}, "Error: offset must be a positive integer", None),
    ({"limit": 0.999}, "Error: limit must be a positive integer", None),
    ({"limit": -1e308}, "Error: limit must be a positive integer", None),
    ({"offset": 1.5, "limit": 0}, "Error: offset must be a positive integer", None),
]


@pytest.mark.parametrize("extra,text,code", NUMBER_CASES)
async def test_numbers(bench: Bench, extra: dict[str, Any], text: str, code: str | None) -> None:
    await bench.expect("read", {"file_path": "a.txt", **extra}, text, code)


# ------------------------------------------------------------------------------------------
# blank paths, NUL bytes, paths through files, long names, loops
# ------------------------------------------------------------------------------------------

def _args(tool: str, path: Any) -> dict[str, Any]:
    return {"read": {"file_path": path}, "write": {"file_path": path, "content": "x"},
            "edit": {"file_path": path, "old_string": "hello", "new_string": "x"}}[tool]


@pytest.mark.parametrize("path", ["", " ", "\t\r\n", "\u3000", "\ufeff", "\u00a0 \u2028", "\v\f"])
@pytest.mark.parametrize("tool", ["read", "write", "edit"])
async def test_blank_paths(bench: Bench, tool: str, path: str) -> None:
    await bench.expect(tool, _args(tool, path), "Error: file_path must be a non-empty string", None)


async def test_non_js_whitespace_is_a_file_name(bench: Bench) -> None:
    """§9 item 1: ``\\x1c`` and ``\\x85`` are not blank under JS ``trim`` — they name files"""
    for name in ("\x1c", "\x85", "\u200b"):
        await bench.expect("read", {"file_path": name}, f'Error: cannot read "{{ws}}/{name}": not found', "FS_NOT_FOUND")


@pytest.mark.parametrize("path", ["a\x00b", "\x00", "a.txt\x00", "d/\x00/x"])
@pytest.mark.parametrize("tool", ["read", "write", "edit"])
async def test_nul_bytes_in_paths(bench: Bench, tool: str, path: str) -> None:
    result = await bench.call(tool, _args(tool, path))
    assert result.error is not None and result.error.name == "FsError"


@pytest.mark.parametrize("path", ["afile/x", "afile/x/y/z.txt", "afile/..x"])
@pytest.mark.parametrize("tool", ["read", "write", "edit"])
async def test_paths_through_a_regular_file(bench: Bench, tool: str, path: str) -> None:
    await bench.expect(tool, _args(tool, path),
                       f'Error: cannot resolve "{{ws}}/{path}": a parent path segment is not a directory', "FS_NOT_FOUND")


@pytest.mark.parametrize("tool", ["read", "write", "edit"])
async def test_symlink_loops_and_over_long_names_are_coded_io_errors(bench: Bench, tool: str) -> None:
    """A2: ELOOP / ENAMETOOLONG during resolve are ``FS_IO_ERROR`` ``cannot resolve "<p>": <strerror>``"""
    await bench.expect(tool, _args(tool, "loop"), 'Error: cannot resolve "{ws}/loop": Too many levels of symbolic links',
                       "FS_IO_ERROR")
    await bench.expect(tool, _args(tool, "loop/inner.txt"),
                       'Error: cannot resolve "{ws}/loop/inner.txt": Too many levels of symbolic links', "FS_IO_ERROR")
    long = "n" * 300
    await bench.expect(tool, _args(tool, long), f'Error: cannot resolve "{{ws}}/{long}": File name too long', "FS_IO_ERROR")
    await bench.call(tool, _args(tool, "x/" * 3000 + "f.txt"))  # longer than PATH_MAX


# ------------------------------------------------------------------------------------------
# directories, FIFOs, sockets (never opened, never hang)
# ------------------------------------------------------------------------------------------

SPECIAL = ["d", "d/", ".", "fifo", "sock", "/"]


@pytest.mark.parametrize("name", SPECIAL)
@pytest.mark.parametrize("policy", [True, False], ids=["policy", "bare"])
async def test_non_regular_targets(bench_factory: Callable[..., Bench], name: str, policy: bool) -> None:
    for profile in PROFILES:
        bench = bench_factory(profile, policy, read_stream_min_size=1)  # also the streaming path
        if name == "sock" and not os.path.exists(os.path.join(bench.ws, "sock")):
            pytest.skip("unix sockets are unavailable here")
        shown = {"d": f"{bench.ws}/d", "d/": f"{bench.ws}/d", ".": bench.ws, "fifo": f"{bench.ws}/fifo",
                 "sock": f"{bench.ws}/sock", "/": "/"}[name]
        # the default profile points a directory's read to list (L4)
        hint = f'\nHint: "{shown}" is a directory; use list to see its entries.' if (
            profile == "default" and name in ("d", "d/", ".", "/")) else ""
        await bench.expect("read", {"file_path": name}, f'Error: cannot read "{shown}": not a regular file{hint}',
                           "FS_NOT_REGULAR_FILE")
        await bench.expect("write", {"file_path": name, "content": "x"},
                           f'Error: cannot write "{shown}": not a regular file', "FS_NOT_REGULAR_FILE")
        edit = {"file_path": name, "old_string": "a", "new_string": "b"}
        if policy and profile == "reference":  # the default profile says what is wrong first (D27)
            await bench.expect("edit", edit, f'Error: edit requires reading "{shown}" first{{unread}}', "FS_NOT_OBSERVED")
        else:
            await bench.expect("edit", edit, f'Error: cannot edit "{shown}": not a regular file', "FS_NOT_REGULAR_FILE")


async def test_a_fifo_with_a_blocked_writer_is_still_never_opened(bench_factory: Callable[..., Bench]) -> None:
    bench = bench_factory("default", False)
    fd = os.open(os.path.join(bench.ws, "fifo"), os.O_RDONLY | os.O_NONBLOCK)  # a reader exists: writers would not block
    try:
        await bench.expect("write", {"file_path": "fifo", "content": "x" * 100_000},
                           'Error: cannot write "{ws}/fifo": not a regular file', "FS_NOT_REGULAR_FILE")
        assert os.read(fd, 10) == b""
    finally:
        os.close(fd)


# ------------------------------------------------------------------------------------------
# lone surrogates (§2.8 notes, §9 item 5; D11)
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("tool", ["read", "write", "edit"])
async def test_D11_lone_surrogate_in_file_path(bench_factory: Callable[..., Bench], tool: str) -> None:
    bench = bench_factory("default")
    await bench.expect(tool, _args(tool, "x\ud800y"),
                       "Error: file_path must be valid Unicode text (lone surrogate U+D800 at index 1)", None)


async def test_D11_lone_surrogates_in_content_and_new_string(bench_factory: Callable[..., Bench]) -> None:
    bench = bench_factory("default", False)
    await bench.expect("write", {"file_path": "n.txt", "content": "\udfff"},
                       "Error: content must be valid Unicode text (lone surrogate U+DFFF at index 0)", None)
    await bench.expect("write", {"file_path": "a.txt", "content": "ok 😀 \ud83d"},
                       "Error: content must be valid Unicode text (lone surrogate U+D83D at index 5)", None)  # code points
    await bench.expect("edit", {"file_path": "a.txt", "old_string": "hello", "new_string": "\ud83d\ud83d\ude00"},
                       "Error: new_string must be valid Unicode text (lone surrogate U+D83D at index 0)", None)


@pytest.mark.parametrize("needle", ["\ud83d", "hel\udc00lo", "hello\ud800"])
async def test_lone_surrogate_in_old_string_never_matches_nor_leaks(bench: Bench, needle: str) -> None:
    result = await bench.call("edit", {"file_path": "a.txt", "old_string": needle, "new_string": "x"})
    assert result.error is not None and result.error.code in ("FS_NOT_OBSERVED", "FS_EDIT_NOT_FOUND")


@pytest.mark.parametrize("needle", ["\ud83d", "hel\udc00lo"])
async def test_lone_surrogate_in_old_string_on_the_bare_path(bench_factory: Callable[..., Bench], needle: str) -> None:
    for profile in PROFILES:
        bench = bench_factory(profile, False)
        result = await bench.call("edit", {"file_path": "a.txt", "old_string": needle, "new_string": "x"})
        assert result.error is not None and result.error.code == "FS_EDIT_NOT_FOUND"
        assert result.text.split("\n")[0] == f'Error: old_string was not found in "{bench.ws}/a.txt"'


async def test_reference_profile_writes_lone_surrogates_as_replacement_characters(bench_factory: Callable[..., Bench]) -> None:
    """§2.8 notes (reference): lone surrogates in content and file_path are encoded as U+FFFD"""
    bench = bench_factory("reference", False)
    with anyio.fail_after(60):
        result = await bench.ctx.tools.execute("write", {"file_path": "x\ud800y.txt", "content": "a\udc00b"},
                                               session=bench.session)
    assert not result.is_error and result.text == f"<path>{bench.ws}/x\ufffdy.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>"
    with open(os.path.join(bench.ws, "x\ufffdy.txt"), "rb") as handle:
        assert handle.read() == b"a\xef\xbf\xbdb"


# ------------------------------------------------------------------------------------------
# deep nesting, unknown tools
# ------------------------------------------------------------------------------------------

async def test_deep_nesting(bench: Bench) -> None:
    deep_list, deep_dict = _deep_list(100_000), _deep_dict(100_000)
    await bench.expect("read", {"file_path": deep_list}, 'Error: invalid arguments: "file_path" must be a string',
                       "INVALID_ARGS")
    await bench.expect("write", {"file_path": "n.txt", "content": deep_dict},
                       'Error: invalid arguments: "content" must be a string', "INVALID_ARGS")
    await bench.expect("edit", deep_list, 'Error: invalid arguments: "arguments" must be an object', "INVALID_ARGS")
    with anyio.fail_after(60):
        fine = await bench.ctx.tools.execute("read", {"file_path": "a.txt", "extra": deep_list, "more": deep_dict},
                                             session=bench.session)
    assert not fine.is_error and "1: hello" in fine.text  # unknown keys are ignored, however deep


@pytest.mark.parametrize("name", ["nope", "", "READ", "read ", "find", "tool:read", "\ud800"])
async def test_unknown_tools(bench: Bench, name: str) -> None:
    result = await bench.call(name, {"file_path": "a.txt"})
    assert result.error is not None and (result.error.name, result.error.code) == ("ToolNotFoundError", "UNKNOWN_TOOL")
    assert result.text == f'Error: unknown tool "{name}"'.replace("\ud800", "\ufffd")  # never a lone surrogate


async def test_calls_without_a_session_behave_the_same(bench: Bench) -> None:
    result = await bench.call("write", {"file_path": f"{bench.ws}/a.txt", "content": "x"}, session=None)
    assert result.error is not None and result.error.code == "FS_NOT_OBSERVED"
    await bench.call("read", {"file_path": "a.txt", "offset": 0}, session=None)
