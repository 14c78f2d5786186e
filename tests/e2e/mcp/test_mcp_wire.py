"""The exact JSON ``dsh-fs mcp`` puts on the wire (raw JSON-RPC lines over its stdio pipe):
``initialize`` instructions, ``tools/list`` (schemas verbatim, annotations, nothing added) and
``tools/call`` results (only our text block is model-visible; meta under ``_meta.dsh_fs``;
tool failures, unknown tools and non-object arguments are results, not protocol errors);
number literals read as JavaScript's ``JSON.parse`` reads them (issue 13, item 4).

The expected schemas and prompt come from ``dsh_fs.create_context`` with the same settings,
not from the MCP package. Not covered: HTTP (``test_mcp_http.py``), tool semantics
(``test_mcp_tools.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

import dsh_fs
from mcp_support import RawStdio
from spectext import FULL_TOOL_GUIDANCE, FULL_TOOL_GUIDANCE_UNGUARDED

pytestmark = pytest.mark.timeout(60)

from dsh_fs.tool_fs.list_tool import LIST_PROMPT  # noqa: E402

CONFIGS = [
    pytest.param([], {}, LIST_PROMPT + "\n\n" + FULL_TOOL_GUIDANCE, id="default"),  # L1: list first
    pytest.param(
        ["--profile", "reference", "--no-policy", "--read-limit", "7"],
        {"profile": "reference", "policy": False, "read_limit": 7},
        FULL_TOOL_GUIDANCE,
        id="reference-bare-limit7",
    ),
    pytest.param(["--no-policy"], {"policy": False}, LIST_PROMPT + "\n\n" + FULL_TOOL_GUIDANCE_UNGUARDED,
                 id="default-bare"),
]


def _keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys(item)


@pytest.fixture(scope="module")
def root(tmp_path_factory: Any) -> str:
    ws = os.path.realpath(tmp_path_factory.mktemp("wire"))
    with open(os.path.join(ws, "a.txt"), "w", encoding="utf-8") as handle:
        handle.write("one\ntwo\n")
    return ws


@pytest.fixture(scope="module")
def server(root: str) -> Iterator[RawStdio]:
    """One default-profile server for the call tests (each test uses its own files)."""
    with RawStdio(root) as raw:
        raw.initialize()
        yield raw


@pytest.mark.parametrize(("flags", "settings", "instructions"), CONFIGS)
def test_initialize_and_tools_list(root: str, flags: list[str], settings: dict[str, Any], instructions: str) -> None:
    """``instructions`` is the tools' guidance only (no agent identity), describing the
    deployment (D14: no policy, no claim that one requires reading); ``tools/list`` carries
    our schemas verbatim."""
    expected = dsh_fs.create_context(cwd=root, **settings)
    with RawStdio(root, *flags) as raw:
        initialized = raw.initialize()["result"]
        listed = raw.request("tools/list")

    assert initialized["instructions"] == instructions == expected.system_prompt.render(only="tool:")
    assert "DeepSeek Harness SDK" not in initialized["instructions"]
    assert initialized["serverInfo"]["name"] == "dsh-fs"
    assert initialized["serverInfo"]["version"] == dsh_fs.__version__
    assert initialized["capabilities"]["tools"] is not None

    schemas = expected.tools.schemas()
    assert set(listed) == {"jsonrpc", "id", "result"}
    tools = listed["result"]["tools"]
    assert [t["name"] for t in tools] == [s["name"] for s in schemas]
    for tool, schema in zip(tools, schemas):
        assert set(tool) == {"name", "description", "inputSchema", "annotations"}
        assert tool["description"] == schema["description"]
        assert tool["inputSchema"] == schema["parameters"]
        assert "title" not in set(_keys(tool))
    annotations = {t["name"]: t["annotations"] for t in tools}
    assert annotations["read"] == {"readOnlyHint": True, "openWorldHint": False}
    if "list" in annotations:  # the default profile's list (L1) is read-only too
        assert annotations["list"] == {"readOnlyHint": True, "openWorldHint": False}
    mutation = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": False}
    assert annotations["write"] == mutation
    assert annotations["edit"] == mutation
    assert annotations["glob"] == annotations["grep"] == annotations["read"]


def test_call_results_show_the_model_only_our_text(root: str, server: RawStdio) -> None:
    read = server.request("tools/call", {"name": "read", "arguments": {"file_path": "a.txt"}})["result"]
    edit = server.request(
        "tools/call", {"name": "edit", "arguments": {"file_path": "a.txt", "old_string": "two", "new_string": "2"}}
    )["result"]
    again = server.request(
        "tools/call", {"name": "write", "arguments": {"file_path": "a.txt", "content": "x"}}
    )["result"]  # the session observed its own edit: this overwrite is allowed
    missing = server.request("tools/call", {"name": "read", "arguments": {"file_path": "nope.txt"}})["result"]

    assert read == {
        "content": [
            {"type": "text", "text": f"<path>{root}/a.txt</path>\n<type>file</type>\n<content>\n1: one\n2: two\n\n"
             "(End of file - total 2 lines)\n</content>"}
        ],
        "isError": False,
    }
    assert set(edit) == {"content", "isError", "_meta"}
    assert edit["content"] == [{"type": "text", "text": f"The file {root}/a.txt has been updated successfully."}]
    assert edit["isError"] is False
    assert edit["_meta"] == {"dsh_fs": {"diffs": [{"path": "a.txt", "oldText": "one\ntwo", "newText": "one\n2"}]}}
    assert again["isError"] is False
    assert missing == {
        "content": [{"type": "text", "text": f'Error: cannot read "{root}/nope.txt": not found'}],
        "isError": True,
        "_meta": {"dsh_fs": {"error": {"name": "FsError", "code": "FS_NOT_FOUND"}}},
    }
    with open(os.path.join(root, "a.txt"), encoding="utf-8") as handle:
        assert handle.read() == "x"


@pytest.mark.parametrize("arguments", ["a.txt", 5, [], None, True])
def test_non_object_arguments_are_a_tool_error_not_a_protocol_error(server: RawStdio, arguments: Any) -> None:
    response = server.request("tools/call", {"name": "read", "arguments": arguments})
    assert "error" not in response
    assert response["result"] == {
        "content": [{"type": "text", "text": 'Error: invalid arguments: "arguments" must be an object'}],
        "isError": True,
        "_meta": {"dsh_fs": {"error": {"name": "ToolArgsError", "code": "INVALID_ARGS"}}},
    }


def test_absent_arguments_are_an_empty_object_and_unknown_tools_are_results(server: RawStdio) -> None:
    absent = server.request("tools/call", {"name": "read"})
    unknown = server.request("tools/call", {"name": "find", "arguments": {"pattern": "x"}})
    wrong_types = server.request(
        "tools/call", {"name": "read", "arguments": {"file_path": "a.txt", "offset": "2", "limit": True}}
    )
    assert absent["result"]["content"][0]["text"] == 'Error: invalid arguments: missing required property "file_path"'
    assert unknown["result"]["isError"] is True
    assert unknown["result"]["content"][0]["text"] == 'Error: unknown tool "find"'
    assert unknown["result"]["_meta"] == {"dsh_fs": {"error": {"name": "ToolNotFoundError", "code": "UNKNOWN_TOOL"}}}
    assert wrong_types["result"]["content"][0]["text"] == (
        'Error: invalid arguments: "offset" must be a number; "limit" must be a number'
    )


@pytest.mark.parametrize(
    ("literal", "text"),
    [
        ("-0", "Error: tool execution arguments must be losslessly JSON-serializable"),
        ("-0.0", "Error: tool execution arguments must be losslessly JSON-serializable"),
        ("1e400", "Error: tool execution arguments must be losslessly JSON-serializable"),
        ("NaN", "Error: tool execution arguments must be losslessly JSON-serializable"),
        ("1" + "0" * 400, "Error: tool execution arguments must be losslessly JSON-serializable"),
        ("1e2", 'Error: offset 100 is out of range for "{a}" (2 lines)'),
        ("12345678901234567890", 'Error: offset 12345678901234567000 is out of range for "{a}" (2 lines)'),
        ("1.5", "Error: offset must be a positive integer"),
    ],
)
def test_number_literals_get_the_reference_answer(root: str, server: RawStdio, literal: str, text: str) -> None:
    """docs/JSON-NUMBERS.md: ``-0`` is negative zero (not lossless), a huge integer its double."""
    with open(os.path.join(root, "numbers.txt"), "w", encoding="utf-8") as handle:
        handle.write("one\ntwo\n")
    response = server.request("tools/call", params_json=f'{{"name": "read", "arguments": {{"file_path": "numbers.txt", '
                                                         f'"offset": {literal}}}}}')
    assert response["result"]["isError"] is True
    assert response["result"]["content"] == [{"type": "text", "text": text.format(a=os.path.join(root, "numbers.txt"))}]
