"""What the channel tests share: a ``ChannelFileSystem`` over the subprocess channel (the
helper started by an interpreter without dsh-fs, ``dsh_fs.testing.channels``), and a seeded
workspace to run the same tool calls on the local disk and over the channel."""

from __future__ import annotations

import os
import shutil
from typing import Any

from dsh_fs.fs_channel import ChannelFileSystem
from dsh_fs.testing.channels import far_python, subprocess_channel

def _png() -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (3, 2), (200, 40, 10)).save(out, format="PNG")
    return out.getvalue()


PNG_1X1 = _png()
"""a small well-formed PNG (3×2, made by Pillow)"""


def channel_fs(root: str | None, **options: Any) -> ChannelFileSystem:
    """A provider over the subprocess channel, confined to ``root`` (``None``: the whole disk)."""
    options.setdefault("python", far_python())
    return ChannelFileSystem(subprocess_channel(), root=root, **options)


def seed(directory: str) -> None:
    """A small project: text files (LF, CRLF, BOM, a long one), a binary file, an image, a
    symlinked directory and file inside, links to a directory and a file outside, a hidden
    file, ignore rules, nested directories."""
    os.makedirs(directory, exist_ok=True)
    files = {
        "README.md": "# Title\n\nSome words here.\nTODO: more\n",
        "src/main.py": "def main():\n    print('hello')\n    return 1\n",
        "src/util.py": "import os\n\n\ndef helper(x):\n    return x * 2  # TODO\n",
        "src/crlf.txt": "one\r\ntwo\r\nthree\r\n",
        "src/bom.txt": "\ufeffwith a bom\nline two\n",
        "docs/long.txt": "".join(f"line {i} of the long file\n" for i in range(1, 5001)),
        "docs/notes/deep.md": "deep TODO note\n",
        ".hidden/secret.txt": "TODO hidden\n",
        "build/out.txt": "TODO built\n",
        ".gitignore": "build/\n",
        "data.bin": None,
        "pic.png": None,
    }
    for rel, text in files.items():
        path = os.path.join(directory, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if rel == "data.bin":
            data = b"\x00\x01\x02TODO\x00binary\n"
        elif rel == "pic.png":
            data = PNG_1X1
        else:
            data = text.encode("utf-8")  # type: ignore[union-attr]
        with open(path, "wb") as handle:
            handle.write(data)
    os.symlink("src", os.path.join(directory, "linked"))
    os.symlink("README.md", os.path.join(directory, "readme-link.md"))
    outside = os.path.join(os.path.dirname(directory), "outside")  # links out of the root (S8)
    os.makedirs(outside, exist_ok=True)
    with open(os.path.join(outside, "leak.py"), "w", encoding="utf-8") as handle:
        handle.write("TODO leaked\n")
    os.symlink(outside, os.path.join(directory, "escape"))
    os.symlink(os.path.join(outside, "leak.py"), os.path.join(directory, "src", "leak-link.py"))


def reset(directory: str) -> None:
    """Empty ``directory`` and seed it again."""
    shutil.rmtree(directory)
    seed(directory)
