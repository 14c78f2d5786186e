"""The far side's code (``far_helper``, ``fs_channel.boot``, ``fs_channel.bundle``): the
helper's handling of frames (unknown operations and malformed frames answered, never fatal;
streams held to their credit; control frames), S8's verdicts on printed paths, the bundle
(reproducible, holding everything the helper imports, loadable by a bare ``python -I -S``),
and the bootstrap's cache, hash checks and start-up answers (DEVIATIONS C1)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from io import BytesIO
from typing import Any

import pytest

from dsh_fs.far_helper import search, serve
from dsh_fs.fs_channel import boot, bundle
from dsh_fs.fs_channel.wire import FrameReader, ProtocolError, encode_frame
from dsh_fs.testing.channels import far_python
from dsh_fs.tool_fs_search.links import LinkFilter

pytestmark = pytest.mark.anyio


class Far:
    """A helper over a local provider on ``root``; what it sends is collected."""

    def __init__(self, root: str) -> None:
        self.out: asyncio.Queue[bytes] = asyncio.Queue()
        self.reader = FrameReader()
        self.root = root
        self.helper: Any = None

    async def open(self, **settings: Any) -> list[tuple[dict[str, Any], bytes]]:
        async def send(frame: bytes) -> None:
            self.out.put_nowait(frame)

        self.helper = await serve.start({"open": {"root": self.root, "cwd": self.root, "profile": "default",
                                                  **settings}}, send)
        return await self.frames(1)

    async def frames(self, count: int) -> list[tuple[dict[str, Any], bytes]]:
        got: list[tuple[dict[str, Any], bytes]] = []
        while len(got) < count:
            got += self.reader.feed(await asyncio.wait_for(self.out.get(), 30))
        return got

    def send(self, message: dict[str, Any], body: bytes = b"") -> None:
        self.helper.dispatch(message, body)


@pytest.fixture
def root(tmp_path: Any) -> str:
    path = os.path.realpath(os.path.join(str(tmp_path), "ws"))
    os.makedirs(path)
    with open(os.path.join(path, "a.txt"), "w", encoding="utf-8") as handle:
        handle.write("one\n")
    return path


async def test_the_open_frame_is_answered_ready_or_fail(root: str, tmp_path: Any) -> None:
    far = Far(root)
    [(ready, _)] = await far.open()
    assert ready["ready"]["root"] == root and ready["ready"]["roots"] == [root] and ready["ready"]["pid"] == os.getpid()
    assert ready["ready"]["python"] == ".".join(map(str, sys.version_info[:3]))
    await far.helper.stop()
    refused = Far(os.path.join(str(tmp_path), "missing"))
    [(fail, _)] = await refused.open()
    assert "is not a directory" in fail["fail"] and refused.helper is None
    odd = Far(root)
    [(fail, _)] = await odd.open(options={"shell": True})
    assert fail == {"fail": "ChannelFileSystem: unknown options ['shell']"}
    several = serve.open_provider_for({"roots": [root], "root": "/ignored", "profile": "reference"})
    assert several.workspace_roots() == (root,)


async def test_unknown_operations_and_bad_arguments_are_answered(root: str) -> None:
    far = Far(root)
    await far.open()
    far.send({"id": 1, "op": "format_disk"})
    far.send({"id": 2, "op": "stat", "a": {"t": "not a target"}})
    far.send({"id": 3, "op": 4})
    far.send({"id": 4, "op": "read_window", "a": {"t": [root + "/a.txt", root + "/a.txt"], "w": [1, 2, 3, 4, False, False]}})
    answers = {m["id"]: m["e"] for m, _ in await far.frames(4)}
    assert answers[1] == {"x": "ValueError", "m": "unknown operation 'format_disk'"}
    assert answers[2] == {"x": "ValueError", "m": "a target is not a [key, display path] pair"}
    assert answers[3] == {"x": "ValueError", "m": "unknown operation 4"}
    assert answers[4] == {"x": "ValueError", "m": "read_window needs the caller's info"}
    with pytest.raises(ProtocolError, match="neither a request nor a control frame"):
        far.send({"hello": 1})
    with pytest.raises(ProtocolError, match="a request id is not an integer"):
        far.send({"op": "stat", "id": "1"})
    far.send({"abort": 99})
    far.send({"cancel": 99})
    far.send({"more": 99, "n": 1})  # for requests that are not there: nothing happens
    far.send({"id": 5, "op": "ping"}, b"echo")
    assert await far.frames(1) == [({"id": 5, "r": None}, b"echo")]
    await far.helper.stop()


async def test_a_stream_never_runs_ahead_of_its_credit(root: str) -> None:
    with open(os.path.join(root, "big.bin"), "wb") as handle:
        handle.write(os.urandom(3 << 20))
    far = Far(root)
    await far.open()
    target = [root + "/big.bin", root + "/big.bin"]
    far.send({"id": 1, "op": "stream_bytes", "a": {"t": target, "n": 2}})
    got = await far.frames(2)
    while "r" not in got[-1][0]:
        await asyncio.sleep(0.05)
        if not far.out.empty():  # only the end comes without credit
            got += await far.frames(1)
            assert "r" in got[-1][0]
            break
        far.send({"more": 1, "n": 1})
        got += await far.frames(1)
    assert all(m == {"id": 1, "c": None} for m, _ in got[:-1]) and got[-1] == ({"id": 1, "r": None}, b"")
    with open(os.path.join(root, "big.bin"), "rb") as handle:
        assert b"".join(b for _, b in got) == handle.read()
    far.send({"id": 2, "op": "walk", "a": {"t": [root, root]}})
    walked = await far.frames(2)
    assert sorted(e[0] for e in walked[0][0]["c"]) == ["a.txt", "big.bin"] and walked[1][0] == {"id": 2, "r": None}
    far.send({"id": 3, "op": "stream_text", "a": {"t": [root + "/a.txt", root + "/a.txt"], "n": 4}})
    assert await far.frames(3) == [({"id": 3, "c": "one\n"}, b""), ({"id": 3, "c": ""}, b""), ({"id": 3, "r": None}, b"")]
    await far.helper.stop()


async def test_abort_and_cancel_frames_reach_the_request(root: str) -> None:
    far = Far(root)
    await far.open()
    target = [root + "/a.txt", root + "/a.txt"]
    far.send({"id": 1, "op": "write_text", "a": {"t": target, "s": "new\n", "x": None}, "aborted": True})
    [(answer, _)] = await far.frames(1)
    assert answer == {"id": 1, "e": {"c": "FS_ABORTED", "m": "read aborted"}}
    with open(os.path.join(root, "big.bin"), "wb") as handle:
        handle.write(b"x" * (3 << 20))
    far.send({"id": 2, "op": "stream_bytes", "a": {"t": [root + "/big.bin"] * 2, "n": 1}})
    await far.frames(1)
    far.send({"cancel": 2})
    for _ in range(6000):  # until the request is gone (60 s: a guard, not a budget)
        if 2 not in far.helper.tasks:
            break
        await asyncio.sleep(0.01)
    assert far.out.empty() and 2 not in far.helper.tasks  # cancelled: no answer
    far.send({"id": 3, "op": "stream_bytes", "a": {"t": [root + "/big.bin"] * 2, "n": 1}})
    await far.frames(1)
    far.send({"abort": 3})
    far.send({"more": 3, "n": 1000})
    frames = await far.frames(1)
    while "c" in frames[-1][0]:  # a chunk read before the abort was seen may still come
        frames += await far.frames(1)
    assert frames[-1][0] == {"id": 3, "e": {"c": "FS_ABORTED", "m": "read aborted"}}
    assert len(frames) < 3 << 4  # not the whole file
    await far.helper.stop()
    with open(os.path.join(root, "a.txt"), encoding="utf-8") as handle:
        assert handle.read() == "one\n"


def test_s8_verdicts_on_printed_paths(root: str) -> None:
    outside = os.path.join(os.path.dirname(root), "outside")
    os.makedirs(outside, exist_ok=True)
    os.symlink(outside, os.path.join(root, "out"))
    links = LinkFilter(root, root, check_files=True)
    lines = [b"a.txt", b"out/x.txt", b"", b"\xff.txt"]
    assert search.verdicts(lines, "paths", links, False) == (["out/x.txt"], 2)
    assert search.verdicts(lines, "paths", None, False) == ([], 3)
    assert search.verdicts(lines, "lines", links, False) == ([], 3)
    assert search.verdicts(lines, "none", links, False) == ([], 0)

    def match(path: str) -> bytes:
        return json.dumps({"type": "match", "data": {"path": {"text": path}, "lines": {"text": "x\n"},
                                                     "line_number": 1, "submatches": []}}).encode()

    grep = [match("a.txt"), match("out/x.txt"), b'{"type":"begin","data":{}}', b"{not json", b""]
    assert search.verdicts(grep, "matches", links, False) == (["out/x.txt"], 1)
    assert search.verdicts(grep, "matches", None, False) == ([], 2)


def test_the_directory_questions_stay_inside_the_roots(root: str) -> None:
    class Ops(search.SearchOps):
        def __init__(self, fs: Any) -> None:
            super().__init__()
            self.fs = fs

    confined = Ops(serve.open_provider_for({"root": root}))
    assert confined._inside(root) and confined._inside(root + "/a.txt") and confined._inside(root + "/nope")
    assert not confined._inside(os.path.dirname(root)) and not confined._inside(root + "x")
    os.symlink("/etc", os.path.join(root, "etc"))
    assert not confined._inside(root + "/etc/passwd")
    assert Ops(serve.open_provider_for({"root": None}))._inside("/etc")


def test_the_bundle_is_reproducible_and_holds_what_the_helper_imports(tmp_path: Any) -> None:
    made = bundle.bundle()
    assert made.digest == hashlib.sha256(made.data).hexdigest()
    bundle.bundle.cache_clear()
    assert bundle.bundle() == made  # built again: byte for byte
    with zipfile.ZipFile(BytesIO(made.data)) as archive:
        names = archive.namelist()
        assert names == sorted(names) and all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in archive.infolist())
    for name in ("dsh_fs/__init__.py", "dsh_fs/far_helper/serve.py", "dsh_fs/fs_local/filesystem.py",
                 "anyio/__init__.py", "sniffio/__init__.py", "typing_extensions.py", "pathspec/__init__.py"):
        assert name in names
    assert not any("__pycache__" in n or not n.endswith(".py") for n in names)
    assert bundle.boot_program().startswith('"""dsh-fs channel bootstrap')
    path = os.path.join(str(tmp_path), "bundle.zip")
    with open(path, "wb") as handle:
        handle.write(made.data)
    loader = (f"import sys; exec(open({bundle.boot_program.__module__!r}.replace('.', '/') and {boot.__file__!r}).read()"
              ".split('if __name__')[0]); data = open(sys.argv[1], 'rb').read(); files = sources(data); "
              "install(files, compiled(files, '/b', 'x' * 64, None), '/b'); "
              "import dsh_fs.far_helper.serve, dsh_fs.far_helper.search, dsh_fs.fs_local; "
              "import anyio; print(dsh_fs.far_helper.serve.__file__, anyio.__file__)")
    done = subprocess.run([far_python(), "-I", "-S", "-c", loader, path], capture_output=True, text=True,
                          env={"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.endswith("/b/dsh_fs/far_helper/serve.py /b/anyio/__init__.py\n")


def test_the_bootstraps_cache(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert boot.cache_dirs() == [str(tmp_path / "xdg" / "dsh-fs" / "helper"), str(tmp_path / "home" / ".cache" /
                                 "dsh-fs" / "helper"), f"/tmp/dsh-fs-{os.getuid()}/helper"]
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")
    assert boot.cache_dirs()[0] == str(tmp_path / "home" / ".cache" / "dsh-fs" / "helper")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    data = b"bundle bytes"
    digest = hashlib.sha256(data).hexdigest()
    assert boot.cached("b.zip", digest) is None
    boot.keep("b.zip", data)
    kept = os.path.join(boot.cache_dirs()[0], "b.zip")
    assert os.stat(kept).st_mode & 0o777 == 0o600 and os.stat(os.path.dirname(kept)).st_mode & 0o777 == 0o700
    assert boot.cached("b.zip", digest) == data
    with open(kept, "wb") as handle:
        handle.write(b"tampered")
    assert boot.cached("b.zip", digest) is None  # bytes that are not the hash's are never used
    os.chmod(os.path.dirname(kept), 0o500)  # the first cache cannot be written: the next one is
    try:
        if os.geteuid() != 0:
            boot.keep("c.zip", data)
            assert os.path.exists(os.path.join(boot.cache_dirs()[1], "c.zip"))
    finally:
        os.chmod(os.path.dirname(kept), 0o700)
    assert boot.sources(bundle.bundle().data)["dsh_fs/__init__.py"].startswith(b'"""dsh-fs')


def _boot(tmp_path: Any, frames: bytes, python: str | None = None) -> list[dict[str, Any]]:
    done = subprocess.run([python or far_python(), "-I", "-S", "-c", bundle.boot_program()], input=frames,
                          capture_output=True, env={"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "c")},
                          timeout=120)
    return [m for m, _ in FrameReader().feed(done.stdout)]


def test_the_bootstrap_answers(tmp_path: Any) -> None:
    made = bundle.bundle()
    opened = encode_frame({"open": {"root": str(tmp_path), "profile": "default"}})
    answers = _boot(tmp_path, encode_frame({"boot": {"hash": made.digest}}) + opened + encode_frame({}, b"not it"))
    assert answers[0] == {"need": True} and answers[1]["bad"].startswith("the bundle's SHA-256 is ")
    answers = _boot(tmp_path, encode_frame({"boot": {"hash": "nope"}}) + opened)
    assert answers == [{"bad": "the boot frame names no SHA-256"}]
    answers = _boot(tmp_path, encode_frame({"boot": {"hash": made.digest}}) + opened + encode_frame({}, made.data))
    assert answers[0] == {"need": True} and answers[1]["code"]["magic"] and "ready" in answers[2]
    hint = answers[1]["code"]
    again = _boot(tmp_path, encode_frame({"boot": {"hash": made.digest, "code": hint}}) + opened)
    assert len(again) == 1 and "ready" in again[0]  # the bundle and its code came from the cache
    wrong = _boot(tmp_path, encode_frame({"boot": {"hash": made.digest, "code": {**hint, "hash": "0" * 64}}}) + opened)
    assert "code" in wrong[0] and "ready" in wrong[1]  # a code cache of another hash: compiled again
    assert _boot(tmp_path, b"") == []  # stdin ended: a quiet end


def test_the_bootstrap_says_an_old_interpreter_is_old(tmp_path: Any) -> None:
    fake = os.path.join(str(tmp_path), "py")
    with open(fake, "w", encoding="ascii") as handle:
        handle.write(f"#!/bin/sh\nexec {far_python()} -I -S -c 'import sys; sys.version_info = (3, 10, 4, "
                     "\"final\", 0); exec(compile(sys.argv[1], \"<boot>\", \"exec\"))' \"$4\"\n")
    os.chmod(fake, 0o700)
    answers = _boot(tmp_path, encode_frame({"boot": {"hash": "a" * 64}}) + encode_frame({"open": {}}), python=fake)
    assert answers == [{"old": "3.10.4", "exe": far_python()}]
