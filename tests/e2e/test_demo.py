"""The README's first command: ``dsh-fs demo`` drives the real MCP server with the real client.

Covers: the scripted session completes and prints exactly what the model saw at the key
steps. Not covered here: the individual MCP behaviours (tests/e2e/test_mcp_*.py).
"""

from __future__ import annotations

import subprocess
import sys


def test_demo_runs_the_scripted_session_end_to_end() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "dsh_fs.cli.main", "demo"], capture_output=True, text=True, timeout=180
    )
    out = proc.stdout
    assert proc.returncode == 0, out[-3000:] + proc.stderr[-3000:]
    assert "Every step behaved as expected." in out
    assert "Use the read tool — not shell commands like cat — to inspect text files." in out  # instructions
    assert "DeepSeek Harness SDK" not in out  # a tool server sends no agent identity
    assert "first — read the file, then retry" in out  # the refused unread edit (D9 remedy)
    assert "file changed since it was read — re-read the file, then retry" in out  # the stale refusal
    assert "Created file" in out
    assert "dsh_fs/core/signal.py" in out and "class HarnessError(Exception):" in out  # glob and grep
    assert "Found 250 of " in out and "(Full grep result stored at: " in out  # a capped grep, saved…
    assert "(Showing lines 250-255 of " in out  # …and paged with read from outside the served root
    assert "(End of file - total 300000 lines)" in out
    assert "(Showing lines 150000-150002 of 300000. Use offset=150003 to continue.)" in out
    assert '"""A thread-safe, abortable cancellation token' in out  # the retry landed on disk
