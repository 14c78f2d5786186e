"""docs/S3.md's "Try it on your machine" runs as printed: the three lines in one ``bash``, in an
empty directory, with the checkout's environment first on ``PATH`` (where ``python`` and
``dsh-fs`` are after the page's install line) and no AWS settings of the machine's: a moto
server starts on a free port, the bucket is made, the file is written to it. Then the page's
next sentence: ``dsh-fs read`` with the same options reads it back, and ``stop`` stops the
server (also when a line failed).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from docskit import DOCS, code_blocks

PAGE = DOCS / "S3.md"


def _bash(script: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=240, stdin=subprocess.DEVNULL)


def test_the_local_quick_start_writes_to_a_local_bucket(tmp_path: Path) -> None:
    (block,) = code_blocks("## Try it on your machine", PAGE, "bash")
    assert len(block.splitlines()) == 3
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "DSH_FS_S3"))}
    env.update(PATH=f"{os.path.dirname(sys.executable)}:{env.get('PATH', '/usr/bin:/bin')}", TMPDIR=str(tmp_path),
               HOME=str(tmp_path))  # no ~/.aws of the machine's; the server's pidfile in TMPDIR
    cwd = tmp_path / "scratch"
    cwd.mkdir()
    read_back = 'dsh-fs read notes.txt --s3 s3://demo/app --endpoint-url "$DSH_FS_S3_ENDPOINT"'
    try:
        done = _bash(f"{block}{read_back}\n", env, cwd)
    finally:
        stopped = _bash("python -m dsh_fs.testing.moto_server stop", env, cwd)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ("<path>/notes.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>\n"
                           "<path>/notes.txt</path>\n<type>file</type>\n<content>\n1: hello from S3\n\n"
                           "(End of file - total 1 lines)\n</content>\n")
    assert stopped.returncode == 0, stopped.stderr
