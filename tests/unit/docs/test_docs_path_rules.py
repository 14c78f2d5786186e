"""docs/PATH-RULES.md as printed: its Python snippet, its command lines and its rules file run
against a small project, and do what the page says (a denied file refused, a read-only one
readable but not writable, the quoted prompt text the one the model gets)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio

import dsh_fs
from docskit import code_blocks, quotes, shell_env, shell_lines
from dsh_fs.fs.path_rules import parse_rules_file

PAGE = Path(__file__).resolve().parents[3] / "docs" / "PATH-RULES.md"


TURNING_ON = "## Turning them on"


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "vendor").mkdir(parents=True)
    (root / ".env").write_text("KEY=1\n")
    (root / "vendor" / "lib.py").write_text("x = 1\n")
    return root


def test_the_python_snippet(tmp_path: Path, monkeypatch: object) -> None:
    project(tmp_path)
    monkeypatch.chdir(tmp_path)  # type: ignore[attr-defined]
    (snippet,) = code_blocks(TURNING_ON, PAGE, "python")
    scope: dict[str, object] = {}
    exec(snippet, scope)  # noqa: S102
    ctx = scope["ctx"]
    assert isinstance(ctx, dsh_fs.Context)

    async def calls() -> None:
        session = dsh_fs.Session(cwd=str(tmp_path / "project"))
        secret = await ctx.tools.execute("read", {"file_path": ".env"}, session=session)
        assert secret.text.endswith('.env": permission denied — the path rules deny access to it')
        await ctx.tools.execute("read", {"file_path": "vendor/lib.py"}, session=session)
        frozen = await ctx.tools.execute("write", {"file_path": "vendor/lib.py", "content": "y\n"}, session=session)
        assert frozen.text.endswith('lib.py": permission denied — the path rules make it read-only')
        assert "Others are read-only" in ctx.system_prompt.render(only="tool:path-rules")
        await ctx.aclose()

    anyio.run(calls)


def test_the_quoted_prompt_texts() -> None:
    from dsh_fs.fs.path_rules import PathRules, prompt_text

    told, shown = quotes(PAGE)
    assert prompt_text(PathRules.of(deny=[".env"])) == told
    assert prompt_text(PathRules.of(deny=[".env", "secrets/"], show=True)) == told + "\n" + shown


def test_the_command_lines_and_the_rules_file(tmp_path: Path) -> None:
    root = project(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_FS_")}
    env.update(DSH_FS_STATE_DIR=str(tmp_path / "state"), DSH_FS_LOCK_DIR=str(tmp_path / "locks"))
    (lines,) = code_blocks(TURNING_ON, PAGE, "sh")
    for line in shell_lines(lines):
        done = subprocess.run(["bash", "-c", line], cwd=root if "--root" not in line else tmp_path,
                              env=shell_env(tmp_path), input="", capture_output=True, text=True, timeout=120)
        if line.startswith("dsh-fs read"):
            assert done.returncode == 1 and "the path rules deny access to it" in done.stdout, done
        else:
            assert done.returncode == 0, done.stderr
    (toml,) = code_blocks("### A rules file", PAGE, "toml")
    source = parse_rules_file(toml, "rules.toml")
    assert source.deny[-1] == "!public.pem" and source.read_only == ("vendor/**", "*.lock")
    (tmp_path / "rules.toml").write_text(toml)
    done = subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", "write", "vendor/lib.py", "--content", "y",
                           "--rules-file", str(tmp_path / "rules.toml")], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1 and "make it read-only" in done.stdout
