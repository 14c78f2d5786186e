"""The four agent-framework scenarios, shared by the framework e2e tests (imported as
``frameworkkit``; no tests here).

A workspace ``ws`` holds ``a.txt`` with a typo. Each scenario is a list of model steps; a
step is a tool call ``(name, arguments)`` or a callable run *before* the next model reply
(what someone else does to the file behind the agent's back). ``expected_texts`` runs the
same calls through the registry itself on a twin workspace, so a test can assert that the
framework delivered exactly the tools' own texts.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

import dsh_fs

__all__ = ("FIXED", "SCENARIOS", "TYPO", "Scenario", "expected_texts", "make_workspace", "tool_calls")

TYPO = "hello teh world\n"
FIXED = "hello the world\n"


@dataclass(frozen=True)
class Scenario:
    name: str
    steps: Callable[[str], list[Any]]
    """ws → the steps: ``(tool name, arguments)`` or ``callable()`` (a change behind the agent)"""
    errors: list[bool]
    """per tool call: is its result an error"""
    final: str
    """a.txt's content afterwards"""
    marker: str
    """a fragment the last result text must contain (the kind of refusal)"""


def _read(ws: str) -> tuple[str, dict[str, Any]]:
    return ("read", {"file_path": os.path.join(ws, "a.txt")})


def _edit(ws: str) -> tuple[str, dict[str, Any]]:
    return ("edit", {"file_path": os.path.join(ws, "a.txt"), "old_string": "teh", "new_string": "the"})


def _behind(ws: str) -> Callable[[], None]:
    def change() -> None:
        Path(ws, "a.txt").write_text("hello teh world, changed\n")

    return change


SCENARIOS = [
    Scenario("read_then_edit", lambda ws: [_read(ws), _edit(ws)], [False, False], FIXED, "updated successfully"),
    Scenario("edit_without_read", lambda ws: [_edit(ws)], [True], TYPO, "edit requires reading"),
    Scenario("stale_edit", lambda ws: [_read(ws), _behind(ws), _edit(ws)], [False, True],
             "hello teh world, changed\n", "file changed since it was read"),
    Scenario("outside_root", lambda ws: [("read", {"file_path": os.path.join(os.path.dirname(ws), "secret.txt")})],
             [True], TYPO, "outside the workspace"),
]


def make_workspace(base: str) -> str:
    """``base/ws`` with ``a.txt`` (the typo) and ``base/secret.txt`` outside it; its real path."""
    ws = os.path.realpath(os.path.join(base, "ws"))
    os.makedirs(ws)
    Path(ws, "a.txt").write_text(TYPO)
    Path(base, "secret.txt").write_text("not for the model\n")
    return ws


def expected_texts(scenario: Scenario, ws: str) -> list[str]:
    """The result texts of the scenario's calls run through the registry itself, in a twin
    of the workspace made by ``make_workspace`` (``<dirname(ws)>/twin/ws``), with the twin's
    paths written as the real workspace's."""
    base = os.path.dirname(ws)
    twin_base = os.path.join(base, "twin")
    twin = make_workspace(twin_base)
    ctx, session = dsh_fs.create_context(root=twin), dsh_fs.Session()
    texts: list[str] = []

    async def run() -> None:
        for step in scenario.steps(twin):
            if callable(step):
                step()
                continue
            result = await ctx.tools.execute(step[0], step[1], session=session)
            texts.append(result.text)

    anyio.run(run)
    shutil.rmtree(twin_base)
    return [t.replace(twin_base + os.sep, base + os.sep) for t in texts]


def tool_calls(steps: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls among ``steps``."""
    return [step for step in steps if not callable(step)]
