"""Our ``initialize`` answer (``wire.initialize_answer``, DEVIATIONS M2) held to the official SDK,
its oracle.

Covers: the copied version lists and capabilities equal the SDK's; for generated ``initialize``
requests (hypothesis), whenever we answer, the bytes are exactly the SDK server's answer to the
same line (the real low-level ``Server`` behind the stdio server with every line sent to it,
in process); what is left to the SDK; that the first answer is written with no SDK module loaded,
and that ``dsh-fs mcp --bogus`` loads none either (the stdio modules and the codec at load time:
``tests/unit/dsh_fs/test_house.py``); that over a real ``dsh-fs mcp`` process the answered ``initialize`` is not
answered twice and a first line that is not an ``initialize`` is served as before. Not here:
timing (``bench/run.py``).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import anyio
import mcp_types.version as sdk_versions
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dsh_fs
from dsh_fs import __version__
from dsh_fs.mcp.stdio import serve_stdio
from dsh_fs.mcp.wire import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    SERVER_CAPABILITIES,
    initialize_answer,
    negotiate,
    server_instructions,
)


def test_the_copied_versions_are_the_sdks() -> None:
    assert HANDSHAKE_PROTOCOL_VERSIONS == sdk_versions.HANDSHAKE_PROTOCOL_VERSIONS
    assert LATEST_HANDSHAKE_VERSION == sdk_versions.LATEST_HANDSHAKE_VERSION
    assert [negotiate(v) for v in ("2025-06-18", "2026-07-28", "x")] == ["2025-06-18", "2025-11-25", "2025-11-25"]


def test_the_capabilities_are_what_the_sdk_server_announces(tmp_path: Any) -> None:
    ctx = dsh_fs.create_context(root=str(tmp_path))
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}})
        (answer,) = _sdk_answers(ctx, [line.encode() + b"\n"])
        assert json.loads(answer["line"])["result"]["capabilities"] == SERVER_CAPABILITIES


def _sdk_answers(ctx: dsh_fs.Context, lines: list[bytes]) -> list[dict[str, Any]]:
    """The SDK server's replies to ``lines`` (the stdio server, every line to the SDK), as raw
    lines keyed by nothing: in the order written, each with its parsed id."""
    out = io.BytesIO()
    serve_stdio(ctx, root=os.getcwd(), stdin=io.BytesIO(b"".join(lines)), stdout=out, sdk_only=True)
    return [{"id": json.loads(line)["id"], "line": line.decode("utf-8")} for line in out.getvalue().splitlines()]


_KEYS = st.sampled_from(["roots", "sampling", "elicitation", "experimental", "tasks", "extensions", "listChanged",
                         "list_changed", "context", "tools", "form", "url", "list", "x-custom"])
_LEAF = st.one_of(st.booleans(), st.none(), st.integers(-3, 3), st.text(max_size=3))
_CAPABILITIES = st.recursive(st.dictionaries(_KEYS, _LEAF, max_size=3),
                             lambda inner: st.dictionaries(_KEYS, st.one_of(inner, _LEAF), max_size=3), max_leaves=8)
_CAPABILITIES_OK = st.recursive(st.just({}), lambda inner: st.dictionaries(_KEYS.filter(lambda k: "ist" not in k or k == "list"), inner, max_size=3), max_leaves=6).map(
    lambda caps: {**caps, "roots": {"listChanged": True}})
_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=8)
_CLIENT_INFO = st.fixed_dictionaries(
    {"name": st.one_of(_TEXT, st.integers())},
    optional={"version": st.one_of(_TEXT, st.none()), "title": st.one_of(_TEXT, st.integers()),
              "websiteUrl": _TEXT, "description": _TEXT, "icons": st.just([]), "extra": _LEAF},
)
_PARAMS = st.fixed_dictionaries(
    {"protocolVersion": st.one_of(st.sampled_from([*sdk_versions.KNOWN_PROTOCOL_VERSIONS, "1999-01-01"]), _TEXT),
     "capabilities": st.one_of(_CAPABILITIES_OK, _CAPABILITIES),
     "clientInfo": st.one_of(_CLIENT_INFO, st.just({"name": "c", "version": "1"}))},
    optional={"_meta": st.just({})},
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(st.tuples(_PARAMS, st.booleans(), st.booleans()), min_size=1, max_size=12))
def test_every_early_answer_is_the_sdks_own_answer_byte_for_byte(tmp_path_factory: Any, batch: list[Any]) -> None:
    root = str(tmp_path_factory.mktemp("ws"))
    ctx = dsh_fs.create_context(root=root)
    lines, expected = [], {}
    for index, (params, string_id, ascii_only) in enumerate(batch):
        request_id: str | int = f"r{index}é" if string_id else index
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params},
                          ensure_ascii=ascii_only).encode("utf-8")
        lines.append(line + b"\n")
        early = initialize_answer(line, version=__version__, instructions=server_instructions(ctx))
        if early is not None:
            assert early[0] == request_id
            expected[request_id] = early[1]
    answers = {answer["id"]: answer["line"] for answer in _sdk_answers(ctx, lines)}
    for request_id, line in expected.items():
        assert answers[request_id] == line


def test_plain_handshakes_of_real_clients_are_answered_early_as_the_sdk_answers(tmp_path: Any) -> None:
    """The handshakes real clients send (the SDK's, the Inspector's, LangChain's adapter's
    shape), in both profiles and with a tool subset: each answered early, exactly."""
    messages = [
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "mcp", "version": "0.1.0"}},
        {"protocolVersion": "2025-06-18", "capabilities": {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}},
         "clientInfo": {"name": "inspector-client", "version": "0.17.0", "title": "Inspector"}},
        {"protocolVersion": "2024-11-05", "capabilities": {"experimental": {"x": {}}}, "clientInfo": {"name": "n", "version": "v"}},
    ]
    for profile, policy in (("default", True), ("reference", True), ("default", False)):
        ctx = dsh_fs.create_context(root=str(tmp_path), profile=profile, policy=policy)
        lines = [json.dumps({"jsonrpc": "2.0", "id": i, "method": "initialize", "params": p}).encode() for i, p in enumerate(messages)]
        answers = [a["line"] for a in _sdk_answers(ctx, [line + b"\n" for line in lines])]
        early = [initialize_answer(line, version=__version__, instructions=server_instructions(ctx)) for line in lines]
        assert [e[1] if e else None for e in early] == answers


@pytest.mark.parametrize("message", [
    {"jsonrpc": "2.0", "id": True, "method": "initialize", "params": {}},
    {"jsonrpc": "2.0", "id": 2**53, "method": "initialize",
     "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}},
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}},
    {"jsonrpc": "2.0", "id": 1, "method": "ping"},
    {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}},
    {"jsonrpc": "2.0", "method": "initialize",
     "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}},
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",  # the SDK types experimental's members as objects
     "params": {"protocolVersion": "2024-11-05", "capabilities": {"roots": {}, "experimental": {"listChanged": False}},
                "clientInfo": {"name": "c", "version": "1"}}},
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-11-25", "capabilities": {"extensions": {"listChanged": True}},
                "clientInfo": {"name": "c", "version": "1"}}},
], ids=["bool-id", "huge-id", "missing-params", "ping", "discover", "notification", "experimental-flag",
        "extensions-flag"])
def test_what_the_early_path_leaves_to_the_sdk(message: dict[str, Any]) -> None:
    assert initialize_answer(json.dumps(message).encode(), version="1", instructions=None) is None


def test_duplicate_keys_and_surrogates_are_left_to_the_sdk() -> None:
    good = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"c","version":"1"}}%s}'
    assert initialize_answer((good % ("2025-11-25", "")).encode(), version="1", instructions=None) is not None
    assert initialize_answer((good % ("\\ud800", "")).encode(), version="1", instructions=None) is None
    assert initialize_answer((good % ("2025-11-25", ',"id":2')).encode(), version="1", instructions=None) is None
    assert initialize_answer(b"\xff" + (good % ("2025-11-25", "")).encode(), version="1", instructions=None) is None


def test_the_first_answer_is_written_before_the_sdk_is_loaded(tmp_path: Any) -> None:
    """The ``initialize`` answer, before the event loop starts: nothing of the SDK or pydantic
    is loaded, nor anyio's event loop backend, when it is written (the stdio server's writer is
    watched in the child)."""
    script = textwrap.dedent("""
        import sys
        import dsh_fs
        from dsh_fs.mcp.stdio import pipe, serve_stdio
        written = []
        blocking = pipe.LineWriter.write_blocking

        def watch(self, data):
            written.append(sorted(m for m in sys.modules if m == "mcp" or m.startswith(("mcp.", "mcp_types", "pydantic", "anyio._backends"))))
            blocking(self, data)

        pipe.LineWriter.write_blocking = watch
        serve_stdio(dsh_fs.create_context(root=sys.argv[1]), root=sys.argv[1])
        print(written, file=sys.stderr)
    """)
    line = b'{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}\n'
    env = {**os.environ, "DSH_FS_MCP_TEST_HOLD_IMPORT": str(tmp_path / "hold")}
    (tmp_path / "hold").touch()
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], input=line, capture_output=True, timeout=60,
                          env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["id"] == 7
    assert done.stderr.decode().strip().endswith("[[]]"), done.stderr


def test_a_usage_error_imports_no_sdk_module() -> None:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "dsh_fs.cli.main", "mcp", "--bogus"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "Error: No such option '--bogus'." in done.stderr
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert "click" in imported and not [m for m in imported if m == "mcp" or m.startswith(("mcp.", "mcp_types"))]


def _server(root: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "DSH_FS_SESSION"}
    return subprocess.Popen([sys.executable, "-m", "dsh_fs.cli.main", "mcp", "--root", root], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def test_a_real_server_answers_the_early_initialize_once(tmp_path: Any) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}
    proc = _server(str(tmp_path))
    out, err = proc.communicate(
        (json.dumps(init) + '\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
         '{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n').encode(), timeout=60)
    replies = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in replies] == [1, 2], replies
    assert replies[0]["result"]["protocolVersion"] == "2025-06-18"
    assert [t["name"] for t in replies[1]["result"]["tools"]] == ["edit", "glob", "grep", "list", "read", "write"]
    assert b"differs" not in err and b"not its initialize reply" not in err, err


def test_a_first_line_that_is_not_an_initialize_is_served_as_before(tmp_path: Any) -> None:
    proc = _server(str(tmp_path))
    out, _ = proc.communicate(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n{"jsonrpc":"2.0","id":2,"method":"ping"}'
                              b'\nnot json\n', timeout=60)
    replies = {reply["id"]: reply for reply in map(json.loads, out.splitlines())}  # the parse error's id: null
    assert replies[1] == {"jsonrpc": "2.0", "id": 1,
                          "error": {"code": -32602, "message": "Invalid request parameters", "data": ""}}
    assert replies[2] == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert replies[None]["error"]["code"] == -32700 and len(replies) == 3
