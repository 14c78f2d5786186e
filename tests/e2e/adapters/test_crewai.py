"""CrewAI end to end: ``DshFsToolkit``'s tools in a ``Crew`` whose agent talks, through
CrewAI's own OpenAI client, to a scripted Chat Completions API on 127.0.0.1 — sync
(``kickoff``) and async (``akickoff``). No network.

The crews run in CrewAI's own environment (``crewaikit``: crewai cannot share the dev
environment) as ``crewai_program.py``, once per mode for all four ``frameworkkit`` scenarios
(read then edit; edit without read; stale edit; a path outside the root). Each must give the
model exactly the registry's texts as the tool messages, record each failure as CrewAI's
``ToolFailure`` with that text, and leave the file as the scenario says.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import dsh_fs
from dsh_fs.adapters import chat_tools
from crewaikit import run_program
from frameworkkit import SCENARIOS, Scenario, expected_texts, tool_calls

pytestmark = pytest.mark.timeout(1800)  # the first test may build the CrewAI environment
PROGRAM = str(Path(__file__).with_name("crewai_program.py"))


@pytest.fixture(scope="module", params=["sync", "async"])
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """mode → scenario name → what that crew's run recorded."""
    base = tmp_path_factory.mktemp(f"crewai-{request.param}")
    out = run_program([PROGRAM, request.param, str(base)], home=str(base / "home"))
    return {run["scenario"]: {**run, "mode": request.param} for run in json.loads(out)}


def _expected_tools(ws: str) -> list[dict[str, Any]]:
    """The registry's definitions as CrewAI sends them in strict mode: optional properties
    nullable, every property required, no additional properties."""
    tools = chat_tools(dsh_fs.create_context(root=ws))
    for tool in tools:
        function = tool["function"]
        parameters = function["parameters"]
        for name, schema in parameters["properties"].items():
            if name not in parameters.get("required", ()):
                schema["type"] = [schema["type"], "null"]
        parameters["required"] = list(parameters["properties"])
        parameters["additionalProperties"] = False
        function["strict"] = True
    return tools


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_scenario(scenario: Scenario, runs: dict[str, dict[str, Any]]) -> None:
    run = runs[scenario.name]
    ws = run["ws"]
    expected = expected_texts(scenario, ws)
    calls = tool_calls(scenario.steps(ws))
    assert run["answer"] == "Done."
    assert Path(ws, "a.txt").read_text() == scenario.final
    bodies = run["bodies"]
    assert len(bodies) == len(calls) + 1
    # the tool messages the model got: exactly the registry's texts, for the calls it made
    last = bodies[-1]["messages"]
    results = [m for m in last if m["role"] == "tool"]
    assert [m["content"] for m in results] == expected
    assert [m["tool_call_id"] for m in results] == [f"call_{i}" for i in range(1, len(calls) + 1)]
    assert scenario.marker in expected[-1]
    # each failure recorded by CrewAI as a ToolFailure with the same text and our error code
    failed = [text for text, error in zip(expected, scenario.errors) if error]
    assert [f["message"] for f in run["failures"]] == failed
    assert all(f["details"]["code"].startswith("FS_") for f in run["failures"])
    # every request offered exactly the registry's tools (CrewAI's strict form) and guidance
    for body in bodies:
        assert sorted(body["tools"], key=lambda t: t["function"]["name"]) == _expected_tools(ws)
        assert run["instructions"] != "" and run["instructions"] in body["messages"][0]["content"]


def test_toolkit_checks(tmp_path: Path) -> None:
    """``crewai_checks.py`` in the CrewAI environment: the tools outside a crew (see there)."""
    out = run_program([str(Path(__file__).with_name("crewai_checks.py")), str(tmp_path)], home=str(tmp_path / "home"))
    assert out.splitlines()[-1] == "ok"


def test_the_program_leaves_nothing_outside_its_workspaces(runs: dict[str, dict[str, Any]]) -> None:
    """The outside-root scenario's secret stays unread: its text is nowhere in what the model got."""
    run = runs["outside_root"]
    secret = Path(os.path.dirname(run["ws"]), "secret.txt").read_text()
    assert secret not in json.dumps(run["bodies"])


def test_an_image_result_says_the_image_is_not_shown(tmp_path: Path) -> None:
    """DEVIATIONS I6: CrewAI carries tool results as text only, so ``read_image``'s tool message
    is its envelope plus the line that says the image is not shown — never base64 text."""
    from dsh_fs.tool_image.texts import envelope

    program = str(Path(__file__).with_name("crewai_image_program.py"))
    run = json.loads(run_program([program, str(tmp_path)], home=str(tmp_path / "home")).splitlines()[-1])
    assert run["answer"] == "Done."
    (message,) = [m for m in run["bodies"][-1]["messages"] if m["role"] == "tool"]
    hint = "Hint: the image itself is not shown: CrewAI passes tool results to the model as text only."
    assert message["content"] == envelope(f"{run['ws']}/shot.png", "image/png", 37, 23, run["png_size"]) + "\n" + hint
    assert run["png_base64"] not in json.dumps(run["bodies"])
