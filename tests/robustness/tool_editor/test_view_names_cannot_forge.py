"""The editors' directory ``view`` prints each name on one row that reads back (deviation D22;
``tool_common.shown``), in both faces and both profiles.

A hostile repository names ``x\\nf\\tforged.txt`` (a row no file has), ``b.txt\\n``,
``report\\u202egnp.exe`` (shown raw: ``reportexe.png``) and ``a\\u200bb.txt`` beside a real
``ab.txt``. The listing (``d``/``f``/``?``, a tab, the path) prints such a path as a JSON string
literal with each control, separator and format character escaped, as ``glob`` and ``grep``
do; every other path is printed as it is.
"""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path

import anyio
import pytest

import dsh_fs
from dsh_fs import Session

NAMES = ["x\nf\tforged.txt", "b.txt\n", "b.txt", "report\u202egnp.exe", "a\u200bb.txt", "ab.txt",
         "sep\u2028arated.txt", "bom\ufeff.txt", "plain name.txt"]


@pytest.fixture
def hostile(tmp_path: Path) -> str:
    root = os.path.realpath(tmp_path / "repo")
    os.mkdir(root)
    os.mkdir(os.path.join(root, "sub\u202edir"))
    for name in NAMES:
        Path(root, name).write_text("alpha\n", encoding="utf-8")
    Path(root, "sub\u202edir", "in\u200bner.txt").write_text("alpha\n", encoding="utf-8")
    return root


def _rows(text: str) -> list[tuple[str, str]]:
    body = text.split("\n", 1)[1].rstrip("\n")
    rows = []
    for line in body.split("\n"):
        kind, path = line.split("\t", 1)
        rows.append((kind, json.loads(path) if path.startswith('"') else path))
    return rows


async def _view(root: str, face: str, profile: str) -> str:
    ctx = dsh_fs.create_context(cwd=root, profile=profile, faces=[face])
    async with ctx:
        result = await ctx.tools.execute(face, {"command": "view", "path": root}, session=Session(root))
    assert not result.is_error, result.text
    return result.text


@pytest.mark.parametrize("profile", ["default", "reference"])
@pytest.mark.parametrize("face", ["str_replace_based_edit_tool", "str_replace_editor"])
def test_D22_the_directory_view_prints_each_name_on_one_row(hostile: str, face: str, profile: str) -> None:
    text = anyio.run(_view, hostile, face, profile)
    hidden = [hex(ord(ch)) for ch in text if unicodedata.category(ch) in ("Cf", "Zl", "Zp") or ch in "\r\x0b\x0c"]
    assert not hidden, (hidden, text)
    rows = _rows(text)
    expected = {("d", hostile), ("d", f"{hostile}/sub\u202edir"), ("f", f"{hostile}/sub\u202edir/in\u200bner.txt")}
    expected |= {("f", f"{hostile}/{name}") for name in NAMES}
    assert sorted(rows) == sorted(expected)
    assert f"f\t{hostile}/ab.txt" in text.split("\n") and f"f\t{hostile}/plain name.txt" in text.split("\n")
    assert f'f\t"{hostile}/report\\u202egnp.exe"' in text.split("\n")
