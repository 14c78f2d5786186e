"""Property tests (hypothesis) on a real disk, against models written independently here.

(a) DEVIATIONS D2 + D1 + D15: an ``edit`` in the default profile never changes a byte outside
    its matches — files mix CRLF, LF and lone CR, with or without BOM and final newline; every
    outcome (success, not found, ambiguous — overlapping occurrences counted, must-differ) is
    compared byte for byte, on the local disk (held and streamed) and in the memory provider.
(b) REFERENCE-SPEC §4.6.2–§4.6.5 + A1/D10: a read window's lines and footer agree with the
    file for any offset/limit/caps, through the pure builder (random chunking, both
    profiles) and through the ``read`` tool (whole and streamed reads).
(c) A failed call leaves the workspace byte-identical (stale, not observed, not found,
    ambiguous, invalid arguments, out of range, non-regular targets, non-text files…).

Examples are kept modest (100–200 each, no deadline) so the suite stays fast.

Not covered here: fixed examples of the same rules (tests/unit, test_tools.py).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import dsh_fs
from dsh_fs import Session
from dsh_fs.fs_local import LocalFileSystem
from dsh_fs.fs_memory import MemoryFileSystem
from dsh_fs.core.jsonvalue import is_lossless_json
from dsh_fs.core.schema import validate
from dsh_fs.tool_fs.plugin import edit_params, read_params, write_params
from dsh_fs.tool_fs.read_render import ReadWindow, build_window, format_read_output

HEALTH = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]  # one fresh workspace per example
PROPS = settings(max_examples=150, deadline=None, suppress_health_check=HEALTH, database=None)
BOM = b"\xef\xbb\xbf"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> str:
    return os.path.realpath(str(tmp_path_factory.mktemp("props")))


class Workspace:
    """A fresh directory per example (removed afterwards)."""

    def __init__(self, base: str) -> None:
        self.path = tempfile.mkdtemp(dir=base)

    def put(self, name: str, data: bytes) -> str:
        path = os.path.join(self.path, name)
        with open(path, "wb") as handle:
            handle.write(data)
        return path

    def get(self, name: str) -> bytes:
        with open(os.path.join(self.path, name), "rb") as handle:
            return handle.read()

    def close(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


@pytest.fixture
def workspace(base: str) -> Callable[[], Any]:
    made: list[Workspace] = []

    def make() -> Workspace:
        made.append(Workspace(base))
        return made[-1]

    yield make  # type: ignore[misc]
    for ws in made:
        ws.close()


def _execute(ctx: dsh_fs.Context, tool: str, args: Any, session: Session | None) -> Any:
    async def run() -> Any:
        with anyio.fail_after(60):
            return await ctx.tools.execute(tool, args, session=session)

    return anyio.run(run)


def _snapshot(root: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st_ = os.lstat(path)
            data = b""
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as handle:
                    data = handle.read()
            out[os.path.relpath(path, root)] = (st_.st_mode, st_.st_ino, st_.st_mtime_ns, st_.st_size, data)
    return out


# ==========================================================================================
# (a) D2: an edit changes only the bytes of its matches
# ==========================================================================================

PIECES = ["a", "b", "ab", "ba", "x y", "\t", " ", "é", "😀", "\n", "\n", "\r\n", "\r\n", "\r", "cc"]
text_of = st.lists(st.sampled_from(PIECES), max_size=24).map("".join)


def _normalized_spans(raw: str) -> tuple[str, list[tuple[int, int]]]:
    """The LF-normalized text and, per normalized character, its raw span."""
    chars: list[str] = []
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(raw):
        if raw.startswith("\r\n", i):
            chars.append("\n")
            spans.append((i, i + 2))
            i += 2
        else:
            chars.append(raw[i])
            spans.append((i, i + 1))
            i += 1
    return "".join(chars), spans


def _matches(content: str, needle: str) -> list[int]:
    found, pos = [], content.find(needle)
    while pos >= 0:
        found.append(pos)
        pos = content.find(needle, pos + len(needle))
    return found


def _expected_edit(raw: str, old: str, new: str, replace_all: bool) -> tuple[str, str | None]:
    """``(outcome, expected text)``: outcome is ``ok`` or the refusal; text only for ``ok``.
    Without ``replace_all`` every position where old_string occurs counts (D15)."""
    if old == "":
        return "empty", None
    if old == new or old.replace("\r\n", "\n") == new.replace("\r\n", "\n"):
        return "must-differ", None
    content, spans = _normalized_spans(raw)
    needle = old.replace("\r\n", "\n")
    starts = _matches(content, needle)
    if not starts:
        return "FS_EDIT_NOT_FOUND", None
    occurrences = sum(content.startswith(needle, i) for i in range(len(content)))
    if occurrences > 1 and not replace_all:
        return "FS_AMBIGUOUS_EDIT", None
    crlf = raw.count("\r\n")
    style_crlf = crlf > raw.count("\n") - crlf
    replacement = new.replace("\r\n", "\n")
    if style_crlf:
        replacement = replacement.replace("\n", "\r\n")
    out, cursor = [], 0
    for start in starts:
        raw_start, raw_end = spans[start][0], spans[start + len(needle) - 1][1]
        out.append(raw[cursor:raw_start])  # everything outside the match: verbatim
        out.append(replacement)
        cursor = raw_end
    out.append(raw[cursor:])
    return "ok", "".join(out)


@st.composite
def edits(draw: Any) -> tuple[str, bool, str, str, bool]:
    raw = draw(text_of)
    content, _ = _normalized_spans(raw)
    if content and draw(st.booleans()):
        i = draw(st.integers(0, len(content) - 1))
        j = draw(st.integers(i + 1, min(len(content), i + 8)))
        old = content[i:j]
        if draw(st.booleans()):
            old = old.replace("\n", "\r\n")  # the model may send CRLF for a LF match and vice versa
    else:
        old = draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=3).map("".join))
    new = draw(st.lists(st.sampled_from(PIECES + ["Z", "\r\n\r\n"]), max_size=4).map("".join))
    return raw, draw(st.booleans()), old, new, draw(st.booleans())


@PROPS
@given(case=edits(), provider=st.sampled_from(["local", "streamed", "memory"]))
def test_D2_D15_edit_never_changes_bytes_outside_its_matches(workspace: Callable[[], Workspace],
                                                             case: tuple[str, bool, str, str, bool],
                                                             provider: str) -> None:
    """On the local disk (in memory, and streamed as huge files are), and in the in-memory
    provider (the S3 provider shares its text rules: the contract pins it on fixed cases)."""
    raw, bom, old, new, replace_all = case
    ws = workspace()
    before = (BOM if bom else b"") + raw.encode()
    ws.put("f.txt", before)
    fs: Any
    if provider == "memory":
        fs = MemoryFileSystem({"f.txt": before}, root=ws.path)
    else:
        fs = LocalFileSystem(cwd=ws.path, stream_edit_min_size=1 if provider == "streamed" else 10**12)
    ctx = dsh_fs.create_context(cwd=ws.path, profile="default", policy=False, provider=fs)
    result = _execute(ctx, "edit", {"file_path": "f.txt", "old_string": old, "new_string": new,
                                    "replace_all": replace_all}, Session(ws.path))
    outcome, expected = _expected_edit(raw, old, new, replace_all)
    event(f"{outcome}{' with CRLF' if chr(13) + chr(10) in raw else ''}")
    stored = fs.get("f.txt") if provider == "memory" else ws.get("f.txt")
    if outcome == "ok":
        assert not result.is_error, result.text
        assert stored == (BOM if bom else b"") + expected.encode()  # type: ignore[union-attr]
    else:
        assert result.is_error, (outcome, result.text)
        if outcome.startswith("FS_"):
            assert result.error is not None and result.error.code == outcome, result.text
        assert stored == before
    ws.close()


@PROPS
@given(case=edits())
def test_edit_via_read_then_edit_matches_the_model_with_the_policy(workspace: Callable[[], Workspace],
                                                                   case: tuple[str, bool, str, str, bool]) -> None:
    """The same property with the observation policy (read first): the guard never changes the outcome."""
    raw, bom, old, new, replace_all = case
    ws = workspace()
    before = (BOM if bom else b"") + raw.encode()
    ws.put("f.txt", before)
    ctx = dsh_fs.create_context(cwd=ws.path, profile="default")
    session = Session(ws.path)
    assert not _execute(ctx, "read", {"file_path": "f.txt"}, session).is_error
    result = _execute(ctx, "edit", {"file_path": "f.txt", "old_string": old, "new_string": new,
                                    "replace_all": replace_all}, session)
    outcome, expected = _expected_edit(raw, old, new, replace_all)
    assert (not result.is_error) == (outcome == "ok"), (outcome, result.text)
    assert ws.get("f.txt") == ((BOM if bom else b"") + expected.encode() if expected is not None else before)
    ws.close()


# ==========================================================================================
# (b) read windows agree with the file
# ==========================================================================================

LINE_PIECES = ["a", "bb", "é", "😀", "\r", "\n", "\n", "\r\n", " ", "xyzxyz", "q" * 9]
file_text = st.lists(st.sampled_from(LINE_PIECES), max_size=40).map("".join)


def _suffix(n: int) -> str:
    return f"... (line truncated to {n} chars)"


def expected_read(text: str, offset: int, limit: int, cap: int, max_bytes: int, *, default: bool) -> tuple[bool, str]:
    """``(is_error, body-or-message)`` for ``text`` (display path ``/f``), from §4.6.2–§4.6.5."""
    segments = text.split("\n")
    lines = segments[:-1] + ([segments[-1]] if segments[-1] != "" else [])
    total = len(lines)
    shown: list[tuple[int, str]] = []
    used, capped = 0, False
    for number, raw in enumerate(lines, 1):
        if number < offset or len(shown) >= limit:
            continue
        if default:
            body = raw[:-1] if raw.endswith("\r") else raw
            truncated = len(body) > cap  # code points (A1); a CR never hides a cut
            kept = body[:cap] if truncated else body
        else:
            buffer = raw[: cap + 1]  # the reference's bounded line buffer, then the CR strip
            buffer = buffer[:-1] if buffer.endswith("\r") else buffer
            truncated = len(buffer) > cap
            kept = buffer[:cap] if truncated else buffer
        line = kept + _suffix(cap) if truncated else kept
        size = len(line.encode()) + (1 if shown else 0)
        if used + size > max_bytes:
            if shown or not default:
                capped = True
                break
            fits = [k for k in range(1, len(kept) + 1) if len((kept[:k] + _suffix(k)).encode()) <= max_bytes]
            k = max(fits, default=1)  # D10: always make progress
            line, size = kept[:k] + _suffix(k), max_bytes
        used += size
        shown.append((number, line))
    if not capped and offset > total and not (total == 0 and offset == 1):
        return True, f'offset {offset} is out of range for "/f" ({total} lines)'
    end = shown[-1][0] if shown else max(0, offset - 1)
    if capped:
        footer = f"(Output capped. Showing lines {offset}-{end}. Use offset={end + 1} to continue.)"
    elif end < total:
        footer = f"(Showing lines {offset}-{end} of {total}. Use offset={end + 1} to continue.)"
    else:
        footer = f"(End of file - total {total} lines)"
    body = "\n".join(f"{n}: {t}" for n, t in shown) + "\n\n" + footer if shown else footer
    return False, body


@st.composite
def windows(draw: Any) -> tuple[str, int, int, int, int]:
    text = draw(file_text)
    total = text.count("\n") + (0 if text.endswith("\n") or text == "" else 1)
    offset = draw(st.integers(1, total + 3))
    return text, offset, draw(st.integers(1, 10)), draw(st.integers(1, 12)), draw(st.integers(1, 90))


@settings(max_examples=200, deadline=None, suppress_health_check=HEALTH, database=None)
@given(case=windows(), default=st.booleans(), chunk=st.integers(1, 7))
def test_read_window_agrees_with_an_independent_model(case: tuple[str, int, int, int, int], default: bool,
                                                      chunk: int) -> None:
    text, offset, limit, cap, max_bytes = case
    window = ReadWindow(offset=offset, limit=limit, max_line_length=cap, max_bytes=max_bytes,
                        always_progress=default, exact_truncation=default)
    expected_error, expected = expected_read(text, offset, limit, cap, max_bytes, default=default)
    event("out of range" if expected_error else expected.rsplit("\n", 1)[-1].split(" ")[0])
    for chunks in ([text], [text[i : i + chunk] for i in range(0, len(text), chunk)]):
        try:
            result = anyio.run(build_window, chunks, window, "/f")
        except dsh_fs.FsError as err:
            assert expected_error and str(err) == expected and err.code == "FS_NOT_FOUND"
            continue
        assert not expected_error, expected
        rendered = format_read_output("/f", result)
        assert rendered == f"<path>/f</path>\n<type>file</type>\n<content>\n{expected}\n</content>"
        rendered.encode("utf-8")


@settings(max_examples=100, deadline=None, suppress_health_check=HEALTH, database=None)
@given(case=windows(), bom=st.booleans(), stream=st.booleans(), profile=st.sampled_from(["default", "reference"]))
def test_read_tool_window_agrees_with_the_file(workspace: Callable[[], Workspace], case: tuple[str, int, int, int, int],
                                               bom: bool, stream: bool, profile: str) -> None:
    text, offset, limit, cap, max_bytes = case
    ws = workspace()
    ws.put("f.txt", (BOM if bom else b"") + text.encode())
    config = {"read_limit": 10, "read_max_line_length": cap, "read_max_bytes": max_bytes}
    if stream:
        config["read_stream_min_size"] = 1
    ctx = dsh_fs.create_context(cwd=ws.path, profile=profile, **config)
    result = _execute(ctx, "read", {"file_path": "f.txt", "offset": offset, "limit": limit}, Session(ws.path))
    expected_error, expected = expected_read(text, offset, limit, cap, max_bytes, default=profile == "default")
    display = os.path.join(ws.path, "f.txt")
    if expected_error:
        assert result.is_error and result.text == "Error: " + expected.replace('"/f"', f'"{display}"')
    else:
        assert result.text == f"<path>{display}</path>\n<type>file</type>\n<content>\n{expected}\n</content>"
    ws.close()


# ==========================================================================================
# (c) a failed call leaves the workspace byte-identical
# ==========================================================================================

FILES = {"a.txt": b"alpha\nbeta\nbeta\n", "crlf.txt": b"one\r\ntwo\r\n", "bom.txt": BOM + b"b\n",
         "bin.dat": b"x" * 9000 + b"\x00", "bad.txt": b"caf\xe9\n", "sub/deep.txt": b"deep\n"}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8,
)
PARAMS = {"read": read_params(2000), "write": write_params(), "edit": edit_params()}


@st.composite
def invalid_arguments(draw: Any) -> tuple[str, Any]:
    tool = draw(st.sampled_from(["read", "write", "edit"]))
    keys = list(PARAMS[tool])
    args = draw(st.one_of(
        json_values,
        st.fixed_dictionaries({k: json_values for k in keys}),
        st.fixed_dictionaries({k: json_values for k in keys[:1]}),
    ))
    assume(not is_lossless_json(args) or validate(args, PARAMS[tool]))
    return tool, args


def _failing_steps(kind: str, draw: Any) -> tuple[list[Any], tuple[str, Any]]:
    """Setup steps (tool calls or external changes) and the failing call for ``kind``."""
    name = draw(st.sampled_from(["a.txt", "crlf.txt", "bom.txt", "sub/deep.txt"]))
    text = FILES[name].decode("utf-8-sig")
    word = text.split()[0]
    read = ("read", {"file_path": name})
    if kind == "stale-edit":
        return [read, ("external", name)], ("edit", {"file_path": name, "old_string": word, "new_string": "Q"})
    if kind == "stale-write":
        return [read, ("external", name)], ("write", {"file_path": name, "content": draw(st.text(max_size=8))})
    if kind == "deleted-edit":
        return [read, ("delete", name)], ("edit", {"file_path": name, "old_string": word, "new_string": "Q"})
    if kind == "deleted-write":
        return [read, ("delete", name)], ("write", {"file_path": name, "content": "recreated"})
    if kind == "unobserved-edit":
        return [], ("edit", {"file_path": name, "old_string": word, "new_string": "Q"})
    if kind == "unobserved-write":
        return [], ("write", {"file_path": name, "content": draw(st.text(max_size=8))})
    if kind == "not-found":
        return [read], ("edit", {"file_path": name, "old_string": "zz" + draw(st.text(max_size=4)), "new_string": "Q"})
    if kind == "ambiguous":
        return [("read", {"file_path": "a.txt"})], ("edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "Q"})
    if kind == "out-of-range":
        return [], ("read", {"file_path": name, "offset": draw(st.integers(4, 10**6))})
    if kind == "non-regular":
        target = draw(st.sampled_from(["sub", ".", "fifo"]))
        tool = draw(st.sampled_from(["read", "write", "edit"]))
        args = {"read": {"file_path": target}, "write": {"file_path": target, "content": "x"},
                "edit": {"file_path": target, "old_string": "x", "new_string": "y"}}[tool]
        return [], (tool, args)
    if kind == "non-text":
        target = draw(st.sampled_from(["bin.dat", "bad.txt"]))
        return [], ("edit", {"file_path": target, "old_string": "x", "new_string": "y", "replace_all": True})
    if kind == "through-file":
        return [], (draw(st.sampled_from(["read", "write"])), {"file_path": f"{name}/x", "content": "c"})
    if kind == "blank":
        return [], (draw(st.sampled_from(["read", "write", "edit"])),
                    {"file_path": draw(st.sampled_from(["", " ", "\t\n", "\u3000"])), "content": "c",
                     "old_string": "a", "new_string": "b"})
    if kind == "missing-edit":
        return [], ("edit", {"file_path": "nope/missing.txt", "old_string": "a", "new_string": "b"})
    if kind == "must-differ":
        return [read], ("edit", {"file_path": name, "old_string": word + "\r\n", "new_string": word + "\n"})
    if kind == "surrogate":
        return [read], ("write", {"file_path": name, "content": "x\ud800"})
    return [], draw(invalid_arguments())


KINDS = ["stale-edit", "stale-write", "deleted-edit", "deleted-write", "unobserved-edit", "unobserved-write", "not-found", "ambiguous",
         "out-of-range", "non-regular", "non-text", "through-file", "blank", "missing-edit", "must-differ",
         "surrogate", "invalid-args"]


@st.composite
def failing_calls(draw: Any) -> tuple[str, bool, list[Any], tuple[str, Any]]:
    kind = draw(st.sampled_from(KINDS))
    event(kind)
    profile = "default" if kind in ("must-differ", "surrogate") else draw(st.sampled_from(["default", "reference"]))
    policy = kind not in ("non-text", "missing-edit") or draw(st.booleans())
    steps, call = _failing_steps(kind, draw)
    return profile, policy, steps, call


@settings(max_examples=150, deadline=None, suppress_health_check=HEALTH, database=None)
@given(case=failing_calls())
def test_a_failed_call_leaves_the_workspace_byte_identical(workspace: Callable[[], Workspace],
                                                           case: tuple[str, bool, list[Any], tuple[str, Any]]) -> None:
    profile, policy, steps, (tool, args) = case
    ws = workspace()
    for name, data in FILES.items():
        os.makedirs(os.path.dirname(os.path.join(ws.path, name)), exist_ok=True)
        ws.put(name, data)
    os.mkfifo(os.path.join(ws.path, "fifo"))
    ctx = dsh_fs.create_context(cwd=ws.path, profile=profile, policy=policy)
    session = Session(ws.path)
    for step in steps:
        if step[0] == "external":
            path = os.path.join(ws.path, step[1])
            with open(path, "r+b") as handle:  # in place, same size: only ctime/mtime (or A5) can tell
                data = handle.read()
                handle.seek(0)
                handle.write(data.swapcase())
        elif step[0] == "delete":
            os.unlink(os.path.join(ws.path, step[1]))
        else:
            assert not _execute(ctx, step[0], step[1], session).is_error
    before = _snapshot(ws.path)
    result = _execute(ctx, tool, args, session)
    assert result.is_error, (tool, args, result.text)
    assert result.text.startswith("Error: ") and result.meta is None
    assert _snapshot(ws.path) == before, (tool, args, result.text)
    ws.close()

