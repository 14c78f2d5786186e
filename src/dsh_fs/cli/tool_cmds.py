"""``dsh-fs read|write|edit|glob|grep|apply-patch|schema|prompt``: the tools for people and
shell-only agents.

Each tool command makes exactly one registry call and prints exactly what the model would
see: the result text, byte for byte (UTF-8), then one newline, on stdout, for successes and
failures alike. Exit status:

* ``0`` the call succeeded;
* ``1`` the call failed: stdout holds the ``Error: …`` text the model would see;
* ``2`` the command itself is wrong or cannot run (bad option, bad setting, no content for
  ``write``, no patch for ``apply-patch``, unusable session store); the message goes to stderr
  and no call is made.

Command-line values become tool arguments unchanged (``--offset``/``--limit`` as JSON numbers,
read as the reference reads them; text as UTF-8, or the command fails naming the first bad
byte: ``inputs``), so they pass the tools' own validation and produce the spec's texts
(``--offset 0`` → ``Error: offset must be a positive integer``). Observations last for one
command unless ``--session NAME`` keeps them in the persistent store (``dsh_fs.session_store``). A capped
``glob``/``grep`` result is saved under ``<state dir>/spill`` (kept 7 days), so a later
``dsh-fs read <locator>`` pages it. Tool logic lives in the tools, never here.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import click

from ..adapters.definitions import FORMATS, tool_definitions
from ..fs.media import extension_of
from .inputs import JsonNumber, utf8_bytes, utf8_text
from .options import (
    CliFailure,
    OnceCommand,
    channel_url,
    cwd_option,
    faces_named,
    list_named,
    no_policy_option,
    offset_option,
    path_rules_named,
    path_rules_options,
    pop_settings,
    profile_option,
    require_s3_credentials,
    s3_options,
    search_path_option,
    select_tools_option,
    sandbox_option,
    session_option,
    settings_options,
    tools_option,
)

__all__ = ("apply_patch", "edit", "glob", "grep", "list_", "prompt", "read", "schema", "write")

F = TypeVar("F", bound=Callable[..., Any])

EXIT_TOOL_ERROR = 1

_EPILOG = (
    "Prints exactly the text the model would see, then a newline. "
    "Exit status: 0 success; 1 the call failed (its 'Error: ...' text is on stdout, as the model would see it); "
    "2 bad usage or an unusable session store (message on stderr, nothing done)."
)


def _deployment_options(func: F) -> F:
    """``--profile`` and the tools' settings (every command that builds a deployment)."""
    return profile_option(settings_options(func))


def _call_options(func: F) -> F:
    """``--cwd``, ``--s3``/``--endpoint-url``, ``--no-policy``, ``--session``, ``--sandbox`` and
    the path rules (the tool commands)."""
    return cwd_option(s3_options(no_policy_option(session_option(sandbox_option(path_rules_options(func))))))


@dataclass(frozen=True, slots=True, kw_only=True)
class _Options:
    profile: str
    caps: dict[str, int]
    cwd: str | None = None
    policy: bool = True
    session_name: str | None = None
    s3: tuple[str, ...] = ()
    """every ``--s3`` URL (several: D28); empty: the local disk"""
    history_s3: str | None = None
    """``--history-s3``: keep the session's history in this bucket prefix (docs/HISTORY.md)"""
    endpoint_url: str | None = None
    sandbox: str | None = None
    rules: dict[str, Any] = field(default_factory=dict)
    """``create_context``'s path-rule arguments (``options.path_rules_named``)"""


def _options(kwargs: dict[str, Any]) -> _Options:
    return _Options(
        profile=kwargs.pop("profile"),
        caps=pop_settings(kwargs),
        cwd=kwargs.pop("cwd", None),
        policy=not kwargs.pop("no_policy", False),
        session_name=kwargs.pop("session_name", None),
        s3=tuple(kwargs.pop("s3", None) or ()),
        history_s3=kwargs.pop("history_s3", None),
        endpoint_url=kwargs.pop("endpoint_url", None),
        sandbox=kwargs.pop("sandbox", None),
        rules=path_rules_named(kwargs),
    )


def _context(options: _Options, *, store: Any = None, faces: tuple[str, ...] = (), list_tool: bool | None = None,
             pdfs: bool = False) -> Any:
    """The default deployment (as ``dsh_fs.create_context``), with ``store`` as the policy's store
    and capped search results saved under ``<state dir>/spill``, plus the editing ``faces`` (and
    ``read_pdf`` with ``pdfs``). With ``--session NAME``, every change is recorded in the
    session's durable history (``history.sqlite_store``, docs/HISTORY.md).

    :raises CliFailure: for an invalid read cap or an unknown face
    """
    from .. import create_context
    from ..providers import open_provider
    from ..session_store import state_dir

    history: Any = False
    if options.session_name is not None:
        from .history_cmd import open_history_store

        history = open_history_store(options.history_s3, options.endpoint_url)
    elif options.history_s3 is not None:
        raise CliFailure("--history-s3 keeps the history of --session NAME: give --session NAME too")
    try:
        if options.s3:  # checked by its option type (S3_URL)
            provider = open_provider(options.s3[0], profile=options.profile, endpoint_url=options.endpoint_url,
                                     roots=options.s3 if len(options.s3) > 1 else None)
        elif channel_url(options.cwd):  # a far side's directory (docs/CHANNELS.md): no containment either
            provider = open_provider(options.cwd, profile=options.profile, root=None)  # type: ignore[arg-type]
        else:  # a person's command line (or a shell-only agent, which has the shell anyway): no
            # containment root, as in the reference (S3: the bucket prefix is the root)
            provider = open_provider(options.cwd or os.getcwd(), profile=options.profile, root=None)
        return create_context(
            profile=options.profile, policy=options.policy, provider=provider, observations=store,
            spill_root=os.path.join(state_dir(), "spill"), faces=faces, list_tool=list_tool,
            sandbox=options.sandbox, pdfs=pdfs, history=history, **options.rules, **options.caps,
        )
    except ValueError as exc:
        raise CliFailure(str(exc)) from None


def _open_store(name: str, owner: object) -> Any:
    from ..session_store import SessionStoreError, open_session_store

    try:
        return open_session_store(name, owner=owner)
    except SessionStoreError as exc:
        raise CliFailure(str(exc)) from None


def _emit(text: str) -> None:
    """Write ``text`` and one newline to stdout as UTF-8, whatever the locale."""
    try:
        data = text.encode("utf-8", "surrogateescape")  # a path given as raw bytes prints as those bytes
    except UnicodeEncodeError:
        data = text.encode("utf-8", "backslashreplace")
    out = sys.stdout.buffer
    out.write(data + b"\n")
    out.flush()


def _run_tool(name: str, arguments: dict[str, Any], options: _Options, *, faces: tuple[str, ...] = (),
              refuse_existing: str | None = None) -> None:
    """Make the one call (with the editing ``faces`` loaded, and ``list`` or ``read_pdf`` when it
    is the tool called, in either profile), print its text, exit 1 on an error result.

    :param refuse_existing: when ``arguments["file_path"]`` names something that exists, fail
        the command (exit 2) with this message instead of calling the tool
    :raises CliFailure: see ``refuse_existing``
    """
    from ..core.session import Session

    session = Session(cwd=None if options.s3 or channel_url(options.cwd) else options.cwd, id=options.session_name)
    store = None
    if options.policy and options.session_name is not None:
        store = _open_store(options.session_name, session)
    try:
        ctx = _context(options, store=store, faces=faces, list_tool=True if name == "list" else None,
                       pdfs=name == "read_pdf")

        async def call() -> Any:
            async with ctx:  # closes the provider (the S3 provider holds an HTTP client)
                if options.s3 or options.history_s3 is not None:
                    await require_s3_credentials("--s3" if options.s3 else "--history-s3")
                if refuse_existing is not None and await ctx.fs.lstat(arguments["file_path"],
                                                                     cwd=session.cwd) is not None:
                    raise CliFailure(refuse_existing)
                return await ctx.tools.execute(name, arguments, session=session)

        result = anyio.run(call)
    finally:
        if store is not None:
            store.close()
    _emit(result.text)
    if store is not None:
        for exc in store.errors:
            click.echo(
                f"dsh-fs: warning: session {options.session_name!r} could not save an observation ({exc}); "
                "read the file again before changing it",
                err=True,
            )
    if result.is_error:
        if store is None and options.policy and result.error is not None and result.error.code == "FS_NOT_OBSERVED":
            # the model-facing remedy ("read the file, then retry") cannot work across commands
            # without a session: say how, on stderr (stdout stays exactly what the model sees)
            click.echo("dsh-fs: hint: a read in another command counts only with --session NAME "
                       "(or use --no-policy)", err=True)
        sys.exit(EXIT_TOOL_ERROR)


def _text(source: str, value: str) -> str:
    """``inputs.utf8_text``, failing the command (exit 2) when the argument is not UTF-8."""
    try:
        return utf8_text(source, value)
    except ValueError as exc:
        raise CliFailure(str(exc)) from None


def _stdin_is_null() -> bool:
    """stdin is the null device (``< /dev/null``): an empty content, given on purpose."""
    try:
        mode_rdev = os.fstat(sys.stdin.fileno()) if sys.stdin is not None else None
        null = os.stat(os.devnull)
    except (OSError, ValueError):
        return False
    return mode_rdev is not None and stat.S_ISCHR(mode_rdev.st_mode) and mode_rdev.st_rdev == null.st_rdev


def _stdin_content(missing: str = "no content: pass --content TEXT or pipe the content on stdin") -> str:
    """The content piped on stdin (a pipe, file or socket), decoded as strict UTF-8.

    Bytes that are not UTF-8 fail the command with the first bad byte, its offset and line
    (as ``read`` reports a file, D6), before anything is written. A terminal, the null device
    or a closed stdin is refused (``write`` takes the null device as an empty new file itself).

    :param missing: the message when there is nothing piped
    :raises CliFailure: when stdin is not a pipe, a file or a socket, or not UTF-8
    """
    stream = sys.stdin
    try:
        mode = os.fstat(stream.fileno()).st_mode if stream is not None else None
    except (OSError, ValueError):
        mode = None
    if mode is None or not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode)):
        raise CliFailure(missing)
    try:
        return utf8_bytes("stdin", stream.buffer.read())
    except ValueError as exc:
        raise CliFailure(str(exc)) from None


@click.command(cls=OnceCommand, epilog=_EPILOG)
@click.argument("file")
@offset_option
@click.option("--limit", type=JsonNumber("the most lines to return", "100"), default=None, show_default="--read-limit", metavar="NUMBER",
              help="Maximum number of lines to return.")
@click.option("--pages", default=None, show_default="the first pages", metavar="RANGE",
              help="For a PDF FILE: the pages to read (1-5, 3, 10-20; at most 20). Needs pypdfium2 (dsh-fs[pdfs]).")
@_call_options
@_deployment_options
def read(file: str, offset: int | float | None, limit: int | float | None, pages: str | None, **kwargs: Any) -> None:
    """Read a UTF-8 text FILE and print its line-numbered content; a Jupyter notebook shows its
    cells, a PDF (with dsh-fs[pdfs]) its text by pages (read_pdf).

    A successful read lets the same --session overwrite or edit FILE while it is unchanged.
    """
    path = _text("FILE", file)
    if extension_of(path).lower() == ".pdf" and _has_pypdfium2():
        if offset is not None or limit is not None:
            raise click.UsageError("--offset and --limit count lines of a text file; give a PDF --pages")
        arguments: dict[str, Any] = {"file_path": path}
        if pages is not None:
            arguments["pages"] = _text("--pages", pages)
        _run_tool("read_pdf", arguments, _options(kwargs))
        return
    if pages is not None:
        raise click.UsageError("--pages applies to a PDF FILE (and needs pypdfium2: dsh-fs[pdfs])")
    arguments = {"file_path": path}
    if offset is not None:
        arguments["offset"] = offset
    if limit is not None:
        arguments["limit"] = limit
    _run_tool("read", arguments, _options(kwargs))


def _has_pypdfium2() -> bool:
    """Can ``read_pdf`` run here (pypdfium2 installed)?"""
    try:
        import pypdfium2  # noqa: F401
    except ImportError:
        return False
    return True


@click.command("list", cls=OnceCommand, epilog=_EPILOG)
@click.argument("path", required=False)
@offset_option
@_call_options
@_deployment_options
def list_(path: str | None, offset: int | float | None, **kwargs: Any) -> None:
    """Print the direct children of the directory PATH (default: the working directory),
    directories first, then files, each alphabetical; a long listing is paged (--offset)."""
    arguments: dict[str, Any] = {}
    if path is not None:
        arguments["path"] = _text("PATH", path)
    if offset is not None:
        arguments["offset"] = offset
    _run_tool("list", arguments, _options(kwargs))


@click.command(cls=OnceCommand, epilog=_EPILOG)
@click.argument("file")
@click.option("--content", default=None, show_default="stdin", metavar="TEXT", help="The full new content.")
@_call_options
@_deployment_options
def write(file: str, content: str | None, **kwargs: Any) -> None:
    """Create FILE or fully replace its content.

    The content is --content TEXT or, without it, everything piped on stdin (bytes as given;
    a terminal is refused). Stdin from /dev/null creates an empty FILE, but never empties an
    existing one: use --content '' for that. Replacing an existing file requires reading it
    first in the same --session (or --no-policy).
    """
    options = _options(kwargs)
    path = _text("FILE", file)
    if content is not None:
        _run_tool("write", {"file_path": path, "content": _text("--content", content)}, options)
    elif _stdin_is_null():  # an empty new file; an existing one is never emptied by a forgotten --content
        _run_tool("write", {"file_path": path, "content": ""}, options, refuse_existing=(
            f"stdin is /dev/null and {file} exists: pass --content '' to empty it, or pipe its new content"))
    else:
        _run_tool("write", {"file_path": path, "content": _stdin_content()}, options)


@click.command(cls=OnceCommand, epilog=_EPILOG)
@click.argument("file")
@click.option("--old", "old", required=True, metavar="TEXT", help="Literal text to replace; must match exactly.")
@click.option("--new", "new", required=True, metavar="TEXT", help="Literal replacement text ('' deletes the match).")
@click.option("--replace-all", is_flag=True, help="Replace every match (without it, --old must appear exactly once).")
@_call_options
@_deployment_options
def edit(file: str, old: str, new: str, replace_all: bool, **kwargs: Any) -> None:
    """Replace literal text in an existing UTF-8 text FILE.

    FILE must have been read (or written) before in the same --session, and be unchanged since;
    without --session use --no-policy.
    """
    arguments: dict[str, Any] = {"file_path": _text("FILE", file), "old_string": _text("--old", old),
                                 "new_string": _text("--new", new)}
    if replace_all:
        arguments["replace_all"] = True
    _run_tool("edit", arguments, _options(kwargs))


@click.command(cls=OnceCommand, epilog=_EPILOG)
@click.argument("pattern")
@search_path_option
@_call_options
@_deployment_options
def glob(pattern: str, path: str | None, **kwargs: Any) -> None:
    """List the files whose paths match the glob PATTERN (ripgrep globs: '*.py' matches at any
    depth, 'src/**/*.ts' from the working directory), by modification time, newest first
    (--profile reference: oldest first). A capped list names the file that holds all of it."""
    arguments: dict[str, Any] = {"pattern": _text("PATTERN", pattern)}
    if path is not None:
        arguments["path"] = _text("--path", path)
    _run_tool("glob", arguments, _options(kwargs))


@click.command(cls=OnceCommand, epilog=_EPILOG)
@click.argument("pattern")
@search_path_option
@click.option("--include", default=None, show_default="every file", metavar="GLOB",
              help="Search only files matching this one glob, e.g. '*.{ts,tsx}'.")
@_call_options
@_deployment_options
def grep(pattern: str, path: str | None, include: str | None, **kwargs: Any) -> None:
    """Print the lines matching the ripgrep regular expression PATTERN, grouped by file, with
    line numbers (ignored and hidden files are skipped, as ripgrep does). A capped result names
    the file that holds all of it."""
    arguments: dict[str, Any] = {"pattern": _text("PATTERN", pattern)}
    if path is not None:
        arguments["path"] = _text("--path", path)
    if include is not None:
        arguments["include"] = _text("--include", include)
    _run_tool("grep", arguments, _options(kwargs))


@click.command("apply-patch", cls=OnceCommand, epilog=_EPILOG)
@click.argument("patch_file", metavar="[FILE|-]", required=False, default="-")
@_call_options
@_deployment_options
def apply_patch(patch_file: str, **kwargs: Any) -> None:
    """Apply a Codex-format patch ('*** Begin Patch' ... '*** End Patch') from FILE or stdin.

    The whole patch is checked first — every file it updates, moves or deletes read in the same
    --session and unchanged since (or --no-policy), every hunk found at exactly one place, every
    file it adds or moves to absent — and nothing is written unless all of it applies; then each
    file is written atomically. Prints what the model would see: the updated files, or why
    nothing was written.
    """
    options = _options(kwargs)
    if patch_file == "-":
        text = _stdin_content("no patch: give a FILE or pipe the patch on stdin")
    else:
        try:
            with open(patch_file, "rb") as handle:
                text = handle.read().decode("utf-8", "surrogateescape")
        except OSError as exc:
            raise CliFailure(f"cannot read the patch {patch_file}: {exc.strerror or exc}") from None
    _run_tool("apply_patch", {"input": text}, options, faces=("apply_patch",))


@click.command(cls=OnceCommand)
@click.option(
    "--format",
    "format_",
    type=click.Choice(list(FORMATS)),
    default="mcp",
    show_default=True,
    help=(
        "mcp: MCP tool list [{name, description, inputSchema}]; openai: Chat Completions tools "
        '[{"type": "function", "function": {...}}]; openai-responses: Responses API function tools; '
        "anthropic: [{name, description, input_schema}]; native: [{name, description, parameters}]. "
        "openai-responses and anthropic give the editing faces as the vendor's built-in tool "
        '({"type": "apply_patch"}, {"type": "text_editor_20250728", ...}).'
    ),
)
@tools_option
@_deployment_options
def schema(format_: str, tool_names: tuple[str, ...] | None, **kwargs: Any) -> None:
    """Print the tool definitions as JSON.

    The tools are ordered by name (edit, glob, grep, list, read, write; no list under --profile reference
    unless --tools names it); --read-limit,
    --glob-max-results and --grep-max-matches change the descriptions, as they do for the model.
    """
    ctx = _context(_options(kwargs), faces=faces_named(tool_names), list_tool=list_named(tool_names))
    select_tools_option(ctx, tool_names)
    _emit(json.dumps(tool_definitions(ctx, format_), indent=2, ensure_ascii=False))


@click.command(cls=OnceCommand)
@no_policy_option
@tools_option
@path_rules_options
@_deployment_options
def prompt(tool_names: tuple[str, ...] | None, **kwargs: Any) -> None:
    """Print the system prompt that goes with the tools.

    --no-policy, --tools, the path rules and the settings change it as they change what the
    model is told (dsh-fs mcp sends the tools' sections of it as its instructions).
    """
    ctx = _context(_options(kwargs), faces=faces_named(tool_names), list_tool=list_named(tool_names))
    select_tools_option(ctx, tool_names)
    _emit(ctx.system_prompt.render())
