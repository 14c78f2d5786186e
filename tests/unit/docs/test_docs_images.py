"""docs/IMAGES.md's opening line of Python, run as printed (its ``/srv/project`` a temporary
directory, ``dsh_fs`` imported as the page assumes): the context it builds serves
``read_image`` beside the file tools.

Not covered here: ``read_image`` itself (tests/integration/tool_image, tests/e2e/mcp/test_mcp_images.py).
"""

from __future__ import annotations

from pathlib import Path

import dsh_fs
from docskit import DOCS, python_blocks, run_printed

PAGE = DOCS / "IMAGES.md"


def test_the_opening_line_serves_read_image(tmp_path: Path) -> None:
    [line] = python_blocks("# Images: `read_image`", PAGE)
    assert "/srv/project" in line
    scope = run_printed(line.replace("/srv/project", str(tmp_path)), PAGE.name, dsh_fs=dsh_fs)
    assert {"read_image", "read", "write", "edit"} <= set(scope["ctx"].tools.names())  # type: ignore[attr-defined]
