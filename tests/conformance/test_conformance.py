"""Every scenario of ../shared/conformance (reference, fuzz, cases), judged by the shared
``judge.py`` rules, run in-process through ``replay_scenario``; plus the real CLI on the
reference folder, exactly as the conformance README runs it.

The scenarios are read from the shared folder (never copied here). Not covered here: the
MCP and S3 transports (their own suites re-run these scenarios).
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import anyio
import pytest

from dsh_fs.cli.replay import replay_scenario
from conformancekit import CONFORMANCE, judge_module


def _scenarios() -> list[str]:
    found = []
    for folder in ("reference", "fuzz", "cases"):
        found += sorted(
            p for p in glob.glob(os.path.join(CONFORMANCE, folder, "*.json")) if not p.endswith(".out.json")
        )
    return found


SCENARIOS = _scenarios()


def test_the_shared_corpus_is_present() -> None:
    assert len(SCENARIOS) >= 261, f"expected the shared conformance corpus at {CONFORMANCE}"


@pytest.mark.parametrize("path", SCENARIOS, ids=[os.path.relpath(p, CONFORMANCE) for p in SCENARIOS])
def test_scenario(path: str) -> None:
    judge = judge_module()
    with open(path, encoding="utf-8") as handle:
        scenario = json.load(handle)
    actual = json.loads(json.dumps(anyio.run(replay_scenario, scenario)))
    if "expect" in scenario:
        problems = judge.judge_expect(scenario["expect"], actual)
    else:
        with open(path[:-5] + ".out.json", encoding="utf-8") as handle:
            problems = judge.judge_golden(json.load(handle), actual)
    assert not problems, "\n".join(problems)


def test_judge_passes_the_cli_on_the_reference_folder() -> None:
    """The README's own judging command, through the installed ``dsh-fs replay``."""
    cmd = f"{sys.executable} -m dsh_fs.cli.main replay"
    proc = subprocess.run(
        [sys.executable, os.path.join(CONFORMANCE, "judge.py"), "--cmd", cmd, os.path.join(CONFORMANCE, "reference")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.strip().endswith("35 passed, 0 failed")
