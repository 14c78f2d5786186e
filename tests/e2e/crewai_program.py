"""One CrewAI run of a ``frameworkkit`` scenario, as a program for the CrewAI environment
(``.venv-crewai``: crewai cannot share the dev environment). Run by ``test_crewai.py``; no
tests here.

``python crewai_program.py MODE BASE`` runs every scenario, each in a workspace made in
``BASE/<scenario>`` (``frameworkkit.make_workspace``): it serves a scripted OpenAI Chat Completions API on
127.0.0.1 (one tool call per reply, a behind-the-back change run before the reply that
follows it, then the final answer), runs one ``Crew`` whose agent has ``DshFsToolkit``'s
tools through CrewAI's own OpenAI client (``MODE``: ``sync`` = ``kickoff``, ``async`` =
``akickoff``), and records the request bodies the API got, the crew's answer, and the tool
failures CrewAI recorded. It prints one JSON list, one object per scenario.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/: frameworkkit

import dsh_fs  # noqa: E402
from frameworkkit import SCENARIOS, make_workspace  # noqa: E402

ANSWER = "Done."


def completion(tool_call: dict[str, Any] | None, content: str | None = None) -> dict[str, Any]:
    """A Chat Completions reply: one tool call, or the final text."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_call is not None:
        message["tool_calls"] = [tool_call]
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_call else "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


class ScriptedApi:
    """The steps as replies, served at ``/v1/chat/completions`` on a free loopback port."""

    def __init__(self, steps: list[Any]) -> None:
        self.steps = list(steps)
        self.bodies: list[dict[str, Any]] = []
        self.index = 0
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                data = json.dumps(api.reply(self.path, body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def reply(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        assert path == "/v1/chat/completions" and not body.get("stream"), (path, body.get("stream"))
        self.bodies.append(body)
        while self.steps and callable(self.steps[0]):
            self.steps.pop(0)()
        if not self.steps:
            return completion(None, ANSWER)
        name, arguments = self.steps.pop(0)
        self.index += 1
        return completion({"id": f"call_{self.index}", "type": "function",
                           "function": {"name": name, "arguments": json.dumps(arguments)}})


def run(scenario_name: str, mode: str, base: str) -> dict[str, Any]:
    """One crew on one scenario; what the API got and what CrewAI reported."""
    from crewai import LLM, Agent, Crew, Task

    from dsh_fs.adapters.crewai import DshFsToolkit

    scenario = next(s for s in SCENARIOS if s.name == scenario_name)
    ws = make_workspace(base)
    api = ScriptedApi(scenario.steps(ws))
    toolkit = DshFsToolkit(dsh_fs.create_context(root=ws))
    agent = Agent(role="coder", goal="Fix what the task asks", backstory=toolkit.instructions(),
                  tools=toolkit.get_tools(), llm=LLM(model="openai/gpt-test", base_url=api.url, api_key="sk-test"),
                  max_iter=6, verbose=False)
    task = Task(description="Fix the typo in a.txt", expected_output="Done.", agent=agent)
    crew = Crew(agents=[agent], tasks=[task], verbose=False)
    try:
        output = crew.kickoff() if mode == "sync" else asyncio.run(crew.akickoff())
    finally:
        toolkit.close()
        api.server.shutdown()
    failures = [{"tool": r.tool_name, "message": r.failure.message, "details": r.failure.details}
                for r in output.tasks_output[0].tool_failures]
    return {"scenario": scenario_name, "ws": ws, "bodies": api.bodies, "answer": output.raw, "failures": failures,
            "instructions": toolkit.instructions()}


def main(mode: str, base: str) -> None:
    """Every scenario, each in ``base/<scenario>``; one JSON list on stdout."""
    results = [run(scenario.name, mode, os.path.join(base, scenario.name)) for scenario in SCENARIOS]
    print(json.dumps(results))


if __name__ == "__main__":
    main(*sys.argv[1:3])
