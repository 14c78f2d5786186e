"""docs/DEVIATIONS.md says, for every tool a `reference` deployment can serve, which commit of
the reference its texts follow (the seed's tools at the seed's commit, the later ones at theirs;
a tool the reference does not have says whose texts it follows instead): a tool added without
a row, or a row without a commit or source, fails here."""

from __future__ import annotations

import os
import re

import dsh_fs
from dsh_fs.faces import FACE_TOOLS

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "DEVIATIONS.md")
HEADING = "## Which reference commit each tool's `reference` texts follow"


def rows() -> list[tuple[str, str]]:
    with open(DOC, encoding="utf-8") as handle:
        text = handle.read()
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    out = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) >= 3 and not cells[0].startswith("tool") and set(cells[0]) != {"-"}:
            out.append((cells[0], cells[1]))
    return out


def test_every_tool_a_reference_deployment_serves_names_the_commit_its_texts_follow():
    ctx = dsh_fs.create_context(profile="reference", list_tool=True, images=True, faces=list(FACE_TOOLS))
    named = {name: follows for tools, follows in rows() for name in re.findall(r"`([a-z_]+)`", tools)}
    for tool in ctx.tools.names():
        assert tool in named, f"docs/DEVIATIONS.md names no reference commit for {tool}"
        follows = named[tool]  # a commit of the reference, or the vendor source a tool that is not its follows
        assert re.search(r"\b[0-9a-f]{10,40}\b", follows) or follows.startswith("not the reference's"), (tool, follows)


def test_the_seed_tools_follow_the_seed_commit():
    named = {name: follows for tools, follows in rows() for name in re.findall(r"`([a-z_]+)`", tools)}
    for tool in ("read", "write", "edit", "glob", "grep"):
        assert "417248eed86cb101dd641dffa5d62c05c5eaedb6" in named[tool] or "417248eed8" in named[tool]
