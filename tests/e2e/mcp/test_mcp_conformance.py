"""The reference conformance scenarios (../shared/conformance/reference), run through the real
``dsh-fs mcp --http`` server instead of the in-process registry, judged against the golden
``*.out.json`` by the shared ``judge.py`` rules: the MCP face must not change a byte of what
the model sees, nor of the files.

One server per scenario (root = the workspace; profile, policy and config from the
scenario), one MCP session per actor; scenarios run a few at a time, each in its own
workspace, and each is judged by its own test. Not covered: ``fuzz/`` and ``cases/`` (the in-process
suite runs those), nor the scenarios MCP cannot express (``actor: null`` calls: every MCP
connection is an owner; batches): those are listed by their own test, with the reason.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import shutil
import tempfile
from typing import Any

import anyio
import pytest

from mcp_support import run_scenario_over_mcp, unexpressible

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")
SHARED = os.path.abspath(os.environ.get("DSH_FS_SHARED", os.path.join(ROOT, "..", "shared")))
REFERENCE = os.path.join(SHARED, "conformance", "reference")
ALL = sorted(p for p in glob.glob(os.path.join(REFERENCE, "*.json")) if not p.endswith(".out.json"))


def _why_not(path: str) -> str | None:
    with open(path, encoding="utf-8") as handle:
        return unexpressible(json.load(handle))


UNEXPRESSIBLE = {path: why for path in ALL if (why := _why_not(path)) is not None}
SCENARIOS = [path for path in ALL if path not in UNEXPRESSIBLE]


def _judge():
    spec = importlib.util.spec_from_file_location("conformance_judge", os.path.join(SHARED, "conformance", "judge.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CONCURRENCY = 4
"""scenarios run at once (each has its own workspace and server)"""


async def _run_all() -> dict[str, Any]:
    """Every scenario's output (or the ``Unsupported`` / error it raised), by path."""
    outcomes: dict[str, Any] = {}
    limiter = anyio.CapacityLimiter(CONCURRENCY)

    async def one(path: str) -> None:
        with open(path, encoding="utf-8") as handle:
            scenario = json.load(handle)
        ws = os.path.realpath(tempfile.mkdtemp(prefix="dsh-fs-mcp-"))
        try:
            async with limiter:
                with anyio.fail_after(120):
                    outcomes[path] = await run_scenario_over_mcp(scenario, ws)
        except Exception as exc:  # reported by that scenario's test
            outcomes[path] = exc
        finally:
            shutil.rmtree(ws, ignore_errors=True)

    async with anyio.create_task_group() as tg:
        for path in SCENARIOS:
            tg.start_soon(one, path)
    return outcomes


@pytest.fixture(scope="module")
def outcomes() -> dict[str, Any]:
    previous = os.umask(0o022)  # the scenarios' workspaces are built in this process
    try:
        return anyio.run(_run_all)
    finally:
        os.umask(previous)


def test_the_reference_corpus_is_present() -> None:
    assert len(ALL) >= 35, f"expected the reference scenarios at {REFERENCE}"


def test_only_what_mcp_cannot_express_is_left_to_the_registry_suite() -> None:
    """a scenario left out here is a batch or an ``actor: null`` call (tests/conformance runs
    it in process); no other reason, and most of the corpus runs over MCP"""
    known = ("a batch is one assistant message", "a call with actor null has no session")
    assert all(why.startswith(known) for why in UNEXPRESSIBLE.values()), UNEXPRESSIBLE
    assert len(SCENARIOS) >= 0.8 * len(ALL)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("path", SCENARIOS, ids=[os.path.basename(p)[:-5] for p in SCENARIOS])
def test_reference_scenario_over_mcp(path: str, outcomes: dict[str, Any]) -> None:
    actual = outcomes[path]
    if isinstance(actual, BaseException):
        raise actual
    with open(path[:-5] + ".out.json", encoding="utf-8") as handle:
        golden = json.load(handle)
    problems = _judge().judge_golden(golden, json.loads(json.dumps(actual)))
    assert not problems, "\n".join(problems)
    # informative fields of the golden output: the MCP face carries them too
    for expected, got in zip(golden["results"], actual["results"]):
        assert got["error_name"] == expected["error_name"]
        assert got["meta"] == expected["meta"]
