"""The package is release-ready: ``python -m build`` makes an sdist and a wheel whose metadata
is complete (license expression and file, ``Requires-Python``, classifiers, project URLs), and
that wheel, installed with its ``[mcp]`` extra into a clean virtual environment (no checkout
on the path), runs ``dsh-fs demo`` and serves ``dsh-fs mcp``. The README's first command
installs exactly that extra, and docs/MCP.md's ``uvx --from '.[mcp]' dsh-fs mcp`` serves from the checkout;
without the extra, ``dsh-fs demo`` and ``dsh-fs mcp`` say what to install.

The build and the install fetch their dependencies from the package index, as a user's would.
Slow (about a minute on an idle machine); it always runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from docskit import DOCS, README

CHECKOUT = Path(__file__).resolve().parents[3]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


def run(*argv: str | Path, **kw: object) -> subprocess.CompletedProcess[str]:
    if "input" not in kw:
        kw["stdin"] = subprocess.DEVNULL
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True, **kw)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{argv}: {done.stdout[-3000:]}{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("dist")
    run(sys.executable, "-m", "build", "--outdir", out, CHECKOUT)
    (sdist,) = out.glob("dsh_fs-*.tar.gz")
    (wheel,) = out.glob("dsh_fs-*-py3-none-any.whl")
    return sdist, wheel


def test_the_sdist_and_the_wheel_carry_complete_metadata(built: tuple[Path, Path]) -> None:
    sdist, wheel = built
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(archive.read(metadata_name).decode())
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
        assert "dsh_fs/py.typed" in names
    assert metadata["Name"] == "dsh-fs" and metadata["License-Expression"] == "MIT"
    assert metadata["License-File"] == "LICENSE" and metadata["Requires-Python"] == ">=3.11"
    classifiers = metadata.get_all("Classifier")
    assert "Programming Language :: Python :: 3.11" in classifiers and "Typing :: Typed" in classifiers
    assert metadata.get_all("Project-URL") and metadata["Description-Content-Type"] == "text/markdown"
    assert "mcp" in metadata.get_all("Provides-Extra")
    with tarfile.open(sdist) as archive:
        members = {m.name.split("/", 1)[1] for m in archive.getmembers() if "/" in m.name}
    assert {"LICENSE", "pyproject.toml", "README.md", "src/dsh_fs/__init__.py"} <= members


def test_the_wheel_in_a_clean_venv_runs_the_demo_and_serves_mcp(built: tuple[Path, Path], tmp_path: Path) -> None:
    _, wheel = built
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv)
    run(venv / "bin" / "pip", "install", "-q", wheel)
    dsh_fs = venv / "bin" / "dsh-fs"
    where = tmp_path / "somewhere"
    where.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    for command in (["demo"], ["mcp", "--root", str(where)]):  # without the extra: what to install, no traceback
        bare = subprocess.run([dsh_fs, *command], cwd=where, env=env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL)
        assert (bare.returncode, bare.stdout) == (2, ""), bare.stderr
        assert bare.stderr == ("dsh-fs: this command needs mcp, the mcp extra: pip install '.[mcp]' from the dsh-fs "
                               "checkout\n")
    run(venv / "bin" / "pip", "install", "-q", f"{wheel}[mcp]")
    demo = run(dsh_fs, "demo", cwd=where, env=env)
    assert "MCP server started" in demo.stdout, demo.stdout
    (where / "notes.txt").write_text("alpha\n")
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read", "arguments": {"file_path": "notes.txt"}}},
    ]
    served = run(dsh_fs, "mcp", "--root", where, cwd="/", env=env,
                 input="".join(json.dumps(r) + "\n" for r in requests))
    answers = {a["id"]: a for a in map(json.loads, served.stdout.splitlines()) if "id" in a}
    assert "1: alpha" in answers[2]["result"]["content"][0]["text"]
    imported = run(venv / "bin" / "python", "-c", "import dsh_fs, os; print(dsh_fs.__file__)", cwd=tmp_path)
    assert str(venv) in imported.stdout  # the wheel's code, not the checkout's


def test_uvx_from_the_checkout_serves_mcp(tmp_path: Path) -> None:
    """docs/MCP.md's ``uvx --from '.[mcp]' dsh-fs mcp``, run in the checkout as printed (uv's
    cache in the test's own directory)."""
    uv = shutil.which("uv", path=os.path.dirname(sys.executable)) or shutil.which("uv")
    assert uv is not None, "uv is a [dev] dependency"
    uvx = Path(uv).with_name("uvx")
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("beta\n")
    env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "cache"), "UV_TOOL_DIR": str(tmp_path / "tools")}
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "read", "arguments": {"file_path": f"{project}/notes.txt"}}},
    ]
    served = run(uvx, "--from", ".[mcp]", "dsh-fs", "mcp", "--root", project, cwd=CHECKOUT, env=env,
                 input="".join(json.dumps(r) + "\n" for r in requests))
    answers = {a["id"]: a for a in map(json.loads, served.stdout.splitlines()) if "id" in a}
    assert "1: beta" in answers[2]["result"]["content"][0]["text"]


def test_the_readme_first_command_installs_the_mcp_extra_the_demo_needs() -> None:
    text = README.read_text(encoding="utf-8")
    first = next(line for line in text.splitlines() if line.startswith("python3 -m venv"))
    assert "pip install -q '.[mcp]'" in first and first.endswith("dsh-fs demo"), first
    assert "`uvx --from '.[mcp]' dsh-fs mcp`" in (DOCS / "MCP.md").read_text(encoding="utf-8")
