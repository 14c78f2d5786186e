"""``dsh-fs mcp``: serve the file tools to an MCP client (stdio, or HTTP on loopback or a
private Unix socket, with bearer tokens); ``--tools`` picks a subset.

The MCP SDK is imported only when the command runs.
"""

from __future__ import annotations

import functools
import getpass
import os
import sys
from typing import Any

import anyio
import click
from click.core import ParameterSource

from .options import (
    CliFailure,
    OnceCommand,
    channel_url,
    faces_named,
    encoding_option,
    images_option,
    list_named,
    pdfs_option,
    no_policy_option,
    pop_settings,
    profile_option,
    require_s3_credentials,
    path_rules_named,
    path_rules_options,
    read_only_option,
    root_option,
    sandbox_named,
    sandbox_option,
    s3_options,
    select_tools_option,
    session_option,
    settings_options,
    tools_option,
)

__all__ = ("mcp",)

_AUTH_OPTIONS = ("token_file", "tokens", "no_auth")


@click.command(cls=OnceCommand)
@root_option
@profile_option
@no_policy_option
@settings_options
@click.option(
    "--http",
    "listen",
    metavar="HOST:PORT",
    default=None,
    show_default="stdio",
    help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (loopback HOST only; PORT 0 picks one).",
)
@click.option(
    "--unix-socket",
    metavar="PATH",
    default=None,
    show_default="stdio",
    help="Serve streamable HTTP (http://localhost/mcp) on a Unix socket instead of stdio; its directory"
    " must be private to you (created 0700 if absent).",
)
@click.option(
    "--token-file",
    metavar="PATH",
    default=None,
    envvar="DSH_FS_TOKEN_FILE",
    show_envvar=True,
    show_default="new tokens, shown once on stderr",
    help="HTTP: the bearer tokens, one per line (one per agent). Read if it exists (it must be yours and"
    " mode 0600); otherwise --tokens new tokens are written to it (0600).",
)
@click.option(
    "--tokens",
    type=click.IntRange(min=1, max=1000),
    default=1,
    show_default=True,
    metavar="N",
    help="HTTP: how many tokens to mint, one per agent (agent-1 ... agent-N); each agent's stateless"
    " (2026-07-28) requests share one observation owner.",
)
@click.option(
    "--ignore-client-roots",
    is_flag=True,
    help="Serve every --root to every client, whatever roots the client declares (by default a"
    " client's declared roots narrow what it reaches to their intersection with the --roots).",
)
@click.option(
    "--no-auth",
    is_flag=True,
    help="HTTP: accept requests without a token. Anyone who can connect can then read and write your"
    " files; stateless (2026-07-28) clients are refused.",
)
@s3_options
@tools_option
@images_option
@pdfs_option
@encoding_option
@session_option
@sandbox_option
@read_only_option
@path_rules_options
def mcp(
    roots: tuple[str, ...],
    profile: str,
    no_policy: bool,
    listen: str | None,
    unix_socket: str | None,
    token_file: str | None,
    tokens: int,
    no_auth: bool,
    ignore_client_roots: bool,
    s3: tuple[str, ...],
    history_s3: str | None,
    endpoint_url: str | None,
    tool_names: tuple[str, ...] | None = None,
    images: bool = False,
    pdfs: bool = False,
    encodings: tuple[str, ...] = (),
    session_name: str | None = None,
    sandbox: str | None = None,
    read_only: bool = False,
    deny: tuple[str, ...] = (),
    read_only_paths: tuple[str, ...] = (),
    rules_files: tuple[str, ...] = (),
    show_rules: bool = False,
    **settings: int,
) -> None:
    """Serve the file tools (list, read, write, edit, glob, grep; no list under --profile
    reference unless --tools names it) over MCP.

    stdio by default: one client per process, one observation owner (with --session NAME,
    the owner is the named session: shared with other processes serving NAME, e.g. an MCP
    client that starts one server per tool call, and with the tool commands). With --http or
    --unix-socket, every request needs "Authorization: Bearer TOKEN" (see --token-file and
    --tokens); each MCP session is its own observation owner, and a stateless (2026-07-28)
    client's is its token. The endpoint URL is printed on stderr once the server accepts
    connections. Calls one client sends together run as one assistant message's would:
    reads in parallel, a write or edit after everything sent before it.
    """
    from ..mcp.options import ServeOptions, build_context  # no SDK import until serving (M2)

    click_ctx = click.get_current_context()
    host = port = None
    if listen is not None and unix_socket is not None:
        raise click.UsageError("--http and --unix-socket exclude each other")
    if listen is not None:
        from ..mcp.http import parse_listen

        try:
            host, port = parse_listen(listen)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--http") from None
    if unix_socket is not None:
        _check_socket_place(unix_socket)
    served_over_http = listen is not None or unix_socket is not None
    given = {name for name in _AUTH_OPTIONS if click_ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE}
    if given and not served_over_http:
        raise click.UsageError(f"--{sorted(given)[0].replace('_', '-')} applies only with --http or --unix-socket")
    if no_auth and given - {"no_auth"}:
        raise click.UsageError("--no-auth excludes --token-file and --tokens")
    if session_name is not None and served_over_http:
        over_http = "over HTTP each MCP session (a stateless client: its token) is its own observation owner"
        if click_ctx.get_parameter_source("session_name") is ParameterSource.ENVIRONMENT:
            # exported for the tool commands: not a reason to refuse to serve
            click.echo(f"dsh-fs mcp: $DSH_FS_SESSION is ignored: it applies only to stdio; {over_http}", err=True)
            session_name = None
        else:
            raise click.UsageError(f"--session applies only to stdio: {over_http}")
    sandbox = sandbox_named(sandbox, read_only)
    rules = path_rules_named({"deny": deny, "read_only_paths": read_only_paths, "rules_files": rules_files,
                              "show_rules": show_rules})
    if roots and s3:
        raise click.UsageError("--root is not used with --s3 (repeat --s3 to serve several bucket prefixes)")
    channel, roots = _channel_roots(roots)
    if not roots and not s3:
        _warn_if_broad(os.getcwd())
    try:
        options = ServeOptions(
            root=roots[0] if roots else os.getcwd(),
            roots=roots,
            channel=channel,
            faces=faces_named(tool_names),
            list_tool=list_named(tool_names),
            images=images,
            pdfs=pdfs,
            encodings=encodings,
            profile=profile,
            policy=not no_policy,
            tool_config=pop_settings(settings),
            s3=s3[0] if s3 else None,
            s3_roots=tuple(s3),
            endpoint_url=endpoint_url,
            sandbox=sandbox,
            **rules,
        )
    except ValueError as exc:  # several --s3 named alike (fs_s3.roots.display_roots)
        raise click.UsageError(str(exc)) from None
    owner, store = _named_owner(session_name, options)
    try:
        ctx = build_context(options, observations=store,
                            history=_history_store(session_name, served_over_http, history_s3, endpoint_url))
    except (ImportError, ValueError) as exc:  # a bad setting; ImportError: --images without Pillow, --pdfs without pypdfium2
        if store is not None:
            store.close()
        raise click.UsageError(str(exc)) from None
    if images and tool_names is not None and "read_image" not in tool_names:
        tool_names = (*tool_names, "read_image")  # --images asks for it, whatever else --tools names
    if pdfs and tool_names is not None and "read_pdf" not in tool_names:
        tool_names = (*tool_names, "read_pdf")  # --pdfs likewise
    select_tools_option(ctx, tool_names)
    if options.policy:
        _warn_if_nothing_observes(ctx.tools.names())
    bearer = None  # minted only once every other option is known to be good
    shown: list[str] = []  # the minted tokens' lines, shown with the address once it is bound
    if served_over_http and not no_auth:
        bearer, shown = _tokens(token_file, tokens, explicit_count="tokens" in given)

    def announce(url: str) -> None:
        where = f"{url} on the Unix socket {os.path.abspath(unix_socket)}" if unix_socket is not None else url
        lines = [*shown, f"dsh-fs mcp: serving {_served(options)} at {where}"]
        if no_auth:
            reach = "the socket" if unix_socket is not None else url
            lines.append(
                f"dsh-fs mcp: WARNING: --no-auth: no authentication. Any process that can connect to {reach}"
                f" can read and write every file under {_served(options)} as {_user()}."
            )
        click.echo("\n".join(lines), err=True)  # one write: whoever sees the address sees the warning

    if not served_over_http:
        from ..mcp.stdio import serve_stdio  # no SDK import: it loads in the background (M2)

        try:
            serve_stdio(ctx, root=options.root, owner=owner,
                        before=functools.partial(require_s3_credentials, "--s3" if s3 else "--history-s3")
                        if s3 or history_s3 is not None else None,
                        close_context=True, client_roots=not ignore_client_roots)
        except KeyboardInterrupt:
            sys.exit(130)
        finally:
            _close_store(store, session_name)
        return

    async def serve() -> None:
        async with ctx:  # closes the provider (the S3 provider holds an HTTP client)
            if s3 or history_s3 is not None:
                await require_s3_credentials("--s3" if s3 else "--history-s3")
            from ..mcp.http import serve_http

            try:
                await serve_http(
                    ctx, root=options.root, tokens=bearer, host=host or "127.0.0.1", port=port or 0,
                    unix_socket=unix_socket, announce=announce,
                    token_file=os.path.abspath(token_file) if token_file is not None and bearer is not None else None,
                    report=lambda line: click.echo(line, err=True),
                    client_roots=not ignore_client_roots,
                )
            except (OSError, ValueError) as exc:  # binding (the served requests never raise)
                raise CliFailure(f"cannot listen: {exc}") from None

    try:
        anyio.run(serve)
    except KeyboardInterrupt:
        sys.exit(130)
    finally:
        _close_store(store, session_name)


def _close_store(store: Any, session_name: str | None) -> None:
    """Close the ``--session`` store (when there is one), saying on stderr what it could not save."""
    if store is None:
        return
    store.close()
    if store.errors:
        click.echo(
            f"dsh-fs mcp: warning: session {session_name!r} could not save {len(store.errors)} observation(s)"
            f" ({store.errors[-1]}); read those files again before changing them",
            err=True,
        )


def _served(options: Any) -> str:
    """What the server serves, for its announcement: the roots (of the far side, when it is one)."""
    roots = ", ".join(options.roots) or options.root
    return f"{roots} on {options.channel.split('://', 1)[0]}://{options.channel.split('://', 1)[1].split('/', 1)[0]}" \
        if options.channel is not None else roots


def _channel_roots(roots: tuple[str, ...]) -> tuple[str | None, tuple[str, ...]]:
    """``--root`` URLs of a command channel (docs/CHANNELS.md): the first URL and every root as
    a far-side path; local directories: ``(None, roots)``.

    :raises click.UsageError: URLs mixed with local directories, or of two far sides
    """
    from ..fs_channel.channels import channel_for_url

    urls = [root for root in roots if channel_url(root)]
    if not urls:
        return None, roots
    if len(urls) != len(roots):
        raise click.UsageError("--root: serve local directories or a far side's, not both")
    named = [channel_for_url(*url.split("://", 1)) for url in urls]
    if len({n.channel.identity for n in named}) > 1:
        raise click.UsageError("--root: every far-side root must be on one far side")
    return urls[0], tuple(n.root for n in named)


def _history_store(session_name: str | None, served_over_http: bool, history_s3: str | None,
                   endpoint_url: str | None) -> Any:
    """Where the server keeps the history of changes (docs/HISTORY.md): for ``--session NAME``
    and HTTP owners, the durable store (``history_cmd.open_history_store``: the state
    directory's, or ``--history-s3``'s bucket; opened at the first change); otherwise in memory.

    :raises click.UsageError: ``--history-s3`` with neither ``--session`` nor HTTP (no owner's
        history outlives the process then)
    """
    if session_name is None and not served_over_http:
        if history_s3 is not None:
            raise click.UsageError("--history-s3 keeps the history of --session NAME or of HTTP tokens:"
                                   " give --session NAME, or serve over HTTP")
        return True
    from .history_cmd import open_history_store

    return open_history_store(history_s3, endpoint_url)


def _named_owner(session_name: str | None, options: Any) -> tuple[Any, Any]:
    """The stdio connection's observation owner and its persistent store for ``--session
    NAME`` (DEVIATIONS M1); ``(None, None)`` without a name or without the policy (the
    owner is then the process's own ``Session``).

    :raises CliFailure: (exit 2) when the session store cannot be opened
    """
    if session_name is None or not options.policy:
        return None, None
    from ..core.session import Session
    from ..session_store import SessionStoreError, open_session_store

    owner = Session(options.root, id=session_name)
    try:
        store = open_session_store(session_name, owner=owner, max_per_owner=options.observations_per_owner)
    except SessionStoreError as exc:
        raise CliFailure(str(exc)) from None
    return owner, store


def _check_socket_place(path: str) -> None:
    """Refuse, before any token is minted, a ``--unix-socket`` path whose directory cannot be
    the private directory ``serve_http`` binds in (created ``0700`` if absent).

    :raises click.BadParameter: an empty path, or a directory that is missing its parent, is
        not a directory, or is not private (the message says how to fix it)
    """
    from ..mcp.http import check_private_dir

    if not path:
        raise click.BadParameter("the path is empty", param_hint="--unix-socket")
    try:
        check_private_dir(os.path.dirname(os.path.abspath(path)))
    except (OSError, ValueError) as exc:
        raise click.BadParameter(str(exc), param_hint="--unix-socket") from None


_OBSERVING = ("read", "read_image", "read_pdf", "str_replace_based_edit_tool", "str_replace_editor")
"""tools whose reads record observations (the text editors' ``view``, ``read_image``, ``read_pdf``)"""
_MUTATING = ("write", "edit", "apply_patch", "notebook_edit")


def _warn_if_nothing_observes(served: list[str]) -> None:
    """Under the observation policy a changed file must have been read: serving ``write``,
    ``edit``, ``apply_patch`` or ``notebook_edit`` without a tool that reads (``--tools edit``) leaves no existing
    file changeable (``write`` and ``apply_patch`` may still create files). Say so once on stderr (the server still starts: a create-only
    server may be what is wanted)."""
    mutating = [name for name in _MUTATING if name in served]
    if mutating and not any(name in served for name in _OBSERVING):
        click.echo(
            f"dsh-fs mcp: warning: {', '.join(mutating)} served without read: under the observation policy"
            " no existing file can be changed (add read to --tools, or use --no-policy)",
            err=True,
        )


def _warn_if_broad(cwd: str) -> None:
    """Without ``--root`` the served directory is the current one; GUI clients often start
    servers from ``/`` or the home directory, which would serve the whole disk or home. Say
    so once on stderr, naming ``--root`` (the server still starts: it may be what is wanted)."""
    here = os.path.realpath(cwd)
    home = os.path.expanduser("~")
    what = None
    if here == "/":
        what = "the whole disk"
    elif home != "~" and here == os.path.realpath(home):
        what = "your whole home directory"
    if what is not None:
        click.echo(
            f"dsh-fs mcp: warning: no --root given, so the current directory {here} is served: {what} is readable"
            " and writable by the client; give --root DIR to serve one project",
            err=True,
        )


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no name for this uid
        return f"uid {os.geteuid()}"


def _tokens(token_file: str | None, count: int, *, explicit_count: bool) -> tuple[list[str], list[str]]:
    """The bearer tokens: read from ``token_file`` when it exists; otherwise ``count`` new
    ones, written to ``token_file`` (0600) or to be shown once on stderr.

    :returns: the tokens, and the stderr lines that show new tokens not written to a file
        (shown with the address once the server listens: a server that cannot listen shows
        no token that never worked)

    :raises click.BadParameter: an unusable token file, or --tokens with an existing one
    """
    from ..mcp import load_token_file, mint_tokens, write_token_file

    if token_file is not None and os.path.lexists(token_file):
        if explicit_count:
            raise click.BadParameter(
                f"{token_file} already holds the tokens; --tokens only mints new ones (remove the file first)",
                param_hint="--tokens",
            )
        try:
            return load_token_file(token_file), []
        except (OSError, ValueError) as exc:
            raise click.BadParameter(str(exc), param_hint="--token-file") from None
    minted = mint_tokens(count)
    if token_file is not None:
        try:
            write_token_file(token_file, minted)
        except OSError as exc:
            raise click.BadParameter(f"cannot write {token_file}: {exc.strerror or exc}", param_hint="--token-file") from None
        click.echo(f"dsh-fs mcp: wrote {count} bearer token(s) to {token_file} (mode 0600)", err=True)
        return minted, []
    shown = ['dsh-fs mcp: bearer token(s), shown once (clients send "Authorization: Bearer <token>"):']
    shown += [f"  agent-{index}: {token}" for index, token in enumerate(minted, start=1)]
    return minted, shown
