"""``dsh-fs client-config``: the MCP client configuration that serves a directory with this
very installation, absolute paths filled in (a GUI client starts servers from anywhere, with
a PATH of its own)."""

from __future__ import annotations

import json
import os
import sys

import click

from .options import OnceCommand, root_option

__all__ = ("client_config", "server_command")


def server_command(root: str, *more: str) -> tuple[str, list[str]]:
    """``(command, args)`` that start ``dsh-fs mcp --root ROOT`` with this installation: the
    ``dsh-fs`` script being run (by its absolute path), else this interpreter with ``-m``.

    :param root: the served directory (made absolute)
    :param more: further roots (DEVIATIONS D28), each given as one more ``--root``
    """
    script = sys.argv[0] if sys.argv else ""
    tail = ["mcp", *(arg for path in (root, *more) for arg in ("--root", os.path.abspath(path)))]
    if os.path.basename(script) == "dsh-fs" and os.path.isfile(script):
        return os.path.abspath(script), tail
    return os.path.abspath(sys.executable), ["-m", "dsh_fs.cli.main", *tail]


@click.command(name="client-config", cls=OnceCommand)
@root_option
def client_config(roots: tuple[str, ...]) -> None:
    """Print an MCP client configuration (the mcpServers JSON of Claude Desktop, Claude Code's
    .mcp.json, Cursor) that serves --root over stdio with this dsh-fs, absolute paths filled in."""
    command, args = server_command(*(roots or (os.getcwd(),)))
    click.echo(json.dumps({"mcpServers": {"dsh-fs": {"command": command, "args": args}}}, indent=2))
