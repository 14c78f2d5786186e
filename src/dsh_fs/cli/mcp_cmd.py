"""``dsh-fs mcp``: serve the read/write/edit tools to an MCP client (stdio, or HTTP on loopback).

The MCP SDK is imported only when the command runs.
"""

from __future__ import annotations

import os
import sys

import anyio
import click

from .options import require_s3_credentials, s3_options

__all__ = ("mcp",)


@click.command()
@click.option(
    "--root",
    type=click.Path(exists=True, file_okay=False, resolve_path=True),
    default=None,
    help="Directory served: relative paths resolve against it and no path may leave it"
    " (default: the current directory).",
)
@click.option(
    "--profile",
    type=click.Choice(["default", "reference"]),
    default="default",
    show_default=True,
    help="default: dsh-fs behaviour; reference: byte-exact with the TypeScript reference.",
)
@click.option("--no-policy", is_flag=True, help="Serve without the observation policy (no read-before-write guard).")
@click.option("--read-limit", type=int, metavar="N", help="Default and maximum lines per read.")
@click.option("--read-max-line-length", type=int, metavar="N", help="Characters kept per line.")
@click.option("--read-max-bytes", type=int, metavar="N", help="UTF-8 byte cap on one read.")
@click.option(
    "--read-stream-min-size", type=int, metavar="N", help="Stream files of at least N bytes."
)
@click.option(
    "--http",
    "listen",
    metavar="HOST:PORT",
    default=None,
    help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (loopback HOST only; PORT 0 picks one).",
)
@s3_options(s3_help="Serve an S3-compatible bucket prefix instead of a directory (standard AWS credential chain).")
def mcp(
    root: str | None,
    profile: str,
    no_policy: bool,
    read_limit: int | None,
    read_max_line_length: int | None,
    read_max_bytes: int | None,
    read_stream_min_size: int | None,
    listen: str | None,
    s3: str | None,
    endpoint_url: str | None,
) -> None:
    """Serve read, write and edit over MCP.

    stdio by default: one client per process, one observation owner. With --http, each MCP
    session is its own observation owner; the endpoint URL is printed on stderr once the
    server accepts connections.
    """
    from ..mcp import ServeOptions, build_context, parse_listen, serve_http, serve_stdio

    host = port = None
    if listen is not None:
        try:
            host, port = parse_listen(listen)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--http") from None
    settings = {
        "read_limit": read_limit,
        "read_max_line_length": read_max_line_length,
        "read_max_bytes": read_max_bytes,
        "read_stream_min_size": read_stream_min_size,
    }
    options = ServeOptions(
        root=root or os.getcwd(),
        profile=profile,
        policy=not no_policy,
        tool_config={k: v for k, v in settings.items() if v is not None},
        s3=s3,
        endpoint_url=endpoint_url,
    )
    try:
        ctx = build_context(options)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None

    def announce(url: str) -> None:
        click.echo(f"dsh-fs mcp: serving {options.root} at {url}", err=True)

    async def serve() -> None:
        async with ctx:  # closes the provider (the S3 provider holds an HTTP client)
            if s3 is not None:
                await require_s3_credentials()
            if host is None:
                await serve_stdio(ctx, root=options.root)
            else:
                assert port is not None
                await serve_http(ctx, root=options.root, host=host, port=port, announce=announce)

    try:
        anyio.run(serve)
    except KeyboardInterrupt:
        sys.exit(130)
