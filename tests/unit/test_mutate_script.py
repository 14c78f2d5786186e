"""``scripts/mutate.py``, the mutation-testing entry point: which mutants it makes and that
each applies exactly one change (its pure parts; running mutants is the script's job)."""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
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
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "mutate.py"), "src/dsh_fs/mcp/auth.py",
                           "-t", "none", "--list"], cwd=REPO, capture_output=True, text=True, timeout=60,
                          env=dict(os.environ))
    assert done.returncode == 0 and done.stdout.splitlines()[0].startswith("   1 src/dsh_fs/mcp/auth.py:")
    refused = subprocess.run([sys.executable, str(REPO / "scripts" / "mutate.py"), "/etc/passwd", "-t", "x"],
                             cwd=REPO, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "not a Python file under" in refused.stderr
