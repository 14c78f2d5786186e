"""The README is a front door, and what it points at is there.

Covers: the README stays at most 8 KB; it sums up the guarantees in ten bullets pointing at the
ledger; its documentation index links every page of ``docs/`` (``docs/design/`` included) and
CONTRIBUTING.md; every relative link of the README, CONTRIBUTING.md and the ``docs/`` pages
reaches a file of the checkout; each row of the README's framework table names what
``dsh_fs.adapters`` defines and what a program of the docs uses; every row of the guarantees
ledger (docs/GUARANTEES.md) names its tests, and each named test file exists.

Not covered here: running the programs (``test_docs_*.py`` beside this file, and the e2e tests
they name), whether a row's prose matches its test (read by the reviewer).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from docskit import DOCS, README, REPO, python_blocks, section

README_MAX_BYTES = 8 * 1024
PAGES = sorted(DOCS.glob("*.md"))
DESIGN = sorted((DOCS / "design").glob("*.md"))
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _links(doc: Path) -> list[str]:
    """The relative link targets of ``doc`` (web links left out), as written."""
    return [target for target in LINK.findall(doc.read_text(encoding="utf-8"))
            if not re.match(r"[a-z]+:", target)]


def test_the_readme_is_at_most_8_kb() -> None:
    size = len(README.read_bytes())
    assert size <= README_MAX_BYTES, f"README.md is {size} bytes: move detail into docs/, keep the front door"


def test_the_documentation_index_links_every_page() -> None:
    index = section("## Documentation")
    linked = {(REPO / target).resolve() for target in LINK.findall(index)}
    missing = [page.name for page in [*PAGES, *DESIGN, REPO / "CONTRIBUTING.md"] if page.resolve() not in linked]
    assert not missing, f"README.md, ## Documentation: add a line for {missing}"


@pytest.mark.parametrize("doc", [README, REPO / "CONTRIBUTING.md", *PAGES, *DESIGN], ids=lambda doc: doc.name)
def test_every_relative_link_reaches_a_file(doc: Path) -> None:
    broken = [target for target in _links(doc) if not (doc.parent / target).exists()]
    assert not broken, f"{doc.name}: links to nothing: {broken}"


def test_ten_guarantees_point_at_the_ledger() -> None:
    text = section("## What it guarantees")
    assert "(docs/GUARANTEES.md)" in text
    assert len([line for line in text.splitlines() if line.startswith("* **")]) == 10


def _framework_rows() -> list[list[str]]:
    """The README's framework table: ``[framework, install, names, model]`` per row."""
    table = section("## Pick your path").split("| framework |", 1)[1]
    rows = [line.strip("|").split(" | ") for line in table.splitlines()[2:] if line.startswith("| ")]
    assert len(rows) >= 11 and all(len(row) == 4 for row in rows), rows
    return [[cell.strip() for cell in row] for row in rows]


def test_each_framework_row_names_what_the_adapters_define_and_the_programs_use() -> None:
    defined = set()
    for module in (REPO / "src" / "dsh_fs" / "adapters").rglob("*.py"):
        defined |= set(re.findall(r"^(?:async def|def|class) (\w+)", module.read_text(encoding="utf-8"), re.M))
    printed = "\n".join(block for heading, doc in [("## One agent loop per API", DOCS / "FRAMEWORKS.md"),
                                                   ("## A whole program per framework", DOCS / "FRAMEWORKS.md"),
                                                   ("## One example per vendor", DOCS / "EDITING-FACES.md")]
                        for block in python_blocks(heading, doc))
    for framework, install, names, _model in _framework_rows():
        assert install.startswith("`pip install '.["), (framework, install)
        for name in re.findall(r"`(\w+)`", names):
            assert name in defined, f"{framework}: dsh_fs.adapters defines no {name}"
            assert re.search(rf"\b{name}\b", printed), f"{framework}: no program of the docs uses {name}"


def _ledger_rows() -> list[tuple[str, str]]:
    """docs/GUARANTEES.md's rows: ``(guarantee title, "Proved by" cell)``."""
    rows = re.findall(r"^\| \*\*(.+?)\*\* .* \| ([^|]+) \|$", (DOCS / "GUARANTEES.md").read_text(encoding="utf-8"),
                      re.M)
    assert len(rows) >= 20, len(rows)
    return rows


def test_every_guarantee_names_tests_that_exist() -> None:
    robustness = REPO / "tests" / "robustness"
    for title, proved_by in _ledger_rows():
        named = re.findall(r"`([^`]+\.py)`", proved_by)
        assert named, f"{title}: no test named"
        for name in named:
            found = [REPO / name] if "/" in name else list(robustness.rglob(name))
            assert len(found) == 1 and found[0].is_file(), f"{title}: {name} is not one file of tests/robustness"
