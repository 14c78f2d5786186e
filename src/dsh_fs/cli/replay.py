"""Replay a conformance scenario (``../shared/conformance/README.md``): build a fresh workspace,
run the tool calls through the registry as the scenario's actors, report every result and
the final tree. Also how a user reproduces a recorded sequence of tool calls.
"""

from __future__ import annotations

import base64
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Mapping
from typing import Any

from .. import create_context
from ..core.session import Session
from ..core.tools import ToolCall, ToolResult
from ..tool_fs.config import CONFIG_KEYS

__all__ = ("ScenarioError", "replay_scenario", "run_scenario")

_CAMEL_TO_SNAKE = {camel: snake for snake, camel in CONFIG_KEYS.items()}
_UNSET = object()


class ScenarioError(ValueError):
    """The scenario file is malformed."""


def _scrub(value: Any, ws: str) -> Any:
    """Replace the workspace path by ``<ws>`` in every string of ``value``."""
    if isinstance(value, str):
        return value.replace(ws, "<ws>")
    if isinstance(value, list):
        return [_scrub(v, ws) for v in value]
    if isinstance(value, dict):
        return {k: _scrub(v, ws) for k, v in value.items()}
    return value


def _file_bytes(spec: Mapping[str, Any]) -> bytes:
    if "base64" in spec:
        return base64.b64decode(spec["base64"])
    if "content" in spec:
        return str(spec["content"]).encode("utf-8", "surrogatepass")
    return str(spec.get("text", "")).encode("utf-8", "surrogatepass")


def _inside(ws: str, path: str) -> str:
    return path if os.path.isabs(path) else os.path.join(ws, path)


def build_workspace(ws: str, files: Mapping[str, Any]) -> None:
    """Create the scenario's files, directories, symlinks and FIFOs under ``ws``."""
    for name, spec in files.items():
        path = _inside(ws, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if isinstance(spec, str):
            spec = {"text": spec}
        if not isinstance(spec, dict):
            raise ScenarioError(f"file {name!r}: unsupported spec {spec!r}")
        if spec.get("dir"):
            os.makedirs(path, exist_ok=True)
            continue
        if "symlink" in spec:
            os.symlink(spec["symlink"], path)
            continue
        if spec.get("fifo"):
            os.mkfifo(path)
            continue
        with open(path, "wb") as handle:
            handle.write(_file_bytes(spec))
        os.chmod(path, int(spec.get("mode", "0644"), 8))


def _external(ws: str, step: Mapping[str, Any]) -> None:
    if "external_write" in step:
        spec = step["external_write"]
        path = _inside(ws, spec["path"])
        before = os.stat(path) if os.path.exists(path) else None
        with open(path, "r+b" if before is not None else "wb") as handle:  # in place: same inode
            handle.truncate(0)
            handle.write(_file_bytes(spec))
        after = os.stat(path)
        if before is not None and (after.st_size, after.st_mtime_ns, after.st_ctime_ns) == (
            before.st_size, before.st_mtime_ns, before.st_ctime_ns
        ):
            os.utime(path, ns=(after.st_atime_ns, after.st_mtime_ns + 1_000_000))
    elif "external_delete" in step:
        path = _inside(ws, step["external_delete"]["path"])
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    elif "external_mkdir" in step:
        os.makedirs(_inside(ws, step["external_mkdir"]["path"]), exist_ok=True)
    elif "external_symlink" in step:
        spec = step["external_symlink"]
        os.symlink(spec["target"], _inside(ws, spec["path"]))
    elif "sleep_ms" in step:
        time.sleep(float(step["sleep_ms"]) / 1000)
    else:
        raise ScenarioError(f"unknown step {sorted(step)!r}")


def snapshot(ws: str) -> dict[str, Any]:
    """``files`` (base64), ``dirs``, ``symlinks`` and ``modes`` of the tree under ``ws``."""
    files: dict[str, str] = {}
    dirs: list[str] = []
    links: dict[str, str] = {}
    modes: dict[str, str] = {}
    for root, dirnames, filenames in os.walk(ws):
        for name in dirnames + filenames:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, ws).replace(os.sep, "/")
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                links[rel] = os.readlink(path)
            elif stat.S_ISDIR(st.st_mode):
                dirs.append(rel)
                modes[rel] = f"{st.st_mode & 0o7777:04o}"
            elif stat.S_ISREG(st.st_mode):
                with open(path, "rb") as handle:
                    files[rel] = base64.b64encode(handle.read()).decode("ascii")
                modes[rel] = f"{st.st_mode & 0o7777:04o}"
    return {
        "files": dict(sorted(files.items())),
        "dirs": sorted(dirs),
        "symlinks": dict(sorted(links.items())),
        "modes": dict(sorted(modes.items())),
    }


def _result_row(tool: Any, actor: Any, result: ToolResult) -> dict[str, Any]:
    return {
        "tool": tool,
        "actor": actor,
        "is_error": result.is_error,
        "text": result.text,
        "code": result.error.code if result.error else None,
        "error_name": result.error.name if result.error else None,
        "meta": result.meta,
    }


def _args(args: Any, ws: str) -> Any:
    if isinstance(args, dict) and isinstance(args.get("file_path"), str):
        return {**args, "file_path": args["file_path"].replace("<ws>", ws)}
    return args


async def run_scenario(scenario: Mapping[str, Any], ws: str) -> dict[str, Any]:
    """Run ``scenario`` in the existing empty directory ``ws`` (a real path)."""
    build_workspace(ws, scenario.get("files", {}))
    config = {_CAMEL_TO_SNAKE.get(k, k): v for k, v in (scenario.get("config") or {}).items()}
    ctx = create_context(
        cwd=ws, profile=scenario.get("profile"), policy=scenario.get("policy", True) is not False, **config
    )
    session_cwd = scenario.get("session_cwd", True)
    cwd = ws if session_cwd is True else None if session_cwd is False else os.path.join(ws, session_cwd)
    sessions: dict[str, Session] = {}

    def session_for(actor: Any) -> Session | None:
        if actor is None:
            return None
        if actor not in sessions:
            sessions[actor] = Session(cwd, id=str(actor))
        return sessions[actor]

    calls = list(scenario.get("calls", []))
    before: dict[int, list[Mapping[str, Any]]] = {}
    for step in scenario.get("external", []):
        before.setdefault(int(step["before"]), []).append(step)
    results: list[dict[str, Any]] = []
    for index, call in enumerate(calls):
        for step in before.pop(index, []):
            _external(ws, step)
        if "batch" in call:
            batch = [
                ToolCall(name=c["tool"], arguments=_args(c.get("args"), ws), session=session_for(c.get("actor", "a")))
                for c in call["batch"]
            ]
            outcomes = await ctx.tools.execute_batch(batch)
            for c, outcome in zip(call["batch"], outcomes):
                results.append(_result_row(c["tool"], c.get("actor", "a"), outcome))
        elif "tool" in call:
            actor = call.get("actor", "a")
            outcome = await ctx.tools.execute(call["tool"], _args(call.get("args"), ws), session=session_for(actor))
            results.append(_result_row(call["tool"], actor, outcome))
        else:
            _external(ws, call)
    for index in sorted(before):
        for step in before[index]:
            _external(ws, step)
    return _scrub({"results": results, **snapshot(ws)}, ws)


async def replay_scenario(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """Run ``scenario`` in a fresh temporary workspace (umask 022), then remove it."""
    previous = os.umask(0o022)
    ws = os.path.realpath(tempfile.mkdtemp(prefix="dsh-fs-replay-"))
    try:
        return await run_scenario(scenario, ws)
    finally:
        os.umask(previous)
        shutil.rmtree(ws, ignore_errors=True)
