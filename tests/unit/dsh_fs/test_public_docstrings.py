"""The public API's docstrings cite deviations a reader can follow: ``help(dsh_fs.create_context)``
and the others say what a deviation does where they name it, never a bare range of IDs
(``D1–D12`` tells nothing of any of them), and every ID they name is registered in
docs/DEVIATIONS.md or the founding ``../shared/spec/DEVIATIONS.md``.

The public API here: ``dsh_fs.__all__``, ``dsh_fs.fs_local.LocalFileSystem``, the adapters'
modules, and the public methods of their classes.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import dsh_fs
import dsh_fs.adapters
from docskit import DOCS, REPO

ID = r"\b(?:[A-Z]{1,2}\d{1,2})\b"
CITED = re.compile(rf"DEVIATIONS((?:[ ,]+(?:and )?{ID})+)|\(({ID}(?:, {ID})*)\)")
RANGE = re.compile(r"\b[A-Z]{1,2}\d{1,2}[–-][A-Z]{0,2}\d{1,2}\b")


def _modules() -> list[ModuleType]:
    found = [dsh_fs, dsh_fs.adapters, importlib.import_module("dsh_fs.fs_local")]
    for info in pkgutil.iter_modules(dsh_fs.adapters.__path__):
        try:
            found.append(importlib.import_module(f"dsh_fs.adapters.{info.name}"))
        except ImportError:  # an adapter whose framework is not installed here (CrewAI's own environment)
            continue
    return found


def _documented() -> Iterator[tuple[str, str]]:
    seen: set[int] = set()
    for module in _modules():
        names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
        for name in names:
            obj: Any = getattr(module, name, None)
            if obj is None or not (getattr(obj, "__module__", "") or "").startswith("dsh_fs"):
                continue
            members = [(f"{module.__name__}.{name}", obj)]
            if inspect.isclass(obj):
                members += [(f"{module.__name__}.{name}.{m}", getattr(obj, m)) for m, v in vars(obj).items()
                            if not m.startswith("_") and (callable(v) or isinstance(v, (property, classmethod,
                                                                                        staticmethod)))]
            for where, member in members:
                doc = inspect.getdoc(member)
                if doc and id(member) not in seen:
                    seen.add(id(member))
                    yield where, " ".join(doc.split())


def _registered() -> set[str]:
    text = (DOCS / "DEVIATIONS.md").read_text(encoding="utf-8")
    text += (REPO.parent / "shared" / "spec" / "DEVIATIONS.md").read_text(encoding="utf-8")
    return set(re.findall(r"^\| ?\*{0,2}([A-Z]{1,2}\d{1,2})\*{0,2} \|", text, re.M))


def test_no_public_docstring_cites_a_bare_range_of_deviations() -> None:
    ranges = [(where, found.group()) for where, doc in _documented() for found in RANGE.finditer(doc)]
    assert ranges == []


def test_every_deviation_a_public_docstring_names_is_registered() -> None:
    registered = _registered()
    assert {"D1", "D28", "M3", "E10"} <= registered
    unknown, named = [], set()
    for where, doc in _documented():
        for found in CITED.finditer(doc):
            for cited in re.findall(ID, found.group(1) or found.group(2)):
                named.add(cited)
                if cited not in registered:
                    unknown.append((where, cited))
    assert unknown == [] and {"D5", "D28", "M3", "E10"} <= named
