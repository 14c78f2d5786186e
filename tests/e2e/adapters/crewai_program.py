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
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # tests/: frameworkkit

import dsh_fs  # noqa: E402
from frameworkkit import SCENARIOS, make_workspace  # noqa: E402
from stubapi import StubApi, chat_completion  # noqa: E402

ANSWER = "Done."


class ScriptedApi(StubApi):
    """The steps as Chat Completions replies at ``url + "/v1"``."""

    def __init__(self, steps: list[Any]) -> None:
        self.steps = list(steps)
        self.bodies: list[dict[str, Any]] = []
        self.index = 0
        super().__init__(self.reply)
        self.url += "/v1"

    def reply(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        assert path == "/v1/chat/completions" and not body.get("stream"), (path, body.get("stream"))
        self.bodies.append(body)
        while self.steps and callable(self.steps[0]):
            self.steps.pop(0)()
        if not self.steps:
            return chat_completion(None, ANSWER)
        name, arguments = self.steps.pop(0)
        self.index += 1
        return chat_completion({"id": f"call_{self.index}", "type": "function",
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
        api.close()
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
