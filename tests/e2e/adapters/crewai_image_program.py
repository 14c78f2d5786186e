"""A CrewAI run with ``read_image``, as a program for the CrewAI environment (run by
``test_crewai.py::test_an_image_result_says_the_image_is_not_shown``; no tests here).

``python crewai_image_program.py BASE`` writes a PNG (Pillow, as ``imagekit`` makes it) into
``BASE/ws``, serves a scripted Chat Completions API on 127.0.0.1 (one ``read_image`` call,
then the final answer), runs one ``Crew`` (``kickoff``) whose agent has the tools of
``create_context(images=True)``, and prints the request bodies the API got and the PNG's
length as JSON.
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # tests/: imagekit
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # crewai_program

import dsh_fs  # noqa: E402
from crewai_program import ScriptedApi  # noqa: E402
from imagekit import encoded, gradient  # noqa: E402


def main(base: str) -> None:
    from crewai import LLM, Agent, Crew, Task

    from dsh_fs.adapters.crewai import DshFsToolkit

    ws = os.path.realpath(os.path.join(base, "ws"))
    os.makedirs(ws)
    png = encoded(gradient(), "PNG")
    with open(os.path.join(ws, "shot.png"), "wb") as handle:
        handle.write(png)
    api = ScriptedApi([("read_image", {"file_path": "shot.png"})])
    toolkit = DshFsToolkit(dsh_fs.create_context(root=ws, images=True), names=["read_image"])
    agent = Agent(role="looker", goal="Describe the image", backstory="You look at images.",
                  tools=toolkit.get_tools(), llm=LLM(model="openai/gpt-test", base_url=api.url, api_key="sk-test"),
                  max_iter=4, verbose=False)
    task = Task(description="Describe shot.png", expected_output="Done.", agent=agent)
    try:
        output = Crew(agents=[agent], tasks=[task], verbose=False).kickoff()
    finally:
        toolkit.close()
        api.close()
    print(json.dumps({"ws": ws, "bodies": api.bodies, "answer": output.raw, "png_size": len(png),
                      "png_base64": __import__("base64").b64encode(png).decode()}))


if __name__ == "__main__":
    main(sys.argv[1])
