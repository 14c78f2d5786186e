"""``glob`` through the registry with ripgrep's output arriving in many pipe reads: the page,
the footer and the saved complete list are, byte for byte, what each printed path gives on
its own (§6.1, §6.3 display paths, D22 quoting, U+FFFD for bad bytes), in both profiles, and
the raw-output cap still counts the reference's decoded bytes (§6.3)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from dsh_fs import Session
from dsh_fs.tool_common.shown import shown_name
from dsh_fs.tool_fs_search.output import to_workdir_relative
from filekit import get
from searchkit import FakeRg, call, search_ctx

pytestmark = pytest.mark.anyio


@pytest.fixture
def fake(tmp_path: Any) -> FakeRg:
    return FakeRg(tmp_path)


def _printed(ws: str) -> list[bytes]:
    """About 300 KiB of names (several pipe reads): relative, absolute below the working
    directory and outside it, names that need quoting, one not UTF-8, one empty entry."""
    names: list[bytes] = []
    for index in range(6000):
        kind = index % 6
        name = f"pkg{index // 600:02}/mod{index % 7}/f{index:05}-{'x' * 20}.py"
        if kind == 1:
            name = f"{ws}/{name}"
        elif kind == 2:
            name = f"/elsewhere/{name}"
        elif kind == 3 and index % 600 == 3:
            name = f"odd/line\nbreak-{index}.py"
        elif kind == 4 and index % 1200 == 4:
            name = f"odd/esc\x1b[31m-{index}.py"
        names.append(name.encode())
    names[4321] = b"odd/latin-\xe9-file.py"
    names[77] = b""
    return names


def _expected(printed: list[bytes], ws: str) -> list[str]:
    """Each printed path on its own: decoded (U+FFFD), made relative to ``ws``, quoted (D22)."""
    return [shown_name(to_workdir_relative(line.decode("utf-8", "replace"), ws)) for line in printed if line]


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_a_long_listing_is_each_paths_own(ws: str, fake: FakeRg, profile: str) -> None:
    printed = _printed(ws)
    fake.script(stdout=b"\0".join(printed) + b"\0")
    ctx = search_ctx(ws, profile=profile, rg_path=fake.path, glob_max_results=250)
    result = await call(ctx, "glob", {"pattern": "**/*.py"}, session=Session(ws))
    assert not result.is_error, result.text
    expected = _expected(printed, ws)
    head, _, footer = result.text.rpartition("\n\n")
    assert head == "\n".join(expected[:250])
    assert footer.startswith(f"(Showing 250 of {len(expected)} paths. Full sorted result stored at: /")
    locator = footer.split("stored at: ")[1].split(". Use read")[0]
    assert get(locator) == "\n".join(expected).encode()
    assert len(expected) == 5999 and "odd/latin-\ufffd-file.py" in expected


async def test_the_raw_cap_counts_the_decoded_bytes(ws: str, fake: FakeRg) -> None:
    """reference (§6.3): ripgrep's output fits the cap, its UTF-8 decoding (U+FFFD: 3 bytes for
    1) does not: the overflow error, as when each line was decoded alone."""
    names = [f"f{index:04}.py".encode() for index in range(2000)] + [b"\xff\xfe"]
    raw = b"\0".join(names) + b"\0"
    fake.script(stdout=raw)
    ctx = search_ctx(ws, profile="reference", rg_path=fake.path, raw_output_max_bytes=len(raw) + 3)
    result = await call(ctx, "glob", {"pattern": "*"}, session=Session(ws))
    assert result.is_error and result.error.code == "SEARCH_RAW_OUTPUT_OVERFLOW"
    assert str(len(raw) + 4) in result.text
    roomy = search_ctx(ws, profile="reference", rg_path=fake.path, raw_output_max_bytes=len(raw) + 4)
    fits = await call(roomy, "glob", {"pattern": "*"}, session=Session(ws))
    assert not fits.is_error and fits.text.count("\n") >= 100


async def test_a_path_behind_a_link_out_is_dropped_from_a_long_listing(ws: str, fake: FakeRg, tmp_path: Any) -> None:
    """S8 on batches: the paths ripgrep printed below a link out of the root go, every other
    path stays, in order."""
    os.makedirs(tmp_path / "outside")
    os.symlink(str(tmp_path / "outside"), os.path.join(ws, "out"))
    names = [f"{'out' if index % 3 == 0 else 'in'}/f{index:05}-{'y' * 30}.py" for index in range(4000)]
    fake.script(stdout="\0".join(names).encode() + b"\0")
    ctx = search_ctx(ws, rg_path=fake.path, glob_max_results=5000)
    result = await call(ctx, "glob", {"pattern": "**/*.py"}, session=Session(ws))
    assert result.text == "\n".join(name for name in names if name.startswith("in/"))
