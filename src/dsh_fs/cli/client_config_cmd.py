"""``dsh-fs client-config``: the MCP client configuration that serves a directory with this
very installation, absolute paths filled in (a GUI client starts servers from anywhere, with
a PATH and an environment of its own).

Every configuration it writes starts as printed (``tests/e2e/cli/test_client_config_starts.py``
starts each with the SDK's client and the MCP Inspector's):

* stdio (the default): ``{"command", "args"}`` running ``dsh-fs mcp --root DIR …``;
* with ``-- --s3 s3://bucket/prefix``: no ``--root`` (``dsh-fs mcp`` refuses the pair), and an
  ``env`` block with the ``AWS_*`` variables of this shell (a GUI client passes the server
  little of the user's environment: no credentials);
* with ``-- --http HOST:PORT``: the HTTP form ``{"type": "http", "url", "headers"}`` of Claude
  Code's ``.mcp.json``, for a server the user starts (the command is printed on stderr), with
  a bearer token of ``--token-file`` (written there first when the file does not exist), or no
  headers with ``--no-auth``. ``--unix-socket``, a port ``0`` and ``--http`` without a token
  file are refused: no client configuration could reach such a server.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from typing import Any

import click

from .options import OnceCommand, channel_url, root_option

__all__ = ("AWS_VARIABLES", "client_config", "server_command")

AWS_VARIABLES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CA_BUNDLE",
)
"""the variables of the standard AWS credential chain (and region) copied into an S3 server's
``env`` block when this shell has them"""


def server_command(*roots: str) -> tuple[str, list[str]]:
    """``(command, args)`` that start ``dsh-fs mcp [--root ROOT …]`` with this installation: the
    ``dsh-fs`` script being run (by its absolute path), else this interpreter with ``-m``.

    :param roots: the served directories (made absolute; a far side's URL as given,
        docs/CHANNELS.md), each given as one ``--root`` (several: DEVIATIONS D28); none for a
        server of ``--s3`` prefixes
    """
    script = sys.argv[0] if sys.argv else ""
    tail = ["mcp", *(arg for path in roots
                     for arg in ("--root", path if channel_url(path) else os.path.abspath(path)))]
    if os.path.basename(script) == "dsh-fs" and os.path.isfile(script):
        return os.path.abspath(script), tail
    return os.path.abspath(sys.executable), ["-m", "dsh_fs.cli.main", *tail]


@click.command(name="client-config", cls=OnceCommand)
@root_option
@click.argument("mcp_args", nargs=-1, type=click.UNPROCESSED, metavar="[-- MCP_OPTIONS...]")
def client_config(roots: tuple[str, ...], mcp_args: tuple[str, ...]) -> None:
    """Print an MCP client configuration (the mcpServers JSON of Claude Desktop, Claude Code's
    .mcp.json, Cursor) that serves --root with this dsh-fs, absolute paths filled in.

    Options of `dsh-fs mcp` after `--` go into the served command as given (checked as `dsh-fs mcp`
    checks them): `dsh-fs client-config --root DIR -- --images --session agent`. With `-- --s3 URL`
    the configuration serves the bucket prefix and carries this shell's AWS_* variables in an env
    block; with `-- --http HOST:PORT --token-file FILE` it is the HTTP form (url and bearer token)
    for a server you start yourself (the command is printed on stderr)."""
    more = list(mcp_args)
    given = _parsed(more) if more else {}
    if given.get("s3"):
        if roots:
            raise click.UsageError("--root is not used with --s3 (repeat --s3 after -- to serve several prefixes)")
        command, args = server_command()
    else:
        command, args = server_command(*(roots or (os.getcwd(),)))
    if more:
        _check_mcp_options(args[args.index("mcp") + 1:], more)
    args += more
    if given.get("listen") is not None or given.get("unix_socket") is not None:
        server: dict[str, Any] = _http_entry(given)
        click.echo(f"dsh-fs client-config: start the server first: {shlex.join([command, *args])}", err=True)
    else:
        server = {"command": command, "args": args}
        env = {name: os.environ[name] for name in AWS_VARIABLES if name in os.environ} if given.get("s3") else {}
        if env:
            server["env"] = env
            click.echo("dsh-fs client-config: the env block holds this shell's AWS credentials: keep the "
                       "configuration file private", err=True)
    click.echo(json.dumps({"mcpServers": {"dsh-fs": server}}, indent=2))


def _parsed(more: list[str]) -> dict[str, Any]:
    """The ``dsh-fs mcp`` parameters of ``more`` alone (nothing runs).

    :raises click.UsageError: as :func:`_check_mcp_options`
    """
    from .mcp_cmd import mcp

    if any(arg in ("--help", "-h") for arg in more):
        raise click.UsageError("--help after -- is not an option of the served command")
    try:
        return mcp.make_context("dsh-fs mcp", list(more)).params
    except click.UsageError as exc:
        raise click.UsageError(f"after --: {exc.format_message()}") from None


def _http_entry(given: dict[str, Any]) -> dict[str, Any]:
    """The HTTP configuration of a ``dsh-fs mcp --http`` server: ``{"type": "http", "url",
    "headers"}`` (no ``headers`` with ``--no-auth``).

    :raises click.UsageError: ``--unix-socket``, port ``0``, no ``--token-file`` (and no
        ``--no-auth``), an unusable token file
    """
    from ..mcp.http import MCP_PATH, parse_listen

    if given.get("unix_socket") is not None:
        raise click.UsageError("after --: --unix-socket cannot be written in a client configuration (MCP clients "
                               "connect over TCP): use --http HOST:PORT")
    try:
        host, port = parse_listen(given["listen"])
    except ValueError as exc:
        raise click.UsageError(f"after --: --http: {exc}") from None
    if port == 0:
        raise click.UsageError("after --: --http needs a fixed PORT in a client configuration (0 picks one only when "
                               "the server starts)")
    url = f"http://{'[' + host + ']' if ':' in host else host}:{port}{MCP_PATH}"
    if given.get("no_auth"):
        return {"type": "http", "url": url}
    token_file = given.get("token_file")
    if token_file is None:
        raise click.UsageError("after --: --http needs --token-file PATH (or --no-auth) in a client configuration: "
                               "the configuration carries a token the server reads from that file")
    return {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {_first_token(token_file, given)}"}}


def _first_token(path: str, given: dict[str, Any]) -> str:
    """The first token of ``path``; when the file does not exist, ``--tokens`` new ones are
    written to it first (0600), as ``dsh-fs mcp --token-file`` would."""
    from ..mcp import load_token_file, mint_tokens, write_token_file

    try:
        if not os.path.lexists(path):
            minted = mint_tokens(int(given.get("tokens") or 1))
            write_token_file(path, minted)
            click.echo(f"dsh-fs client-config: wrote {len(minted)} bearer token(s) to {path} (mode 0600)", err=True)
            return minted[0]
        return load_token_file(path)[0]
    except (OSError, ValueError) as exc:
        raise click.UsageError(f"after --: --token-file: {exc}") from None


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
