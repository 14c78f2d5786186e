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
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio

from .. import create_context
from ..providers import open_provider
from ..core.session import Session
from ..core.tools import ToolCall, ToolResult
from ..tool_fs.config import CONFIG_KEYS
from ..tool_fs_search.config import CONFIG_KEYS as SEARCH_CONFIG_KEYS

__all__ = (
    "ScenarioError",
    "build_workspace",
    "external_step",
    "replay_scenario",
    "run_scenario",
    "run_scenario_s3",
    "scenario_args",
    "scrub_workspace",
    "snapshot",
)

_CAMEL_TO_SNAKE = {camel: snake for snake, camel in {**CONFIG_KEYS, **SEARCH_CONFIG_KEYS}.items()}


class ScenarioError(ValueError):
    """The scenario file is malformed."""


def scrub_workspace(value: Any, ws: str) -> Any:
    """Replace the workspace path by ``<ws>`` in every string of ``value``."""
    if isinstance(value, str):
        return value.replace(ws, "<ws>")
    if isinstance(value, list):
        return [scrub_workspace(v, ws) for v in value]
    if isinstance(value, dict):
        return {k: scrub_workspace(v, ws) for k, v in value.items()}
    return value


def _file_bytes(spec: Mapping[str, Any]) -> bytes:
    if "base64" in spec:
        return base64.b64decode(spec["base64"])
    if "content" in spec:
        return str(spec["content"]).encode("utf-8", "surrogatepass")
    return str(spec.get("text", "")).encode("utf-8", "surrogatepass")


def _inside(ws: str, name: Any, *, follow: bool = True) -> str:
    """The path of the scenario's workspace-relative ``name`` under ``ws``.

    A scenario's setup (``files``, external steps) only ever acts inside its workspace: the
    tool calls are what it tests, and replaying a file someone sent must never write or delete
    the user's own files. ``follow``: the final component is acted on through a symlink (a
    write), not replaced (a delete or a new symlink).

    :raises ScenarioError: ``name`` is not a non-empty relative path, climbs out with ``..``,
        or leads out of the workspace through a symlink
    """
    if not isinstance(name, str) or not name or os.path.isabs(name) or os.path.normpath(name).split(os.sep)[0] == "..":
        raise ScenarioError(f"path {name!r}: a scenario's files and external steps are relative paths in its workspace")
    path = os.path.join(ws, name)
    real, root = os.path.realpath(path if follow else os.path.dirname(path)), os.path.realpath(ws)
    if real != root and not real.startswith(root + os.sep):
        raise ScenarioError(f"path {name!r} leads out of the workspace through a symlink")
    return path


def mtime_ns(name: str, spec: Mapping[str, Any]) -> int | None:
    """A file's ``mtime`` (seconds since the epoch, int or float) in nanoseconds, or ``None``.

    :raises ScenarioError: for a value that is not a finite number
    """
    if "mtime" not in spec:
        return None
    value = spec["mtime"]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value in (float("inf"), float("-inf")):
        raise ScenarioError(f"file {name!r}: mtime must be seconds since the epoch, not {value!r}")
    return round(value * 1_000_000_000)


def build_workspace(ws: str, files: Mapping[str, Any]) -> None:
    """Create the scenario's files, directories, symlinks and FIFOs under ``ws``; then give
    files with an ``mtime`` that modification time (after everything exists)."""
    times: list[tuple[str, int]] = []
    for name, spec in files.items():
        path = _inside(ws, name, follow=False)
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
        stamp = mtime_ns(name, spec)
        if stamp is not None:
            times.append((path, stamp))
    for path, stamp in times:
        os.utime(path, ns=(stamp, stamp))


def external_step(ws: str, step: Mapping[str, Any]) -> None:
    """Apply one external step (another process acting on the workspace ``ws``): ``external_write``,
    ``external_delete``, ``external_mkdir``, ``external_symlink`` or ``sleep_ms``.

    :raises ScenarioError: for an unknown step
    """
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
        path = _inside(ws, step["external_delete"]["path"], follow=False)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    elif "external_mkdir" in step:
        os.makedirs(_inside(ws, step["external_mkdir"]["path"]), exist_ok=True)
    elif "external_symlink" in step:
        spec = step["external_symlink"]
        os.symlink(spec["target"], _inside(ws, spec["path"], follow=False))
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


def scenario_args(args: Any, ws: str) -> Any:
    """A call's ``args`` with ``<ws>`` in ``file_path`` (and ``path``, for glob/grep) replaced
    by the workspace path."""
    if isinstance(args, dict):
        return {k: v.replace("<ws>", ws) if k in ("file_path", "path") and isinstance(v, str) else v
                for k, v in args.items()}
    return args


def _session_cwd(scenario: Mapping[str, Any], ws: str) -> str | None:
    session_cwd = scenario.get("session_cwd", True)
    return ws if session_cwd is True else None if session_cwd is False else os.path.join(ws, session_cwd)


def _config(scenario: Mapping[str, Any]) -> dict[str, Any]:
    return {_CAMEL_TO_SNAKE.get(k, k): v for k, v in (scenario.get("config") or {}).items()}


async def _run_calls(
    ctx: Any, scenario: Mapping[str, Any], ws: str, cwd: str | None, external: Callable[[Mapping[str, Any]], Awaitable[None]]
) -> list[dict[str, Any]]:
    """Run the scenario's calls and external steps in order; one result row per tool call."""
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
            await external(step)
        if "batch" in call:
            batch = [
                ToolCall(name=c["tool"], arguments=scenario_args(c.get("args"), ws), session=session_for(c.get("actor", "a")))
                for c in call["batch"]
            ]
            outcomes = await ctx.tools.execute_batch(batch)
            for c, outcome in zip(call["batch"], outcomes):
                results.append(_result_row(c["tool"], c.get("actor", "a"), outcome))
        elif "tool" in call:
            actor = call.get("actor", "a")
            outcome = await ctx.tools.execute(call["tool"], scenario_args(call.get("args"), ws), session=session_for(actor))
            results.append(_result_row(call["tool"], actor, outcome))
        else:
            await external(call)
    for index in sorted(before):
        for step in before[index]:
            await external(step)
    return results


async def run_scenario(scenario: Mapping[str, Any], ws: str) -> dict[str, Any]:
    """Run ``scenario`` in the existing empty directory ``ws`` (a real path)."""
    build_workspace(ws, scenario.get("files", {}))
    profile = scenario.get("profile")
    provider = open_provider(ws, profile=profile, root=None)  # no containment root, as in the reference
    ctx = create_context(  # (the scenarios assume none)
        profile=profile, policy=scenario.get("policy", True) is not False, provider=provider,
        search=scenario.get("search") is True, list_tool=scenario.get("list") is True, **_config(scenario),
    )

    async def external(step: Mapping[str, Any]) -> None:
        external_step(ws, step)

    results = await _run_calls(ctx, scenario, ws, _session_cwd(scenario, ws), external)
    return scrub_workspace({"results": results, **snapshot(ws)}, ws)


async def replay_scenario(
    scenario: Mapping[str, Any], *, provider: str = "local", endpoint_url: str | None = None
) -> dict[str, Any]:
    """Run ``scenario`` in a fresh workspace, then remove it.

    :param provider: ``local`` — a temporary directory (umask 022); ``s3`` — a fresh
        versioned bucket on ``endpoint_url`` (see ``run_scenario_s3``)
    :param endpoint_url: the S3 endpoint (``None``: AWS)
    :raises ScenarioError: for an unknown provider, or a scenario feature S3 cannot hold
    """
    if provider == "s3":
        return await run_scenario_s3(scenario, endpoint_url=endpoint_url)
    if provider != "local":
        raise ScenarioError(f"unknown provider {provider!r} (local or s3)")
    previous = os.umask(0o022)
    ws = os.path.realpath(tempfile.mkdtemp(prefix="dsh-fs-replay-"))
    try:
        return await run_scenario(scenario, ws)
    finally:
        os.umask(previous)
        shutil.rmtree(ws, ignore_errors=True)


# -- S3 ----------------------------------------------------------------------------------

_S3_UNSUPPORTED = ("symlink", "fifo", "mtime")


async def _build_s3_workspace(workspace: Any, files: Mapping[str, Any]) -> None:
    for name, spec in files.items():
        if isinstance(spec, str):
            spec = {"text": spec}
        if not isinstance(spec, dict):
            raise ScenarioError(f"file {name!r}: unsupported spec {spec!r}")
        unsupported = [k for k in _S3_UNSUPPORTED if k in spec]
        if unsupported:
            what = "settable modification time" if unsupported[0] == "mtime" else unsupported[0]
            raise ScenarioError(f"file {name!r}: S3 has no {what}s")
        if os.path.isabs(name):
            raise ScenarioError(f"file {name!r}: S3 replay holds only workspace-relative files")
        if spec.get("dir"):
            await workspace.mkdir(name)
        else:
            await workspace.put(name, _file_bytes(spec))  # "mode" has no meaning for an object


async def _s3_external(workspace: Any, step: Mapping[str, Any]) -> None:
    if "external_write" in step:
        spec = step["external_write"]
        await workspace.put(spec["path"], _file_bytes(spec))
    elif "external_delete" in step:
        await workspace.delete(step["external_delete"]["path"])
    elif "external_mkdir" in step:
        await workspace.mkdir(step["external_mkdir"]["path"])
    elif "external_symlink" in step:
        raise ScenarioError("S3 has no symlinks")
    elif "sleep_ms" in step:
        await anyio.sleep(float(step["sleep_ms"]) / 1000)
    else:
        raise ScenarioError(f"unknown step {sorted(step)!r}")


async def run_scenario_s3(scenario: Mapping[str, Any], *, endpoint_url: str | None) -> dict[str, Any]:
    """Run ``scenario`` through ``S3FileSystem`` on a fresh versioned bucket, then delete nothing.

    The workspace is the prefix ``ws/`` of a new bucket ``dsh-fs-replay-<random>``; the
    provider's display root is ``/dsh-fs-replay-<random>``, which stands for ``<ws>`` (so the
    output scrubs exactly like the local replay's). Versioning is on, so an external rewrite
    always changes the version token, as the scenario format requires. Credentials and
    region come from the standard AWS chain. ``files`` lists the final objects; ``dirs`` the
    key prefixes; ``symlinks`` and ``modes`` are empty. Symlinks and FIFOs are refused.
    """
    from ..testing.workspaces import S3Workspace

    token = uuid.uuid4().hex[:12]
    ws = f"/dsh-fs-replay-{token}"
    workspace = S3Workspace(
        endpoint_url=endpoint_url, bucket=f"dsh-fs-replay-{token}", root=ws, versioned=True, client_options={}
    )
    profile = scenario.get("profile")
    try:
        await workspace.create()
        await _build_s3_workspace(workspace, scenario.get("files", {}))
        provider = open_provider(workspace.location.url, profile=profile, root=ws,
                                 endpoint_url=endpoint_url, client_options=workspace.client_options)
        try:
            ctx = create_context(
                profile=profile, policy=scenario.get("policy", True) is not False, provider=provider,
                search=scenario.get("search") is True, list_tool=scenario.get("list") is True, **_config(scenario)
            )
            results = await _run_calls(
                ctx, scenario, ws, _session_cwd(scenario, ws), lambda step: _s3_external(workspace, step)
            )
        finally:
            await provider.aclose()
        files = {rel: base64.b64encode(data).decode("ascii") for rel, data in (await workspace.files()).items()}
        output = {"results": results, "files": files, "dirs": await workspace.dirs(), "symlinks": {}, "modes": {}}
    finally:
        await workspace.aclose()
    return scrub_workspace(output, ws)
