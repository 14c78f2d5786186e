"""The documentation's programs, found where they are printed and run as printed (not a test module).

A program is a fenced block of a page of this checkout (``PAGES``: ``README.md``,
``CONTRIBUTING.md``, ``docs/**/*.md``) whose info string names its language (``python``, ``sh``,
``bash``, ``json``, ``toml``, …; ``text`` marks a block that is no program); the tests find it by
the heading it sits under and that info string, so moving a section to another document moves
one argument. A command runs through ``bash`` as printed, in ``shell_env``;
``tests/unit/docs/test_docs_blocks_run.py`` names the tests that run each block.

* ``REPO`` — the checkout; ``README`` — its ``README.md``; ``DOCS`` — its ``docs/`` folder;
* ``section(heading, doc)`` — the text under ``heading`` (the whole heading line, e.g.
  ``"### One agent loop per API"``) up to the next heading of the same or a higher level;
* ``python_blocks(heading, doc)`` — the section's ````python`` blocks, in order;
* ``blocks_by_marker(heading, markers, doc)`` — those blocks keyed by the one marker each
  contains (``{marker: key}``); fails unless every block has a marker and every key one block;
* ``Block`` / ``fenced_blocks(doc)`` — every fenced block of a page (its info string's first
  word, the heading it sits under, its first line's number, its text);
  ``code_blocks(heading, doc, lang)`` — the section's blocks of one info string, in order;
* ``quotes(doc)`` — a page's block quotes (printed output), each joined into one line;
* ``PAGES`` — the pages whose blocks must each be run by a test or marked ``text``
  (``tests/unit/docs/test_docs_blocks_run.py``);
* ``shell_lines(block)`` — a shell block's commands, one a line (comments and blank lines
  dropped, ``\\``-continued lines joined); ``shell_env(tmp)`` — the environment a printed command
  runs in: this venv's ``bin`` first on ``PATH``, ``HOME`` and dsh-fs state under ``tmp``;
* ``checkout_copy(dest)`` — what a clean clone needs to install from (``pyproject.toml``,
  ``README.md``, ``LICENSE``, ``src/``), copied into ``dest``, for an install line run as printed
  without touching this checkout's own environment;
* ``run_printed(code, name, **given)`` — run a block as the ``__main__`` program named ``name``
  (``given``: names the page leaves to the reader); its globals;
* ``run_cell(code, name, scope)`` — run a snippet as an async REPL cell (top-level ``await``);
* the typo scenario the agent programs run (a workspace whose README.md says "teh", a scripted
  model that reads it, fixes it with ``edit`` and answers "Fixed the typo."): ``TYPO``,
  ``FIXED``, ``READ_ARGS``, ``EDIT_ARGS``, ``typo_workspace``, ``typo_results``, ``assert_fixed``.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
TYPO = "A tool that teh agent uses.\n"
FIXED = "A tool that the agent uses.\n"
READ_ARGS = {"file_path": "README.md"}
EDIT_ARGS = {"file_path": "README.md", "old_string": "teh", "new_string": "the"}
PAGES = (README, REPO / "CONTRIBUTING.md", *sorted(DOCS.rglob("*.md")))
FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$")

__all__ = (
    "DOCS",
    "PAGES",
    "Block",
    "EDIT_ARGS",
    "FIXED",
    "READ_ARGS",
    "README",
    "REPO",
    "TYPO",
    "assert_fixed",
    "blocks_by_marker",
    "checkout_copy",
    "code_blocks",
    "fenced_blocks",
    "python_blocks",
    "run_cell",
    "run_printed",
    "section",
    "shell_env",
    "shell_lines",
    "typo_results",
    "typo_workspace",
)


def section(heading: str, doc: Path = README) -> str:
    """The text of ``doc`` after the line ``heading`` (``"## Title"``) up to the next heading of
    its level or a higher one (fewer ``#``), or the end; a line inside a fenced block (a comment
    of a program) is no heading. ``ValueError`` when the heading is absent."""
    level = len(heading) - len(heading.lstrip("#"))
    lines = doc.read_text(encoding="utf-8").splitlines(keepends=True)
    fenced, start = False, None
    for number, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
        elif fenced:
            continue
        elif start is None and line.rstrip() == heading:
            start = number + 1
        elif start is not None and re.match(rf"#{{1,{level}}} ", line):
            return "".join(lines[start:number])
    if start is None:
        raise ValueError(f"{doc.name}: no heading {heading!r}")
    return "".join(lines[start:])


def python_blocks(heading: str, doc: Path = README) -> list[str]:
    """The ````python`` blocks of ``section(heading, doc)``, in order, each as its code text."""
    return re.findall(r"```python\n(.*?)```", section(heading, doc), flags=re.S)


def blocks_by_marker(heading: str, markers: dict[str, str], doc: Path = README) -> dict[str, str]:
    """``{key: block}`` for the section's python blocks, a block's key being that of the marker
    (``{marker: key}``) it contains; asserts one block per key and no other block."""
    blocks = python_blocks(heading, doc)
    found = {next(key for marker, key in markers.items() if marker in block): block for block in blocks}
    assert sorted(found) == sorted(set(markers.values())) and len(blocks) == len(found), sorted(found)
    return found


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: ``lang`` the first word of its info string (``""`` when it
    has none), ``heading`` the whole line of the heading it sits under (``""`` above the first),
    ``line`` the 1-based number of its opening fence, ``text`` its content."""

    doc: Path
    heading: str
    lang: str
    line: int
    text: str

    def where(self) -> str:
        """``PAGE:LINE`` (the page relative to the checkout), for messages."""
        return f"{self.doc.relative_to(REPO)}:{self.line}"


def fenced_blocks(doc: Path) -> list[Block]:
    """Every fenced block of ``doc`` (```` ``` ```` or ``~~~`` fences at the start of a line; a
    block ends at a fence of its kind at least as long), in page order."""
    blocks: list[Block] = []
    heading, opened, lang, start, body = "", "", "", 0, []
    for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(keepends=True), 1):
        fence = FENCE.match(line.rstrip("\n"))
        if opened:
            if fence and fence[1][0] == opened[0] and len(fence[1]) >= len(opened) and not fence[2].strip():
                blocks.append(Block(doc, heading, lang, start, "".join(body)))
                opened = ""
            else:
                body.append(line)
        elif fence:
            opened, start, body = fence[1], number, []
            lang = (fence[2].split() or [""])[0]
        elif re.match(r"#{1,6} ", line):
            heading = line.rstrip()
    assert not opened, f"{doc.name}:{start}: a fenced block is never closed"
    return blocks


def code_blocks(heading: str, doc: Path, lang: str) -> list[str]:
    """The texts of the blocks of ``lang`` (``"sh"``, ``"json"``, …) sitting right under the line
    ``heading`` of ``doc`` (not under a subheading of it), in order; ``ValueError`` when the
    heading is absent."""
    section(heading, doc)  # the heading exists
    return [block.text for block in fenced_blocks(doc) if block.heading == heading and block.lang == lang]


def quotes(doc: Path) -> list[str]:
    """The block quotes of ``doc`` (runs of lines starting ``> ``), each joined into one line, in
    page order."""
    return [" ".join(line.removeprefix("> ") for line in block.splitlines())
            for block in re.findall(r"((?:^> .*\n)+)", doc.read_text(encoding="utf-8"), re.M)]


def shell_lines(block: str) -> list[str]:
    """The commands of a shell block as printed, one a line: comments and blank lines
    dropped, a line ending in ``\\`` joined with the next."""
    joined = re.sub(r"\\\n\s*", " ", block)
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def shell_env(tmp: Path) -> dict[str, str]:
    """The environment a printed command runs in: this interpreter's environment with its
    ``bin`` directory first on ``PATH`` (``dsh-fs`` is this checkout's), ``HOME`` the directory
    ``tmp/home`` (created), dsh-fs's state and locks under ``tmp``, no ``DSH_FS_*`` option set."""
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = {key: value for key, value in os.environ.items() if not key.startswith("DSH_FS_")}
    env.update(PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]), HOME=str(home),
               DSH_FS_STATE_DIR=str(tmp / "state"), DSH_FS_LOCK_DIR=str(tmp / "locks"))
    return env


def checkout_copy(dest: Path) -> Path:
    """Copy what installing the package from a checkout reads (``pyproject.toml``,
    ``README.md``, ``LICENSE``, ``src/`` without caches or build metadata) into the new
    directory ``dest``; returns ``dest``."""
    dest.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, dest / name)
    shutil.copytree(REPO / "src", dest / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return dest


def run_printed(code: str, name: str = "README.md", **given: Any) -> dict[str, Any]:
    """Run ``code`` as a program (``__name__ == "__main__"``), its tracebacks naming ``name``;
    returns its global namespace (what the program defined, for the test to look at).
    ``given``: names a snippet leaves to its reader (``dsh_fs=dsh_fs``), defined before it runs."""
    scope: dict[str, Any] = {**given, "__name__": "__main__"}
    exec(compile(code, name, "exec"), scope)
    return scope


async def run_cell(code: str, name: str, scope: dict[str, Any]) -> dict[str, Any]:
    """Run a snippet as an async REPL runs a cell: top-level ``await`` / ``async with`` allowed,
    in the namespace ``scope`` (shared by the cells of one page: what one defines, the next
    uses), its tracebacks naming ``name``; returns ``scope``."""
    outcome = eval(compile(code, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT), scope)
    if outcome is not None:  # a coroutine when the cell awaits
        await outcome
    return scope


def typo_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """``<tmp_path>/project`` holding README.md with ``TYPO``, made the current directory; its real path."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "README.md").write_text(TYPO)
    monkeypatch.chdir(root)
    return os.path.realpath(root)


def typo_results(ws: str) -> tuple[str, str]:
    """The texts the model must get back: the ``read`` of README.md, then the ``edit``'s."""
    path = os.path.join(ws, "README.md")
    read = (f"<path>{path}</path>\n<type>file</type>\n<content>\n1: {TYPO.rstrip()}\n\n"
            "(End of file - total 1 lines)\n</content>")
    return read, f"The file {path} has been updated successfully."


def assert_fixed(ws: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The program printed exactly the model's final answer, and the typo is fixed on disk."""
    assert capsys.readouterr().out == "Fixed the typo.\n"
    assert Path(ws, "README.md").read_text() == FIXED
