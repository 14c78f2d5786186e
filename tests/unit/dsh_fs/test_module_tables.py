"""The module tables of the package docstrings (``| module | owns |``) name every module of
their package, and only those: the table a reader starts from stays true when a module is
added, split or renamed.

Covers: every package of ``dsh_fs`` whose docstring has such a table (``fs``, ``fs_local``,
``mcp``, ``tool_fs.hints``, the faces), and CONTRIBUTING.md's Layout table (every top-level package
and module of ``dsh_fs``). Not covered: whether each row says what its module owns (read by the
reviewer), packages without a table.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

import dsh_fs
from docskit import REPO

TABLE_HEAD = "| module | owns |"


def _packages_with_tables() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(dsh_fs.__path__, "dsh_fs."):
        if info.ispkg and info.name != "dsh_fs.adapters.crewai":
            doc = importlib.import_module(info.name).__doc__ or ""
            if TABLE_HEAD in doc:
                names.append(info.name)
    return sorted(names)


PACKAGES = _packages_with_tables()


def test_the_tables_are_found() -> None:
    assert {"dsh_fs.fs", "dsh_fs.fs_local", "dsh_fs.mcp", "dsh_fs.tool_fs.hints"} <= set(PACKAGES)


@pytest.mark.parametrize("name", PACKAGES)
def test_a_module_table_names_every_module_of_its_package(name: str) -> None:
    package = importlib.import_module(name)
    table = package.__doc__.split(TABLE_HEAD, 1)[1]
    rows = [line for line in table.splitlines() if line.startswith("| ``")]
    named = {module for row in rows for module in re.findall(r"``(\w+)``", row.split(" | ")[0])}
    modules = {info.name for info in pkgutil.iter_modules(package.__path__)}
    assert named == modules, f"{name}: missing rows {sorted(modules - named)}, rows of no module {sorted(named - modules)}"


def test_the_contributing_layout_names_every_top_level_module() -> None:
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    layout = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in layout.splitlines() if line.startswith("| `")]
    named = {module for row in rows for module in re.findall(r"`(\w+)`", row.split(" | ")[0])}
    modules = {info.name for info in pkgutil.iter_modules(dsh_fs.__path__)}
    assert named == modules, f"missing rows {sorted(modules - named)}, rows of no module {sorted(named - modules)}"
