"""The public surface: every module's ``__all__`` (as anyio's ``test_all_attributes`` and
httpx's ``test_exported_members`` check theirs) and the version defined once.

Covers: each public module of ``dsh_fs`` (no ``_``-prefixed component) declares a sorted
tuple ``__all__`` whose every name exists; the version is written once, as
``dsh_fs.__version__`` (``pyproject.toml`` declares it dynamic and reads that attribute), and
the installed distribution's metadata agrees.
Not covered: which names each layer should export (the layer tests), import side effects
of the faces (``tests/unit/mcp/test_mcp_units.py``).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import pytest

import dsh_fs


def _public_modules() -> list[str]:
    names = ["dsh_fs"]
    for info in pkgutil.walk_packages(dsh_fs.__path__, "dsh_fs."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


OWN_ENVIRONMENT = ("dsh_fs.adapters.crewai",)
"""modules whose framework cannot share the dev environment: checked in their own
(``tests/e2e/adapters/crewai_checks.py``)"""
MODULES = [name for name in _public_modules() if name not in OWN_ENVIRONMENT]


def test_the_walk_finds_every_layer() -> None:
    for package in ("dsh_fs.core", "dsh_fs.fs", "dsh_fs.fs_local", "dsh_fs.fs_memory", "dsh_fs.fs_s3",
                    "dsh_fs.fs_policy", "dsh_fs.tool_fs", "dsh_fs.tool_fs_search", "dsh_fs.spill", "dsh_fs.patch",
                    "dsh_fs.tool_editor", "dsh_fs.mcp", "dsh_fs.cli", "dsh_fs.testing"):
        assert package in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_every_public_module_declares_a_sorted_tuple_all_of_existing_names(name: str) -> None:
    module: ModuleType = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert isinstance(exported, tuple), f"{name} must declare __all__ as a tuple"
    assert list(exported) == sorted(set(exported)), f"{name}.__all__ must be sorted, without duplicates"
    missing = [item for item in exported if not hasattr(module, item)]
    assert missing == [], f"{name}.__all__ names what the module lacks: {missing}"


def test_the_version_is_defined_once() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", dsh_fs.__version__)
    assert dsh_fs.__version__ == importlib.metadata.version("dsh-fs")
    pyproject = (Path(__file__).resolve().parents[3] / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r"^dynamic = \[[^]]*\"version\"", pyproject, re.M)
    assert re.search(r'^version = \{ attr = "dsh_fs.__version__" \}', pyproject, re.M)
    assert not re.search(r'^version = "', pyproject, re.M)  # no second copy of the number
