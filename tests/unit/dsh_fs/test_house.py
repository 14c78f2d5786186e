"""The package's layout holds by construction: the checks a reviewer would otherwise run by hand
on the tree of ``src/dsh_fs``.

Covers: no module over 800 lines; ``dsh_fs.mcp`` at most 18 modules; no import cycle among
the modules of ``dsh_fs`` (module-level and function-level imports alike; imports under
``if TYPE_CHECKING:`` are not run and do not count); the abort reason of a cancelled MCP
request written once in ``src``; no module of ``dsh_fs.mcp.stdio`` nor the codec
(``dsh_fs.mcp.wire``) importing the MCP SDK at load time (the fast start of DEVIATIONS M2);
the tests' ``anyio_backend`` fixture declared once (``tests/conftest.py``).
Not covered: whether a module's name says what it holds (read by the reviewer), the layering
of design/ARCHITECTURE.md beyond the absence of cycles.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import dsh_fs

SRC = Path(dsh_fs.__file__).parent
LINES_MAX = 800
MCP_MODULES_MAX = 18


def _modules() -> dict[str, Path]:
    """Dotted name → file of every module of ``dsh_fs`` (a package by its ``__init__.py``)."""
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _run_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements of ``body`` and of everything nested in it (functions, classes,
    branches, ``try``), except the branches of ``if TYPE_CHECKING:``, which never run."""
    for node in body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from _run_imports(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                yield from _run_imports([child])
            elif isinstance(child, ast.excepthandler):
                yield from _run_imports(child.body)


def _imported(name: str, path: Path) -> set[str]:
    """The modules of ``dsh_fs`` that module ``name`` imports: ``import a.b`` names ``a.b``;
    ``from a import b`` names ``a.b`` when that is a module, else ``a``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in _run_imports(ast.parse(path.read_text(encoding="utf-8")).body):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in MODULES)
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            origin = ".".join(base + ([node.module] if node.module else []))
        else:
            origin = node.module or ""
        for alias in node.names:
            if f"{origin}.{alias.name}" in MODULES:
                found.add(f"{origin}.{alias.name}")
            elif origin in MODULES:
                found.add(origin)
    found.discard(name)
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` with more than one module (Tarjan's
    algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


GRAPH = {name: _imported(name, path) for name, path in MODULES.items()}


def test_no_module_is_over_800_lines() -> None:
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in MODULES.items()}
    assert sizes["dsh_fs.fs.filesystem"] > 100  # the sizes are read
    assert {name: size for name, size in sizes.items() if size > LINES_MAX} == {}


def test_mcp_holds_at_most_18_modules() -> None:
    modules = [name for name, path in MODULES.items() if name.startswith("dsh_fs.mcp.") and path.name != "__init__.py"]
    assert "dsh_fs.mcp.wire" in modules and "dsh_fs.mcp.stdio.transport" in modules
    assert len(modules) <= MCP_MODULES_MAX, sorted(modules)


def test_the_import_graph_sees_every_kind_of_import() -> None:
    assert "dsh_fs.fs.errors" in GRAPH["dsh_fs.fs.filesystem"]  # from .errors import …
    assert "dsh_fs.fs_local" in GRAPH["dsh_fs.far_helper.serve"]  # inside a function
    assert "dsh_fs.core" in GRAPH["dsh_fs"]  # a package's own subpackage
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_the_package() -> None:
    assert _cycles(GRAPH) == []


def test_the_abort_reason_of_a_cancelled_request_is_written_once() -> None:
    places = [f"{path}:{number}" for path in sorted(SRC.rglob("*.py"))
              for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
              if "the client cancelled the request" in line]
    assert len(places) == 1, places


def test_no_stdio_or_codec_module_imports_the_sdk_at_load_time() -> None:
    """Every module of ``dsh_fs.mcp.stdio``, the codec and the CLI command load without the SDK
    (nor pydantic): the fast start holds by construction (DEVIATIONS M2)."""
    script = textwrap.dedent("""
        import importlib, pkgutil, sys
        import dsh_fs.mcp.stdio, dsh_fs.mcp.wire, dsh_fs.mcp.options, dsh_fs.cli.mcp_cmd
        for info in pkgutil.walk_packages(dsh_fs.mcp.stdio.__path__, "dsh_fs.mcp.stdio."):
            importlib.import_module(info.name)
        print(sorted(m for m in sys.modules if m == "mcp" or m.startswith(("mcp.", "mcp_types", "pydantic"))))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"


def test_anyio_backend_is_declared_once_for_the_whole_suite() -> None:
    tests = Path(__file__).resolve().parents[2]
    declared = sorted(str(path.relative_to(tests)) for path in tests.rglob("*.py")
                      if "def anyio_" + "backend(" in path.read_text(encoding="utf-8"))
    assert declared == ["conftest.py"]
