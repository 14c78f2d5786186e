"""``scripts/mutate.py``, the mutation-testing entry point: which mutants it makes and that
each applies exactly one change (its pure parts; running mutants is the script's job), both
modes' verdicts on a tiny repository, and CONTRIBUTING.md's command ("Mutation testing") run as
printed in the checkout."""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from docskit import code_blocks, shell_env, shell_lines

REPO = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("mutate", REPO / "scripts" / "mutate.py")
assert _spec is not None and _spec.loader is not None
mutate = importlib.util.module_from_spec(_spec)
sys.modules["mutate"] = mutate
_spec.loader.exec_module(mutate)

SAMPLE = '''"""Module docstring: left alone."""
from __future__ import annotations
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    import os
__all__ = ("f",)
FLAGS = 1 | 2 | 4


def f(x: int | None, *, y: bool = True) -> str | None:
    """Docstring: left alone."""
    if x is None or not y:
        return "none"
    if x < 3 and x in (1, 2):
        raise ValueError("small")
    for i in range(x):
        if i == 5:
            break
        print(i + 1)
    return None
'''


def _sample(tmp_path: Any) -> str:
    path = tmp_path / "sample.py"
    path.write_text(SAMPLE)
    return str(path)


def test_the_mutants_of_a_sample(tmp_path: Any) -> None:
    found = [(m.line, m.what) for m in mutate.mutants(_sample(tmp_path))]
    assert found == [
        (7, "| 4 dropped"), (7, "| 2 dropped"), (7, "4 -> 5"), (7, "1 -> 2"), (7, "2 -> 3"),
        (10, "True -> False"),
        (12, "Or -> And"), (12, "Is -> IsNot"), (12, "not dropped"),
        (13, "return 'none' -> return None"),
        (14, "And -> Or"), (14, "Lt -> LtE"), (14, "In -> NotIn"), (14, "3 -> 4"), (14, "1 -> 2"), (14, "2 -> 3"),
        (15, "raise removed: raise ValueError('small')"),
        (17, "Eq -> NotEq"), (17, "5 -> 6"),
        (18, "break -> pass"),
        (19, "call removed: print(i + 1)"), (19, "Add -> Sub"), (19, "1 -> 2"),
    ]


def test_each_mutant_changes_exactly_one_thing(tmp_path: Any) -> None:
    original = ast.dump(ast.parse(SAMPLE))
    sources = set()
    for m in mutate.mutants(_sample(tmp_path)):
        text = mutate.mutated_source(m)
        assert ast.dump(ast.parse(text)) != original, m
        sources.add(text)
    assert len(sources) == 23  # all different
    first = [m for m in mutate.mutants(_sample(tmp_path)) if m.what == "Lt -> LtE"][0]
    assert "if x <= 3 and x in (1, 2):" in mutate.mutated_source(first)


def test_mutants_come_from_the_source_as_listed(tmp_path: Any) -> None:
    path = _sample(tmp_path)
    listed = mutate.mutants(path)
    Path(path).write_text("X = 1\n")  # edited meanwhile: the listed mutants still apply
    assert "if x <= 3" in mutate.mutated_source([m for m in listed if m.what == "Lt -> LtE"][0])


def test_list_mode_runs_nothing() -> None:
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "mutate.py"), "src/dsh_fs/mcp/http/auth.py",
                           "-t", "none", "--list"], cwd=REPO, capture_output=True, text=True, timeout=60,
                          env=dict(os.environ))
    assert done.returncode == 0 and done.stdout.splitlines()[0].startswith("   1 src/dsh_fs/mcp/http/auth.py:")
    refused = subprocess.run([sys.executable, str(REPO / "scripts" / "mutate.py"), "/etc/passwd", "-t", "x"],
                             cwd=REPO, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "not a Python file under" in refused.stderr


TINY = '''LIMIT = 3


def count_up(n):
    i = 0
    while i != n:
        i += 1
    return i
'''
TINY_TESTS = '''from tiny.count import count_up


def test_count_up():
    assert count_up(0) == 0
    assert count_up(2) == 2
'''


def _tiny_repo(tmp_path: Any) -> Path:
    """A repository of the layout the script expects: ``scripts/mutate.py``, ``src/tiny/``, ``tests/``."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    (repo / "scripts" / "mutate.py").write_text((REPO / "scripts" / "mutate.py").read_text())
    (repo / "src" / "tiny").mkdir(parents=True)
    (repo / "src" / "tiny" / "__init__.py").write_text("")
    (repo / "src" / "tiny" / "count.py").write_text(TINY)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_count.py").write_text(TINY_TESTS)
    (repo / "pytest.ini").write_text("[pytest]\n")
    return repo


def _run_tiny(repo: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    # no third-party pytest plugins: a faster start, the same verdicts for these tests
    env = dict(os.environ, PYTHONPATH=str(repo / "src"), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    return subprocess.run([sys.executable, "scripts/mutate.py", "src/tiny/count.py", "-t", "tests/test_count.py",
                           *extra], cwd=repo, capture_output=True, text=True, timeout=300, env=env)


def test_both_modes_kill_and_keep_the_same_mutants_and_time_out_a_hang(tmp_path: Any) -> None:
    repo = _tiny_repo(tmp_path)
    listed = subprocess.run([sys.executable, "scripts/mutate.py", "src/tiny/count.py", "-t", "x", "--list"],
                            cwd=repo, capture_output=True, text=True, timeout=60).stdout.splitlines()
    assert [line.split(": ", 1)[1] for line in listed] == [
        "3 -> 4",            # unused by the tests: survives
        "0 -> 1",            # count_up(0) never ends: killed only by the time limit
        "NotEq -> Eq",       # count_up(0) == 1: killed
        "1 -> 2",            # counting by two reaches 0 and 2 alike: survives
        "return i -> return None",  # killed
    ]
    for mode in ((), ("--fork",)):  # the hang waits for the default time limit (from the unmutated run) here
        done = _run_tiny(repo, *mode, "--only", "1", "3", "4", "5")
        assert done.returncode == 1, (mode, done.stdout, done.stderr)
        survivors = [line for line in done.stdout.splitlines() if line.startswith("SURVIVED")]
        assert survivors == ["SURVIVED    1 src/tiny/count.py:1: 3 -> 4", "SURVIVED    4 src/tiny/count.py:7: 1 -> 2"]
        assert done.stdout.splitlines()[-1] == "killed 2/4 (50%)", mode
        assert (repo / "src" / "tiny" / "count.py").read_text() == TINY  # the work tree never changes
    # mutant 2 never ends (count_up(0) counts forever): the run ending at all (within _run_tiny's
    # subprocess timeout) is its child killed by the time limit, not waited for
    hang = _run_tiny(repo, "--fork", "--only", "2", "3", "--timeout", "3")
    assert hang.returncode == 0 and hang.stdout.splitlines()[-1] == "killed 2/2 (100%)", hang.stdout


def test_fork_mode_refuses_tests_that_fail_unmutated(tmp_path: Any) -> None:
    repo = _tiny_repo(tmp_path)
    (repo / "tests" / "test_count.py").write_text(TINY_TESTS.replace("== 2", "== 3"))
    done = _run_tiny(repo, "--fork")
    assert done.returncode == 2 and "the tests fail without any mutation" in done.stderr


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_the_contributing_command_runs_as_printed(tmp_path: Any) -> None:
    """The command of CONTRIBUTING.md's "## Mutation testing", through the shell in the checkout
    (its ``.venv`` is the one the README's set-up line makes, this interpreter's): every mutant
    of the module is killed (docs/MUTATION.md), the work tree is left as it was."""
    [block] = code_blocks("## Mutation testing", REPO / "CONTRIBUTING.md", "bash")
    [command] = shell_lines(block)
    module = command.split()[2]
    before = (REPO / module).read_bytes()
    done = subprocess.run(["bash", "-c", command], cwd=REPO, env=shell_env(tmp_path), capture_output=True, text=True,
                          timeout=1700, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    total = len(mutate.mutants(str(REPO / module)))
    assert done.stdout.splitlines()[-1] == f"killed {total}/{total} (100%)", done.stdout[-3000:]
    assert (REPO / module).read_bytes() == before
