"""``dsh-fs client-config``: the MCP client configuration that serves a directory with this
very installation, absolute paths filled in (a GUI client starts servers from anywhere, with
a PATH of its own)."""

from __future__ import annotations

import json
import os
import sys

import click

from .options import OnceCommand, channel_url, root_option

__all__ = ("client_config", "server_command")


def server_command(root: str, *more: str) -> tuple[str, list[str]]:
    """``(command, args)`` that start ``dsh-fs mcp --root ROOT`` with this installation: the
    ``dsh-fs`` script being run (by its absolute path), else this interpreter with ``-m``.

    :param root: the served directory (made absolute; a far side's URL as given, docs/CHANNELS.md)
    :param more: further roots (DEVIATIONS D28), each given as one more ``--root``
    """
    script = sys.argv[0] if sys.argv else ""
    tail = ["mcp", *(arg for path in (root, *more)
                     for arg in ("--root", path if channel_url(path) else os.path.abspath(path)))]
    if os.path.basename(script) == "dsh-fs" and os.path.isfile(script):
        return os.path.abspath(script), tail
    return os.path.abspath(sys.executable), ["-m", "dsh_fs.cli.main", *tail]


@click.command(name="client-config", cls=OnceCommand)
@root_option
@click.argument("mcp_args", nargs=-1, type=click.UNPROCESSED, metavar="[-- MCP_OPTIONS...]")
def client_config(roots: tuple[str, ...], mcp_args: tuple[str, ...]) -> None:
    """Print an MCP client configuration (the mcpServers JSON of Claude Desktop, Claude Code's
    .mcp.json, Cursor) that serves --root over stdio with this dsh-fs, absolute paths filled in.

    Options of `dsh-fs mcp` after `--` go into the served command as given (checked as `dsh-fs mcp`
    checks them): `dsh-fs client-config --root DIR -- --images --session agent`."""
    command, args = server_command(*(roots or (os.getcwd(),)))
    if mcp_args:
        _check_mcp_options(args[args.index("mcp") + 1:], list(mcp_args))
    args += mcp_args
    click.echo(json.dumps({"mcpServers": {"dsh-fs": {"command": command, "args": args}}}, indent=2))


def _check_mcp_options(served: list[str], more: list[str]) -> None:
    """Parse ``served + more`` as ``dsh-fs mcp`` would (nothing runs).

    :raises click.UsageError: an option ``dsh-fs mcp`` does not take, a bad value, a
        positional argument or ``--help``
    """
    from .mcp_cmd import mcp

    if any(arg in ("--help", "-h") for arg in more):
        raise click.UsageError("--help after -- is not an option of the served command")
    try:
        mcp.make_context("dsh-fs mcp", [*served, *more])
    except click.UsageError as exc:
        raise click.UsageError(f"after --: {exc.format_message()}") from None
