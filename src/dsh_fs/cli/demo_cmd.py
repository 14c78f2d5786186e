"""``dsh-fs demo``: a live agent session over the MCP server (see ``demo.py``)."""

from __future__ import annotations

import sys

import anyio
import click

from .options import OnceCommand

__all__ = ("demo",)


@click.command(cls=OnceCommand)
@click.option("--keep", is_flag=True, help="Keep the temporary workspace and print its path.")
def demo(keep: bool) -> None:
    """Run a scripted agent session over the real MCP client and server.

    A temporary copy of dsh-fs's own sources is served by `dsh-fs mcp`; the script reads,
    is refused an unread edit, edits, loses a race to another process (stale), re-reads,
    retries, writes a new file and pages a huge log, printing exactly what the model sees.
    Then the person takes back what the agent did while the server runs: its changes listed, a
    dry run, a rewind, and a rewind refused because someone else changed the file since.
    """
    from .demo import run_demo

    sys.exit(anyio.run(lambda: run_demo(keep=keep)))
