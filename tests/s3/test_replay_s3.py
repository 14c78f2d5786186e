"""Conformance scenarios through the S3 provider (``replay_scenario(provider="s3")``), judged by
the shared ``judge.py`` rules; plus ``dsh-fs replay --provider s3 --endpoint-url`` itself.

Every scenario of ``reference/``, ``fuzz/`` and ``cases/`` runs, except those S3 cannot hold
(left out when the tests are collected, each with its reason, ``EXCLUDED``):
symlinks, FIFOs and file modes (no such things in an object store), and the listed ones that
use a file as a directory (S3 keys ``a`` and ``a/b`` coexist; resolving never asks the
service whether an ancestor is an object). Each run gets a fresh versioned bucket.

Not covered here: the local replay (``tests/conformance``).
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import re
import subprocess
import sys
from typing import Any

import anyio
import pytest

from dsh_fs.cli.replay import ScenarioError, replay_scenario

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SHARED = os.path.abspath(os.environ.get("DSH_FS_SHARED", os.path.join(ROOT, "..", "shared")))
CONFORMANCE = os.path.join(SHARED, "conformance")

FILE_AS_DIRECTORY = {
    "reference/11-missing-file.json": "reads and writes afile/child.txt where afile is a file",
}


def _steps(calls: list[Any]) -> list[Any]:
    out: list[Any] = []
    for call in calls:
        out += _steps(call["batch"]) if "batch" in call else [call]
    return out


def s3_unsupported(scenario: dict[str, Any]) -> str | None:
    """Why ``scenario`` cannot run on S3 (symlinks, FIFOs, modes), or ``None``."""
    for name, spec in scenario.get("files", {}).items():
        if isinstance(spec, dict):
            for feature in ("symlink", "fifo", "mode"):
                if feature in spec:
                    return f"file {name!r} has a {feature}"
    for step in _steps(scenario.get("calls", [])) + list(scenario.get("external", [])):
        if "external_symlink" in step:
            return "an external step makes a symlink"
    return None


def _scenarios() -> list[str]:
    found = []
    for folder in ("reference", "fuzz", "cases"):
        found += sorted(p for p in glob.glob(os.path.join(CONFORMANCE, folder, "*.json")) if not p.endswith(".out.json"))
    return found


SCENARIOS = _scenarios()


def _excluded() -> dict[str, str]:
    """Scenario (relative path) → why S3 cannot hold it; decided when the tests are collected,
    so every collected scenario runs."""
    out = {}
    for path in SCENARIOS:
        rel = os.path.relpath(path, CONFORMANCE)
        with open(path, encoding="utf-8") as handle:
            reason = s3_unsupported(json.load(handle)) or FILE_AS_DIRECTORY.get(rel)
        if reason is not None:
            out[rel] = reason
    return out


EXCLUDED = _excluded()
RUNNABLE = [p for p in SCENARIOS if os.path.relpath(p, CONFORMANCE) not in EXCLUDED]


def _judge() -> Any:
    spec = importlib.util.spec_from_file_location("conformance_judge", os.path.join(CONFORMANCE, "judge.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _problems(path: str, actual: dict[str, Any], scenario: dict[str, Any]) -> list[str]:
    judge = _judge()
    actual = json.loads(json.dumps(actual))
    if "expect" in scenario:
        return list(judge.judge_expect(scenario["expect"], actual))
    with open(path[:-5] + ".out.json", encoding="utf-8") as handle:
        return list(judge.judge_golden(json.load(handle), actual))


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Moto credentials for the standard AWS chain the replay uses."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")


def test_most_of_the_corpus_runs_on_s3() -> None:
    """Only scenarios with symlinks, FIFOs, file modes or a file used as a directory are left
    out, each for its reason."""
    assert len(SCENARIOS) >= 261, f"expected the shared conformance corpus at {CONFORMANCE}"
    assert len(RUNNABLE) >= 250 and len(RUNNABLE) + len(EXCLUDED) == len(SCENARIOS)
    assert set(FILE_AS_DIRECTORY) <= set(EXCLUDED)
    for rel, reason in EXCLUDED.items():
        assert rel in FILE_AS_DIRECTORY or re.fullmatch(
            r"file '.+' has a (symlink|fifo|mode)|an external step makes a symlink", reason), (rel, reason)


@pytest.mark.parametrize("path", RUNNABLE, ids=[os.path.relpath(p, CONFORMANCE) for p in RUNNABLE])
def test_scenario_on_s3(path: str, s3_endpoint: str, aws_env: None) -> None:
    with open(path, encoding="utf-8") as handle:
        scenario = json.load(handle)
    actual = anyio.run(lambda: replay_scenario(scenario, provider="s3", endpoint_url=s3_endpoint), backend="asyncio")
    assert actual["symlinks"] == {} and actual["modes"] == {}
    problems = _problems(path, actual, scenario)
    assert not problems, "\n".join(problems)


def test_the_file_as_directory_exclusion_is_still_needed(s3_endpoint: str, aws_env: None) -> None:
    """If S3 ever passes an excluded scenario, the exclusion list must shrink."""
    for rel in FILE_AS_DIRECTORY:
        path = os.path.join(CONFORMANCE, rel)
        with open(path, encoding="utf-8") as handle:
            scenario = json.load(handle)
        actual = anyio.run(lambda: replay_scenario(scenario, provider="s3", endpoint_url=s3_endpoint), backend="asyncio")
        assert _problems(path, actual, scenario), rel


def test_symlinks_are_refused(s3_endpoint: str, aws_env: None) -> None:
    scenario = {"files": {"a.txt": "a", "l": {"symlink": "a.txt"}}, "calls": []}
    with pytest.raises(ScenarioError, match="S3 has no symlinks"):
        anyio.run(lambda: replay_scenario(scenario, provider="s3", endpoint_url=s3_endpoint), backend="asyncio")


def test_cli_replay_on_s3_lists_the_final_objects(s3_endpoint: str, tmp_path: os.PathLike[str]) -> None:
    scenario = {
        "profile": "reference",
        "files": {"a.txt": "alpha\n", "sub": {"dir": True}},
        "calls": [
            {"tool": "read", "args": {"file_path": "a.txt"}},
            {"tool": "edit", "args": {"file_path": "<ws>/a.txt", "old_string": "alpha", "new_string": "beta"}},
            {"tool": "write", "args": {"file_path": "d/new.txt", "content": "new\n"}},
            {"tool": "read", "args": {"file_path": "sub"}},
        ],
    }
    path = os.path.join(os.fspath(tmp_path), "scenario.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(scenario, handle)
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
    proc = subprocess.run(
        [sys.executable, "-m", "dsh_fs.cli.main", "replay", "--provider", "s3", "--endpoint-url", s3_endpoint, path],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    output = json.loads(proc.stdout)
    assert [r["is_error"] for r in output["results"]] == [False, False, False, True]
    assert output["results"][0]["text"] == "<path><ws>/a.txt</path>\n<type>file</type>\n<content>\n1: alpha\n\n(End of file - total 1 lines)\n</content>"
    assert output["results"][1]["text"] == "The file <ws>/a.txt has been updated successfully."
    assert output["results"][3]["text"] == 'Error: cannot read "<ws>/sub": not a regular file'
    assert output["files"] == {"a.txt": "YmV0YQo=", "d/new.txt": "bmV3Cg=="}
    assert output["dirs"] == ["d", "sub"]


def test_cli_replay_refuses_an_unknown_provider(tmp_path: os.PathLike[str]) -> None:
    path = os.path.join(os.fspath(tmp_path), "scenario.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({"calls": []}, handle)
    proc = subprocess.run(
        [sys.executable, "-m", "dsh_fs.cli.main", "replay", "--provider", "gcs", path],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2 and "gcs" in proc.stderr
