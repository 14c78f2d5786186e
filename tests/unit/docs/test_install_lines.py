"""Every install line the documentation and the command line print works as printed from what
a user has, a checkout: ``pip install '.[extra]'`` (``uv tool install '.[mcp]'``, ``uvx --from
'.[mcp]' dsh-fs mcp``), never ``pip install 'dsh-fs[extra]'`` (no such package is on the index
yet). Each extra named exists in pyproject.toml."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
EXTRAS = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
PRINTED = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md")),
           *sorted((ROOT / "src" / "dsh_fs").rglob("*.py"))]


def test_no_install_line_names_a_package_the_index_does_not_have() -> None:
    for path in PRINTED:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"(pip|uv tool) install [^\n`]*'dsh-fs\[", text), path


def test_every_extra_an_install_line_names_exists() -> None:
    for path in PRINTED:
        for extras in re.findall(r"'\.\[([a-z0-9,-]+)\]'", path.read_text(encoding="utf-8")):
            assert set(extras.split(",")) <= EXTRAS, (path, extras)
