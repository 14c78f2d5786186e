"""Pure parts of the ``apply_patch`` face (``dsh_fs.tool_patch``): the description as Codex ships
it, the planner-kind → error-code map, and the region diffs of an applied patch (the same
REFERENCE-SPEC §4.9 hunks as diffing the whole file).

Not covered here: the patch engine (tests/unit/patch/test_patch_parser.py, test_patch_apply.py), the
tool doing I/O (tests/integration/tool_patch/test_apply_patch.py).
"""

from __future__ import annotations

import pytest

from dsh_fs.patch import PatchError
from dsh_fs.tool_patch.executor import patch_error_code
from dsh_fs.tool_patch.texts import APPLY_PATCH_DESCRIPTION


def test_the_apply_patch_description_is_codexs() -> None:
    assert APPLY_PATCH_DESCRIPTION.startswith("Use the `apply_patch` tool to edit files.\nYour patch language is a "
                                              "stripped\u2011down, file\u2011oriented diff format")
    assert "\n@@ \t def method():\n" in APPLY_PATCH_DESCRIPTION
    assert "Then one or more \u201chunks\u201d" in APPLY_PATCH_DESCRIPTION
    assert APPLY_PATCH_DESCRIPTION.endswith("- File references can only be relative, NEVER ABSOLUTE.\n")


def test_planner_kinds_map_to_codes() -> None:
    codes = {kind: patch_error_code(PatchError("x", kind)) for kind in
             ("syntax", "empty", "duplicate", "missing", "exists", "not_found", "ambiguous")}
    assert {k: v and v.value for k, v in codes.items()} == {
        "syntax": None, "empty": None, "duplicate": None, "missing": "FS_NOT_FOUND", "exists": "FS_NOT_OBSERVED",
        "not_found": "FS_EDIT_NOT_FOUND", "ambiguous": "FS_AMBIGUOUS_EDIT"}


def _apply(lines: list[str], edits: list[tuple[int, int, list[str]]]) -> list[str]:
    out = list(lines)
    for start, removed, inserted in reversed(edits):
        out[start : start + removed] = inserted
    return out


@pytest.mark.parametrize("seed", range(300))
def test_region_diffs_equal_the_whole_file_diff(seed: int) -> None:
    """``AppliedPatch.diffs`` diffs only around a patch's hunks: the same §4.9 hunks as diffing
    the whole file (distinct lines, so the alignment is unique)."""
    import random

    from dsh_fs.tool_fs.diff import compute_hunk_diffs
    from dsh_fs.tool_patch.executor import region_diffs

    rng = random.Random(seed)
    count = rng.randint(1, 60)
    lines = [f"line {i}" for i in range(count)] + ([""] if rng.random() < 0.8 else [])
    edits: list[tuple[int, int, list[str]]] = []
    at = 0
    while at < len(lines) and len(edits) < 8:
        at += rng.randint(0, 12)
        if at > len(lines):
            break
        removed = rng.randint(0, min(3, len(lines) - at))
        inserted = [f"new {seed} {at} {k}" for k in range(rng.randint(0 if removed else 1, 3))]
        edits.append((at, removed, inserted))
        at += removed + 1
    before, after = "\n".join(lines), "\n".join(_apply(lines, edits))
    assert region_diffs("p", before, after, edits) == compute_hunk_diffs("p", before, after)


def test_the_apply_patch_schema_is_codexs_one_required_input() -> None:
    import dsh_fs

    ctx = dsh_fs.create_context(faces=["apply_patch"])
    (schema,) = [s for s in ctx.tools.schemas() if s["name"] == "apply_patch"]
    assert schema["parameters"]["required"] == ["input"]
    assert schema["parameters"]["properties"] == {
        "input": {"type": "string", "description": "The entire contents of the apply_patch command"}}
