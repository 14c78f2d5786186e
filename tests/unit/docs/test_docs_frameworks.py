"""The smolagents, Google ADK and CrewAI programs of docs/FRAMEWORKS.md, run exactly as printed.

Each ``python`` block of its "smolagents, Google ADK and CrewAI" section runs in a
workspace whose README.md has a typo, against a scripted model: its first reply reads
README.md, its second fixes the typo with ``edit``, its third is the final answer. The test
checks what the program printed, the file on disk, and that the model got the registry's
tools and exactly the tools' results. No network, no API key:

* smolagents: the real ``openai.OpenAI`` client on an in-memory transport;
* Google ADK: the real Gemini client against a scripted ``generateContent`` API on
  127.0.0.1 (``GOOGLE_GEMINI_BASE_URL``);
* CrewAI: the program in CrewAI's own environment (``crewaikit``) against a scripted Chat
  Completions API on 127.0.0.1 (``DEEPSEEK_BASE_URL``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

import dsh_fs
from crewaikit import run_program
from docskit import DOCS, EDIT_ARGS, FIXED, READ_ARGS, blocks_by_marker, run_printed, typo_results, typo_workspace
from stubapi import StubApi, gemini_reply
from stubapi import chat_completion

def _examples() -> dict[str, str]:
    """The section's python blocks, keyed by the framework each one uses."""
    return blocks_by_marker("### smolagents, Google ADK and CrewAI", {"DshFsToolCollection": "smolagents",
                                                                      "DshFsToolset": "google-adk",
                                                                      "DshFsToolkit": "crewai"},
                            DOCS / "FRAMEWORKS.md")


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    return typo_workspace(tmp_path, monkeypatch)


def _schemas(ws: str) -> list[dict[str, Any]]:
    return dsh_fs.create_context(root=ws).tools.schemas()


def test_smolagents_example(ws: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import openai

    code = {"read": 'print(read(file_path="README.md"))',
            "edit": 'print(edit(file_path="README.md", old_string="teh", new_string="the"))',
            "final": 'final_answer("Fixed the typo.")'}
    replies = [chat_completion(None, f"Thought: next.\n<code>\n{code[step]}\n</code>") for step in ("read", "edit", "final")]
    sent: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(request.content))
        return httpx2.Response(200, json=replies.pop(0))

    real = openai.OpenAI
    made: list[dict[str, Any]] = []

    def client(**kwargs: Any) -> Any:
        made.append(kwargs)
        return real(**kwargs, http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))

    monkeypatch.setattr(openai, "OpenAI", client)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-test")
    monkeypatch.setenv("DEEPSEEK_API_BASE", "http://127.0.0.1:8000/v1")  # the model server's address
    run_printed(_examples()["smolagents"])
    read, edited = typo_results(ws)
    assert capsys.readouterr().out.rstrip("\n").splitlines()[-1] == "Fixed the typo."
    assert Path(ws, "README.md").read_text() == FIXED
    assert made == [{"base_url": "http://127.0.0.1:8000/v1", "api_key": "sk-test", "organization": None,
                     "project": None}]
    assert json.dumps(read)[1:-1] in json.dumps(sent[1]["messages"])
    assert json.dumps(edited)[1:-1] in json.dumps(sent[2]["messages"])


def _gemini_replies() -> Iterator[dict[str, Any]]:
    yield gemini_reply([{"functionCall": {"id": "c1", "name": "read", "args": READ_ARGS}}])
    yield gemini_reply([{"functionCall": {"id": "c2", "name": "edit", "args": EDIT_ARGS}}])
    yield gemini_reply([{"text": "Fixed the typo."}])


def test_google_adk_example(ws: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    replies = _gemini_replies()
    api = StubApi(lambda path, body: next(replies))
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", api.url)
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    try:
        run_printed(_examples()["google-adk"])
    finally:
        api.close()
    read, edited = typo_results(ws)
    assert capsys.readouterr().out == "Fixed the typo.\n"
    assert Path(ws, "README.md").read_text() == FIXED
    paths = [path for path, _ in api.requests]
    assert paths == ["/v1beta/models/gemini-2.5-flash:generateContent"] * 3
    bodies = [body for _, body in api.requests]
    for body in bodies:
        (tool,) = body["tools"]
        declared = [{"name": d["name"], "description": d["description"], "parameters": d["parameters_json_schema"]}
                    for d in tool["functionDeclarations"]]
        assert declared == _schemas(ws)
    responses = [part["functionResponse"] for content in bodies[2]["contents"] for part in content["parts"]
                 if "functionResponse" in part]
    assert [r["response"] for r in responses] == [{"result": read}, {"result": edited}]


@pytest.mark.timeout(1800)  # may build the CrewAI environment first
def test_crewai_example(ws: str, tmp_path: Path) -> None:
    calls = iter([("c1", "read", READ_ARGS), ("c2", "edit", EDIT_ARGS)])

    def answer(path: str, body: dict[str, Any]) -> dict[str, Any]:
        step = next(calls, None)
        if step is None:
            return chat_completion(None, "Fixed the typo.")
        call_id, name, arguments = step
        return chat_completion({"id": call_id, "type": "function",
                                "function": {"name": name, "arguments": json.dumps(arguments)}})

    api = StubApi(answer)
    program = tmp_path / "crew_example.py"
    program.write_text(_examples()["crewai"])
    try:
        out = run_program([str(program)], home=str(tmp_path / "home"), cwd=ws,
                          env={"DEEPSEEK_BASE_URL": api.url + "/v1", "DEEPSEEK_API_KEY": "sk-test"})
    finally:
        api.close()
    read, edited = typo_results(ws)
    assert out.rstrip("\n").splitlines()[-1] == "Fixed the typo."
    assert Path(ws, "README.md").read_text() == FIXED
    assert [path for path, _ in api.requests] == ["/v1/chat/completions"] * 3
    last = api.requests[-1][1]["messages"]
    assert [m["content"] for m in last if m["role"] == "tool"] == [read, edited]
    offered = sorted(t["function"]["name"] for t in api.requests[0][1]["tools"])
    assert offered == sorted(s["name"] for s in _schemas(ws))
