"""Hostile arguments (tracker issue 4, item 5; REFERENCE-SPEC §5.3).

Hypothesis throws arbitrary JSON values and strings (lone surrogates, control characters,
NUL, huge and non-finite numbers, deep nesting, wrong shapes, unknown tools) at every tool —
through the registry in both profiles, and through a ``dsh-fs mcp`` server over stdio.
Each call runs in a fresh workspace (with a FIFO, links, a sibling directory outside the
root) and a snapshot before and after proves:

* nothing raises and nothing hangs (every call has a hard timeout);
* a failed call, and every read, changes nothing at all;
* a successful write or edit changes only its own target (and creates its missing parent
  directories); nothing outside the workspace root ever changes;
* over MCP, every request is answered (a result, or a JSON-RPC error for a malformed one).

Formerly a known gap: the MCP SDK's stdio transport drops, unanswered, requests its parser
rejects (lone surrogate escapes, nesting deeper than about 190). ``dsh-fs mcp`` now serves
stdio with its own transport (``dsh_fs.mcp.stdio``), and ``test_mcp_answers_every_request``
checks that every such request gets an answer.
"""

from __future__ import annotations

import collections
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dsh_fs
from dsh_fs import Session
from dsh_fs.fs_local import LocalFileSystem
from robustkit import RawMcp, call, child_env, needs_mcp, snapshot

pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")

ATHERIS_WHEEL = (sys.platform == "linux" and os.uname().machine == "x86_64") or sys.platform == "darwin"
"""where atheris ships a wheel, so the ``dev`` extra installs it (pyproject.toml's marker)"""

TOOLS = ["read", "write", "edit"]
KEYS = ["file_path", "content", "old_string", "new_string", "replace_all", "offset", "limit", "column"]

# -- strategies -------------------------------------------------------------------------------

SPECIAL_TEXT = [
    "", " ", "\t\n", "\0", "a\0b", "\ud800", "a\udfffb", "\ud83d\ude00", "\ufeff", "\r\n", "\r", "\x1b[2J",
    "\u2028", "\u202e", "alpha", "beta\n", "alpha\r\nbeta", "x" * 5000, "é" * 300,
]
PATHS = [
    "a.txt", "sub/b.txt", "new.txt", "sub/new/c.txt", "link", "in-dir/b.txt", "pipe", "sub", ".", "..",
    "../outside/x.txt", "../outside", "out-link", "out-link/x.txt", "/etc/passwd", "/", "/proc/self/status",
    "/dev/zero", "ünï.txt", "dangling", "a.txt/", "a.txt/x", "./a.txt", "sub//b.txt", "~", "n" * 300,
    "d/" * 2100 + "x", " a.txt", "a.txt ", "\\..\\a.txt", "%2e%2e/x",
]
NUMBERS = [0, -1, 1, 2, 2000, 2001, 2**31, 2**53 + 1, 2**63, 2**64, 10**308, 10**400, -(10**400),
           0.5, 1.0, -0.0, 1e308, float("inf"), float("-inf"), float("nan")]


def _nest(depth: int, as_dict: bool) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": value} if as_dict else [value]
    return value


def hostile_text(max_size: int = 40) -> st.SearchStrategy[str]:
    """Any code points (lone surrogates and control characters included) or a special string."""
    return st.one_of(
        st.text(st.characters(exclude_categories=()), max_size=max_size),  # incl. surrogates, Cc
        st.sampled_from(SPECIAL_TEXT),
    )


def json_values(*, lossless: bool = False) -> st.SearchStrategy[Any]:
    """Nested JSON-ish values; ``lossless`` leaves out NaN, infinities and numbers beyond a double."""
    numbers = st.one_of(st.integers(), st.sampled_from(NUMBERS), st.floats(allow_nan=not lossless,
                                                                           allow_infinity=not lossless))
    if lossless:
        numbers = numbers.filter(lambda n: not (isinstance(n, float) and (n != n or n in (float("inf"), float("-inf")))))
        numbers = numbers.filter(lambda n: not (isinstance(n, int) and abs(n) > 10**300))
    scalars = st.one_of(st.none(), st.booleans(), numbers, hostile_text())
    nested = st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(hostile_text(8), inner, max_size=4),
        max_leaves=12,
    )
    deep = st.builds(_nest, st.integers(min_value=50, max_value=3000), st.booleans())
    return st.one_of(nested, deep)


IN_FILE = ["alpha", "beta\n", "gamma", "a\nb", "ta\ng"]
"""unique substrings of the seeded ``a.txt``, so that some edits are valid"""
LIKELY_PATHS = ["a.txt", "link", "new.txt", "sub/new/c.txt", "in-dir/b.txt", "dangling"]


def calls(*, lossless: bool = False) -> st.SearchStrategy[tuple[str, Any]]:
    """``(tool name, arguments)``: often well-shaped for the tool, with hostile values."""
    values = json_values(lossless=lossless)
    paths = st.one_of(st.sampled_from(LIKELY_PATHS), st.sampled_from(PATHS), hostile_text(), values)
    texts = st.one_of(hostile_text(), values)
    olds = st.one_of(st.sampled_from(IN_FILE), texts)
    numbers = st.one_of(st.sampled_from(NUMBERS), st.integers(), values)
    read = st.fixed_dictionaries({"file_path": paths}, optional={"offset": numbers, "limit": numbers, "column": numbers})
    write = st.fixed_dictionaries({"file_path": paths, "content": texts})
    edit = st.fixed_dictionaries({"file_path": paths, "old_string": olds, "new_string": texts},
                                 optional={"replace_all": st.one_of(st.booleans(), values)})
    loose = st.dictionaries(st.one_of(st.sampled_from(KEYS), hostile_text(8)), values, max_size=6)
    anything = st.one_of(read, write, edit, loose, values)
    return st.one_of(
        st.tuples(st.just("read"), read),
        st.tuples(st.just("write"), write),
        st.tuples(st.just("edit"), edit),
        st.tuples(st.one_of(st.sampled_from(TOOLS), hostile_text(10)), anything),
    )


VALID = [
    ("read", {"file_path": "link", "offset": 2, "limit": 1}),
    ("write", {"file_path": "sub/new/c.txt", "content": "fresh\r\n\u2028\0 text"}),
    ("edit", {"file_path": "a.txt", "old_string": "beta\n", "new_string": "\x1b[2J"}),
]
"""calls that must succeed (run first in every property test, so that "a valid call may
write" is exercised on every run, not only when the generator hits one)"""


# -- the workspace ------------------------------------------------------------------------------


def _seed(base: str) -> str:
    """``base/ws`` (the root) and ``base/outside``; returns the root."""
    root = os.path.join(base, "ws")
    outside = os.path.join(base, "outside")
    for d in (root, outside, os.path.join(root, "sub")):
        os.makedirs(d, exist_ok=True)
    for path, text in ((os.path.join(root, "a.txt"), "alpha\nbeta\ngamma\n"),
                       (os.path.join(root, "sub", "b.txt"), "one alpha\ntwo alpha\n"),
                       (os.path.join(outside, "x.txt"), "outside\n")):
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    os.mkfifo(os.path.join(root, "pipe"))
    for name, target in (("link", "a.txt"), ("in-dir", "sub"), ("out-link", outside), ("dangling", "made.txt")):
        os.symlink(target, os.path.join(root, name))
    return root


def _release_fifo(root: str) -> None:
    try:
        os.close(os.open(os.path.join(root, "pipe"), os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


_TARGET = re.compile(r"^<path>(.*?)</path>\n<type>|^The file (.*) has been updated", re.DOTALL)


def _utf8(text: str) -> bytes:
    """UTF-8 of ``text`` with lone surrogates as U+FFFD (what a write stores, REFERENCE-SPEC §2.8)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


def check_effects(tool: str, args: Any, ok: bool, text: str, before: dict[str, Any], after: dict[str, Any],
                  base: str) -> None:
    """The invariants of one call, from snapshots of ``base`` (the root's parent)."""
    assert all(k.startswith("ws") or k == "." for k in set(before) ^ set(after)), "something changed outside"
    for key in before:
        if not key.startswith("ws") and key != ".":
            assert before[key] == after.get(key), f"{key} outside the root changed"
    if not ok or tool not in ("write", "edit") or not isinstance(args, dict):
        assert after == before, f"{tool} {args!r:.200} changed the workspace: {text[:200]!r}"
        return
    match = _TARGET.match(text)
    assert match is not None, text[:200]
    shown = match.group(1) or match.group(2)
    target = os.path.relpath(os.path.realpath(shown), base)
    assert target == "ws" or target.startswith("ws/"), f"wrote outside the root: {shown}"
    removed = set(before) - set(after)
    assert not removed, f"a successful {tool} removed {removed}"
    changed = {k for k in after if before.get(k) != after[k]}
    allowed = {target} | {os.path.dirname(target)} | {"ws", "."}
    parent = os.path.dirname(target)
    while parent not in ("", "."):
        allowed.add(parent)  # created parents and their mtimes
        parent = os.path.dirname(parent)
    assert changed <= allowed, f"{tool} changed more than its target {target}: {changed - allowed}"
    if tool == "write":
        with open(os.path.join(base, target), "rb") as handle:
            assert handle.read() == _utf8(args["content"]), "the file does not hold the written content"


# -- through the registry -------------------------------------------------------------------------

async def _one_call(base: str, profile: str, tool: str, args: Any) -> str:
    root = _seed(base)
    try:
        fs = LocalFileSystem(cwd=root, root=root, profile=profile)
        ctx = dsh_fs.create_context(provider=fs, profile=profile)
        session = Session(cwd=root)
        for seen in ("a.txt", "sub/b.txt", "link"):  # so that writes and edits can be valid
            assert not (await call(ctx, "read", {"file_path": seen}, session)).is_error
        before = snapshot(base)
        result = await call(ctx, tool, args, session, timeout=60)
        assert isinstance(result, dsh_fs.ToolResult)
        text = result.text
        assert text.encode("utf-8"), "every result encodes as UTF-8"
        if result.is_error:
            assert text.startswith("Error: ")
            assert result.meta is None
        check_effects(tool, args, not result.is_error, text, before, snapshot(base), base)
        return "ok" if not result.is_error else result.error.code if result.error else "plain error"
    finally:
        _release_fifo(root)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("profile", ["default", "reference"])
def test_registry_survives_hostile_arguments(tmp_path: Any, profile: str) -> None:
    top = os.path.realpath(str(tmp_path))

    outcomes: collections.Counter[str] = collections.Counter()

    def run(tool: str, args: Any) -> str:
        base = os.path.join(top, uuid.uuid4().hex)
        os.mkdir(base)
        try:
            return anyio.run(_one_call, base, profile, tool, args)
        finally:
            shutil.rmtree(base, ignore_errors=True)

    for tool, args in VALID:
        assert run(tool, args) == "ok", (tool, args)

    @settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(call_=calls())
    def one(call_: tuple[str, Any]) -> None:
        tool, args = call_
        outcomes[f"{tool[:8]!r} {run(tool, args)}"] += 1

    one()
    print(f"{profile}: {sorted(outcomes.items())}")


@pytest.mark.timeout(120)
def test_registry_batches_of_hostile_calls(tmp_path: Any) -> None:
    """The batch scheduler too: hostile calls mixed with reads, results in model order."""
    top = os.path.realpath(str(tmp_path))

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(batch_calls=st.lists(calls(), min_size=1, max_size=6))
    def batch(batch_calls: list[tuple[str, Any]]) -> None:
        base = os.path.join(top, uuid.uuid4().hex)
        os.mkdir(base)

        async def run() -> None:
            root = _seed(base)
            try:
                ctx = dsh_fs.create_context(provider=LocalFileSystem(cwd=root, root=root))
                outside = snapshot(os.path.join(base, "outside"))
                with anyio.fail_after(60):
                    results = await ctx.tools.execute_batch(
                        [dsh_fs.ToolCall(name=t, arguments=a) for t, a in batch_calls], session=Session(cwd=root)
                    )
                assert len(results) == len(batch_calls)
                assert all(not r.is_error or r.text.startswith("Error: ") for r in results)
                assert snapshot(os.path.join(base, "outside")) == outside
            finally:
                _release_fifo(root)

        try:
            anyio.run(run)
        finally:
            shutil.rmtree(base, ignore_errors=True)

    batch()


# -- through the MCP server ----------------------------------------------------------------------------

def _reset(base: str) -> str:
    """Empty ``base`` (keeping ``base/ws`` itself, the server's root) and seed it again."""
    for name in os.listdir(base):
        path = os.path.join(base, name)
        if name == "ws":
            for entry in os.listdir(path):
                full = os.path.join(path, entry)
                if os.path.isdir(full) and not os.path.islink(full):
                    shutil.rmtree(full)
                else:
                    os.unlink(full)
        elif os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    return _seed(base)


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
    return deepest


def _parseable_by_the_sdk(value: Any) -> bool:
    """Valid JSON the MCP SDK's own parser accepts: no NaN, no lone surrogate, not too deep
    (our stdio transport answers the rest too: see ``test_mcp_answers_every_request``)."""
    if _depth(value) > 150:
        return False
    try:
        json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (ValueError, RecursionError):
        return False
    return True


raw_names = st.one_of(st.sampled_from(TOOLS).map(json.dumps), st.sampled_from(TOOLS).map(json.dumps),
                      json_values(lossless=True).filter(_parseable_by_the_sdk).map(json.dumps))


@needs_mcp
@pytest.mark.timeout(600)
def test_mcp_server_survives_hostile_arguments(tmp_path: Any) -> None:
    """Raw JSON-RPC ``tools/call`` requests (any name, any arguments value, or none) to one
    ``dsh-fs mcp`` server: every request is answered, with the same invariants."""
    base = os.path.realpath(str(tmp_path))
    root = _seed(base)
    server = RawMcp(root)
    outcomes: collections.Counter[str] = collections.Counter()

    def run(name_json: str, args: Any, *, leave_out: bool = False) -> str:
        _release_fifo(root)
        _reset(base)
        for seen in ("a.txt", "sub/b.txt", "link"):
            reply = server.call('"read"', json.dumps({"file_path": seen}))
            assert reply["result"]["isError"] is False, reply
        before = snapshot(base)
        reply = server.call(name_json, None if leave_out else json.dumps(args))
        assert ("result" in reply) != ("error" in reply), reply
        if "error" in reply:  # a protocol error for a malformed request (e.g. a name that is not a string)
            assert snapshot(base) == before
            return "protocol error"
        result = reply["result"]
        text = "".join(block.get("text", "") for block in result["content"])
        ok = result.get("isError") is False
        if not ok:
            assert text.startswith("Error: "), text
        tool = json.loads(name_json)
        check_effects(tool if isinstance(tool, str) else "?", args, ok, text, before, snapshot(base), base)
        return "ok" if ok else result.get("_meta", {}).get("dsh_fs", {}).get("error", {}).get("code", "plain error")

    try:
        for tool, args in VALID:
            assert run(json.dumps(tool), args) == "ok", (tool, args)

        @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(call_=calls(lossless=True).filter(lambda c: _parseable_by_the_sdk(c[1])), name=raw_names,
               keep_name=st.booleans())
        def one(call_: tuple[str, Any], name: str, keep_name: bool) -> None:
            tool, args = call_
            outcomes[run(json.dumps(tool) if keep_name or tool not in TOOLS else name, args)] += 1

        one()
        assert run('"read"', None, leave_out=True) in ("INVALID_ARGS", "protocol error")
        # still alive and well after all of it
        assert run('"read"', {"file_path": "a.txt"}) == "ok"
    finally:
        _release_fifo(root)
        server.close()
    print(sorted(outcomes.items()))


UNANSWERED = [  # requests the MCP SDK's stdio transport dropped unanswered
    ("lone surrogate in file_path", '"read"', '{"file_path":"\\ud800"}'),
    ("lone surrogate in content", '"write"', '{"file_path":"x.txt","content":"a\\udc00b"}'),
    ("lone surrogate in the tool name", '"\\ud800"', "{}"),
    ("arguments nested 5000 deep", '"read"', '{"file_path":' + "[" * 5000 + "]" * 5000 + "}"),
]


@needs_mcp
@pytest.mark.timeout(60)
@pytest.mark.parametrize(("case", "name_json", "args_json"), UNANSWERED, ids=[c for c, _, _ in UNANSWERED])
def test_mcp_answers_every_request(tmp_path: Any, case: str, name_json: str, args_json: str) -> None:
    base = os.path.realpath(str(tmp_path))
    root = _seed(base)
    server = RawMcp(root)
    try:
        before = snapshot(base)
        reply = server.call(name_json, args_json)  # bounded by the test timeout, not a load-dependent budget
        if "result" in reply:
            assert reply["result"]["isError"] is True, reply
        else:
            assert "error" in reply, reply
        assert snapshot(base) == before
        assert server.call('"read"', '{"file_path":"a.txt"}')["result"]["isError"] is False
    finally:
        _release_fifo(root)
        server.close()


# -- atheris ----------------------------------------------------------------------------------------------

@pytest.mark.timeout(120)
@pytest.mark.skipif(not ATHERIS_WHEEL, reason="atheris ships no wheel for this platform")
def test_atheris_fuzz_of_the_pure_modules(tmp_path: Any) -> None:
    """A short libFuzzer run of ``fuzz_pure.py`` (atheris is in the ``dev`` extra wherever it
    ships a wheel; the test is defined only there, see ``ATHERIS_WHEEL``)."""
    assert importlib.util.find_spec("atheris") is not None, "atheris is in the dev extra: pip install -e '.[dev]'"
    proc = subprocess.run(
        [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz_pure.py"), "-runs=20000", "-max_total_time=30",
         f"-artifact_prefix={tmp_path}/"],
        cwd=str(tmp_path), env=child_env(), capture_output=True, text=True, timeout=100,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert re.search(r"^Done \d+ runs", proc.stderr, re.MULTILINE), proc.stderr[-2000:]
