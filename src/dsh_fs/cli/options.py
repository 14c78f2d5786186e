"""Options that several ``dsh-fs`` commands share: one definition each (the same name,
metavar, help, environment variable and default wherever it appears), checked once.

Every bad option value is a usage error — one ``Error: …`` line on stderr, exit status 2,
nothing done — on every command, through click's own facilities (``click.ParamType.fail``,
``click.UsageError``), never a traceback:

* ``--s3 s3://BUCKET/PREFIX`` (``S3_URL``): a well-formed URL (``fs_s3.location.parse_url``)
  and the ``[s3]`` extra installed;
* ``--endpoint-url URL`` (``ENDPOINT_URL``): an ``http``/``https`` URL with a host, and only
  together with S3 (``s3_options`` refuses it alone); ``--history-s3`` (where a session's history
  is kept, docs/HISTORY.md) comes with them;
* ``--session NAME``: not empty;
* :func:`require_s3_credentials`: no AWS credentials for ``--s3`` is a setup error too, not a
  tool result;
* ``OnceCommand``: an option that takes one value, given twice (click would keep the last).

Heavy modules (aiobotocore) are imported only when such an option is given.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

import click

from .inputs import JsonNumber

__all__ = (
    "CliFailure",
    "ENDPOINT_URL",
    "OnceCommand",
    "S3_URL",
    "SESSION_NAME",
    "SETTINGS_HELP",
    "TOOL_NAMES",
    "channel_url",
    "cwd_option",
    "endpoint_url_option",
    "faces_named",
    "history_options",
    "images_option",
    "list_named",
    "no_policy_option",
    "offset_option",
    "path_rules_named",
    "path_rules_options",
    "pop_settings",
    "profile_option",
    "read_only_option",
    "require_s3_credentials",
    "require_s3_extra",
    "root_option",
    "s3_options",
    "sandbox_named",
    "sandbox_option",
    "search_path_option",
    "select_tools_option",
    "session_option",
    "settings_options",
    "tools_option",
)

F = TypeVar("F", bound=Callable[..., Any])


class CliFailure(click.ClickException):
    """The command cannot run (exit status 2, message on stderr, nothing done)."""

    exit_code = 2


class OnceCommand(click.Command):
    """A command that refuses an option taking one value when it is given twice: click keeps
    the last one silently, so ``grep x --include '*.py' --include '*.txt'`` would search the
    ``.txt`` files only. Flags may repeat (they mean the same thing twice).

    :raises click.UsageError: ``--include is given more than once (it takes one value)``
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not ctx.resilient_parsing:
            try:
                _opts, _rest, order = self.make_parser(ctx).parse_args(args=list(args))
            except click.UsageError:
                order = []  # the real parse below reports it
            seen: set[str] = set()
            for param in order:
                if not isinstance(param, click.Option) or param.multiple or param.count or param.is_flag:
                    continue
                if param.name in seen:
                    raise click.UsageError(f"{param.opts[0]} is given more than once (it takes one value)", ctx)
                seen.add(param.name or "")
        return super().parse_args(ctx, args)


def require_s3_extra() -> None:
    """:raises click.UsageError: when the ``[s3]`` extra (aiobotocore) is not installed"""
    from ..fs_s3.store import require_client_library

    try:
        require_client_library()
    except ImportError as exc:
        raise click.UsageError(str(exc)) from None


class _S3Url(click.ParamType):
    name = "s3_url"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from ..fs_s3.location import parse_url

        try:
            parse_url(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        try:
            require_s3_extra()
        except click.UsageError as exc:
            self.fail(exc.message, param, ctx)
        return str(value)


class _EndpointUrl(click.ParamType):
    name = "url"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            parts = urlsplit(str(value))
            _ = parts.port  # a port that is not a number, or out of range: ValueError
            ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        except ValueError:
            ok = False
        if not ok:
            self.fail(f"expected an http:// or https:// URL with a host, not {value!r}", param, ctx)
        return str(value)


class _SessionName(click.ParamType):
    name = "name"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        if value == "":
            self.fail("a session name must not be empty", param, ctx)
        return str(value)


class _ToolNames(click.ParamType):
    name = "names"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> tuple[str, ...]:
        if isinstance(value, tuple):
            return value
        return tuple(name.strip() for name in str(value).split(",") if name.strip())


class _DirOrChannel(click.ParamType):
    """A local directory (checked as ``click.Path(exists=True, file_okay=False)`` checks it), or
    a far side's directory over a command channel (``docker://``, ``podman://``, ``kubectl://``,
    ``ssh://``; docs/CHANNELS.md), kept as given once its URL is well formed."""

    name = "directory"

    def __init__(self, *, resolve_path: bool) -> None:
        self.local = click.Path(exists=True, file_okay=False, resolve_path=resolve_path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from ..fs_channel.channels import CHANNEL_SCHEMES, channel_for_url

        scheme, sep, location = str(value).partition("://")
        if sep and scheme in CHANNEL_SCHEMES:
            try:
                channel_for_url(scheme, location)
            except ValueError as exc:
                self.fail(str(exc), param, ctx)
            return str(value)
        return str(self.local.convert(value, param, ctx))


def channel_url(value: str | None) -> bool:
    """Is ``value`` (an option's value) a command channel's URL rather than a local directory?"""
    from ..fs_channel.channels import CHANNEL_SCHEMES

    scheme, sep, _ = (value or "").partition("://")
    return bool(sep) and scheme in CHANNEL_SCHEMES


S3_URL = _S3Url()
"""``--s3``: ``s3://bucket[/prefix]``, with the ``[s3]`` extra installed"""
ENDPOINT_URL = _EndpointUrl()
"""``--endpoint-url``: an http(s) URL with a host"""
SESSION_NAME = _SessionName()
"""``--session``: any non-empty name"""
TOOL_NAMES = _ToolNames()
"""``--tools``: comma-separated tool names (blanks dropped; checked against the registry by
:func:`select_tools_option`)"""


# -- the shared options: one definition each, used by every command that has it ------------
#
# A setting's help shows its default (``[default: …]``) and, where one exists, its environment
# variable (``[env var: …]``): DSH_FS_PROFILE, DSH_FS_SESSION (and mcp's DSH_FS_TOKEN_FILE).
# tests/e2e/cli/test_cli_options.py reads every command's --help and holds them to that.

profile_option = click.option(
    "--profile",
    type=click.Choice(["default", "reference"]),
    default="default",
    show_default=True,
    envvar="DSH_FS_PROFILE",
    show_envvar=True,
    help="'default': dsh-fs behaviour; 'reference': byte-exact with the TypeScript reference.",
)
"""``--profile``: the deployment's profile (``DSH_FS_PROFILE``)"""

no_policy_option = click.option(
    "--no-policy",
    "no_policy",
    is_flag=True,
    help="Leave out the observation policy: write and edit need no earlier read (they stay atomic and"
    " locked), and the tools' guidance does not ask for one.",
)
"""``--no-policy``: the bare deployment (the command receives ``no_policy``)"""

images_option = click.option(
    "--images",
    "images",
    is_flag=True,
    help="Also serve read_image, which returns an image file as image content (needs Pillow: dsh-fs[images])."
    " Only for a client whose model takes image input.",
)
"""``--images``: add ``read_image`` (docs/IMAGES.md; the command receives ``images``)"""

pdfs_option = click.option(
    "--pdfs",
    "pdfs",
    is_flag=True,
    help="Also serve read_pdf, which returns the text of a PDF file by page ranges (needs pypdfium2: dsh-fs[pdfs])."
    " With --images, pages without a text layer come as images.",
)
"""``--pdfs``: add ``read_pdf`` (docs/PDF.md; the command receives ``pdfs``)"""


def _encodings(_ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    from ..fs.legacy_text import check_encodings

    try:
        return check_encodings(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


encoding_option = click.option(
    "--encoding",
    "encodings",
    multiple=True,
    metavar="NAME",
    show_default="none: UTF-8 only",
    callback=_encodings,
    help="Also read, edit and write files in this legacy encoding (e.g. shift_jis, gb18030, cp1252), byte for byte"
    " outside what an edit replaces; repeat it for several (docs/ENCODINGS.md).",
)
"""``--encoding NAME`` (repeatable): legacy encodings besides UTF-8 (DEVIATIONS F7; the command
receives ``encodings``, checked by ``legacy_text.check_encodings``)"""

cwd_option = click.option(
    "--cwd",
    type=_DirOrChannel(resolve_path=False),
    default=None,
    show_default="the current directory",
    metavar="DIR",
    help="Directory that relative paths resolve against (or a far side's: docker://CONTAINER/DIR, podman://…,"
    " kubectl://POD/DIR, ssh://[USER@]HOST/DIR).",
)
"""``--cwd``: the base of relative paths (no containment: a person's command line)"""

root_option = click.option(
    "--root",
    "roots",
    type=_DirOrChannel(resolve_path=True),
    multiple=True,
    show_default="the current directory",
    metavar="DIR",
    help="Directory served: relative paths resolve against it and no path may leave it. Repeat it to serve"
    " several directories (none inside another): relative paths then resolve against the first. A far side's"
    " directory: docker://CONTAINER/DIR, podman://…, kubectl://POD/DIR, ssh://[USER@]HOST/DIR.",
)
"""``--root``: the served directories and containment roots (``dsh-fs mcp``, ``client-config``;
repeatable, DEVIATIONS D28): the command receives ``roots``, a tuple (empty: none given)"""

session_option = click.option(
    "--session",
    "session_name",
    type=SESSION_NAME,
    metavar="NAME",
    default=None,
    show_default="none: observations last one command (mcp: one server process)",
    envvar="DSH_FS_SESSION",
    show_envvar=True,
    help="Keep what is observed under session NAME, so a read authorizes a later write/edit of the same"
    " session in later commands and 'dsh-fs mcp' processes too (mcp: stdio only; stored in SQLite under"
    " $DSH_FS_STATE_DIR, else $XDG_STATE_HOME/dsh-fs, else ~/.local/state/dsh-fs). Without it, overwriting"
    " or editing an existing file needs a read in the same command (mcp: the same process) or --no-policy.",
)
"""``--session``: the persistent observation owner (``DSH_FS_SESSION``; the command receives
``session_name``): the tool commands and ``dsh-fs mcp`` over stdio (DEVIATIONS M1)"""

tools_option = click.option(
    "--tools",
    "tool_names",
    type=TOOL_NAMES,
    metavar="NAMES",
    default=None,
    show_default="list (default profile), read, write, edit, glob, grep",
    help="Only these tools, comma-separated, e.g. read,glob,grep; the guidance then covers only them. The"
    " editing faces apply_patch, str_replace_based_edit_tool and str_replace_editor are loaded only when"
    " named here (e.g. read,apply_patch).",
)
"""``--tools``: a subset of the tools, the editing faces only when named (the command receives
``tool_names``, a tuple: it loads :func:`faces_named` and applies the rest with
:func:`select_tools_option`)"""

sandbox_option = click.option(
    "--sandbox",
    "sandbox",
    type=click.Choice(["read-only", "workspace-write", "danger-full-access"]),
    default=None,
    show_default="none: every path the tools reach may be changed",
    help="Sandbox mode (docs/SANDBOX.md): 'read-only' refuses every change; 'workspace-write' allows changes"
    " under the workspace and the platform temp areas only; 'danger-full-access' allows every change. A"
    " refused call may be retried once with sandbox_permissions + justification, which a person approves"
    " (mcp: through the client's elicitation; tool commands: never approved).",
)
"""``--sandbox``: the deployment's sandbox mode (the command receives ``sandbox``;
docs/SANDBOX.md)"""

read_only_option = click.option(
    "--read-only",
    "read_only",
    is_flag=True,
    help="Short for --sandbox read-only.",
)
"""``--read-only``: ``--sandbox read-only`` (``dsh-fs mcp``; the command receives ``read_only``)"""


def sandbox_named(sandbox: str | None, read_only: bool) -> str | None:
    """The sandbox mode of ``--sandbox`` / ``--read-only``.

    :raises click.UsageError: ``--read-only is --sandbox read-only; give one of them`` when both are given
    """
    if read_only and sandbox is not None:
        raise click.UsageError("--read-only is --sandbox read-only; give one of them")
    return "read-only" if read_only else sandbox


def path_rules_options(func: F) -> F:
    """``--deny``, ``--read-only-path``, ``--rules-file`` and ``--show-rules``: the deployment's
    path rules (docs/PATH-RULES.md; the command receives ``deny``, ``read_only_paths``,
    ``rules_files`` and ``show_rules``: hand them to :func:`path_rules_named`)."""
    func = click.option(
        "--show-rules", "show_rules", is_flag=True,
        help="List the path rules' patterns in the tools' guidance (by default it says only that rules exist).",
    )(func)
    func = click.option(
        "--rules-file", "rules_files", multiple=True, metavar="PATH", show_default="none",
        type=click.Path(exists=True, dir_okay=False),
        help="Add the path rules of this TOML file (deny = [...], read_only = [...]; docs/PATH-RULES.md);"
        " repeatable.",
    )(func)
    func = click.option(
        "--read-only-path", "read_only_paths", multiple=True, metavar="PATTERN", show_default="none",
        help="A gitignore pattern, relative to each root, of files every tool may read but none may change;"
        " repeatable.",
    )(func)
    return click.option(
        "--deny", "deny", multiple=True, metavar="PATTERN", show_default="none",
        help="A gitignore pattern, relative to each root, of files no tool may read, list, search or change"
        " (e.g. .env, secrets/); repeatable.",
    )(func)


def path_rules_named(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The ``create_context`` path-rule arguments of :func:`path_rules_options`' values, popped
    from ``kwargs`` and checked: the patterns are patterns, each rules file can be used.

    :raises click.UsageError: the problem, in one line (nothing done)
    """
    given = {
        "deny": tuple(kwargs.pop("deny", None) or ()),
        "read_only_paths": tuple(kwargs.pop("read_only_paths", None) or ()),
        "rules_files": tuple(kwargs.pop("rules_files", None) or ()),
        "show_rules": bool(kwargs.pop("show_rules", False)),
    }
    if not (given["deny"] or given["read_only_paths"] or given["rules_files"]):
        if given["show_rules"]:
            raise click.UsageError("--show-rules needs --deny, --read-only-path or --rules-file")
        return {}
    from ..fs_rules.files import load_rules

    try:
        load_rules(deny=given["deny"], read_only=given["read_only_paths"], files=given["rules_files"])
    except ValueError as exc:
        raise click.UsageError(str(exc).replace("the deployment: deny", "--deny")
                               .replace("the deployment: read-only", "--read-only-path")) from None
    return given


def offset_option(func: F) -> F:
    """``--offset``: the ``offset`` argument of ``read`` (a line) and ``list`` (an entry)."""
    return click.option("--offset", type=JsonNumber("the 1-based first line (read) or entry (list) to return"),
                        default=None, show_default="1", metavar="NUMBER",
                        help="1-based first line (read) or entry (list) to return.")(func)


search_path_option = click.option(
    "--path",
    default=None,
    show_default="the working directory",
    metavar="PATH",
    help="Where to search: a directory (glob), a file or a directory (grep).",
)
"""``--path``: the ``path`` argument of ``glob`` and ``grep`` (their own checks apply)"""

endpoint_url_option = click.option(
    "--endpoint-url",
    type=ENDPOINT_URL,
    metavar="URL",
    default=None,
    show_default="AWS",
    help="S3-compatible service to use instead of AWS (MinIO, R2, Ceph RGW, …); only with S3.",
)
"""``--endpoint-url``: an S3-compatible endpoint (only together with S3: each command checks)"""

_s3_option = click.option(
    "--s3",
    type=S3_URL,
    metavar="s3://BUCKET/PREFIX",
    multiple=True,
    show_default="the local disk",
    help="Work on an S3-compatible bucket prefix instead of the local disk (standard AWS credential chain)."
    " Repeat it to serve several prefixes (none inside another), each as /<its last segment>; relative"
    " paths then resolve against the first.",
)


_history_s3_option = click.option(
    "--history-s3",
    "history_s3",
    type=S3_URL,
    metavar="s3://BUCKET/PREFIX",
    default=None,
    show_default="the state directory",
    help="Where the history of --session NAME (and of HTTP tokens) is kept: this bucket under this prefix,"
    " shared by every machine serving the name (docs/HISTORY.md), outside every served prefix; --endpoint-url"
    " applies to it too.",
)
"""``--history-s3``: a bucket prefix holding the sessions' histories (``history.s3_store``)"""


def history_options(func: F) -> F:
    """Add ``--history-s3`` and ``--endpoint-url`` to a command that reads a history but serves
    no files (``sessions history``, ``sessions forget``); ``--endpoint-url`` alone is a usage
    error. The command receives ``history_s3`` and ``endpoint_url``."""

    @functools.wraps(func)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("endpoint_url") is not None and kwargs.get("history_s3") is None:
            raise click.UsageError("--endpoint-url is only used with --history-s3")
        return func(*args, **kwargs)

    return _history_s3_option(endpoint_url_option(checked))  # type: ignore[return-value]


def s3_options(func: F) -> F:
    """Add ``--s3``, ``--history-s3`` and ``--endpoint-url`` to a command; ``--endpoint-url``
    without either S3 option is a usage error, and so is a ``--history-s3`` inside a served
    prefix (a tool could then change the history). The command receives ``s3`` (a tuple of
    URLs, empty: none; repeatable, DEVIATIONS D28), ``history_s3`` and ``endpoint_url``."""

    @functools.wraps(func)
    def checked(*args: Any, **kwargs: Any) -> Any:
        history_s3 = kwargs.get("history_s3")
        if kwargs.get("endpoint_url") is not None and not kwargs.get("s3") and history_s3 is None:
            raise click.UsageError("--endpoint-url is only used with --s3 or --history-s3")
        if history_s3 is not None:
            from ..fs_s3.location import parse_url
            from ..history.s3_store import history_place

            bucket, prefix = history_place(history_s3)
            for url in kwargs.get("s3") or ():
                served = parse_url(url)
                if served.bucket == bucket and prefix.startswith(served.prefix):
                    raise click.UsageError(f"--history-s3 {history_s3} is inside the served prefix {url}: keep the"
                                           " history outside every served prefix")
        return func(*args, **kwargs)

    return _s3_option(_history_s3_option(endpoint_url_option(checked)))  # type: ignore[return-value]


SETTINGS_HELP: dict[str, str] = {
    "read_limit": "Default and maximum lines per read.",
    "read_max_line_length": "Characters kept per line of a read.",
    "read_max_bytes": "UTF-8 bytes of one read's lines.",
    "read_stream_min_size": "Files of at least this many bytes are read streaming.",
    "glob_max_results": "Paths one glob shows inline.",
    "grep_max_matches": "Matching lines one grep shows inline.",
    "grep_max_line_bytes": "Bytes kept of one matched line.",
    "raw_output_max_bytes": "Bytes of ripgrep output one search may produce.",
    "timeout_ms": "Time budget of one glob/grep call in milliseconds.",
}
"""the tools' settings (``create_context`` keywords; flag = ``--`` + the keyword with dashes)
and their help; the defaults shown are the plugins' own (``ToolFsConfig``,
``ToolFsSearchConfig``)"""


def _setting_defaults() -> dict[str, int]:
    from ..tool_fs.config import ToolFsConfig
    from ..tool_fs_search.config import ToolFsSearchConfig

    read, search = ToolFsConfig(), ToolFsSearchConfig()
    return {key: getattr(config, key) for config in (read, search) for key in SETTINGS_HELP
            if hasattr(config, key)}


def settings_options(func: F) -> F:
    """Add the tools' settings (``--read-limit N`` … ``--timeout-ms N``, ``SETTINGS_HELP``),
    each defaulting to the plugin's own value; :func:`pop_settings` takes them back out."""
    defaults = _setting_defaults()
    for key, text in reversed(SETTINGS_HELP.items()):
        func = click.option("--" + key.replace("_", "-"), key, type=int, default=defaults[key], show_default=True,
                            metavar="N", help=text)(func)
    return func


def pop_settings(kwargs: dict[str, Any]) -> dict[str, int]:
    """Remove the settings of :func:`settings_options` from a command's ``kwargs`` and return
    them (``create_context`` keywords; a bad value is refused there, e.g. ``tool-fs: readLimit
    must be a positive integer``)."""
    return {key: kwargs.pop(key) for key in SETTINGS_HELP}


def faces_named(names: tuple[str, ...] | None) -> tuple[str, ...]:
    """The editing faces (``dsh_fs.faces.FACE_TOOLS``) among the ``--tools`` names: a command
    loads them into its context (``faces=``) before :func:`select_tools_option`."""
    from ..faces import FACE_TOOLS

    return tuple(name for name in names or () if name in FACE_TOOLS)


def list_named(names: tuple[str, ...] | None) -> bool | None:
    """``True`` when ``--tools`` names ``list`` (loaded then in either profile, DEVIATIONS
    L1), else ``None`` (the profile decides: served in ``default`` only)."""
    return True if names is not None and "list" in names else None


def select_tools_option(ctx: Any, names: tuple[str, ...] | None) -> None:
    """Apply ``--tools`` to the context ``ctx`` (``core.selection.select_tools``); ``None``:
    every tool.

    :raises click.BadParameter: for an unknown name or none at all (the message names the
        registered tools and the editing faces that may be named too)
    """
    if names is None:
        return
    from ..core.selection import select_tools
    from ..faces import FACE_TOOLS

    try:
        select_tools(ctx, names)
    except ValueError as exc:
        loaded = ctx.tools.names()
        unloaded = [face for face in FACE_TOOLS if face not in loaded]
        more = f"; editing faces: {', '.join(unloaded)}" if unloaded else ""
        if "read_image" in names and "read_image" not in loaded:
            more += "; read_image is served with --images"
        if "read_pdf" in names and "read_pdf" not in loaded:
            more += "; read_pdf is served with --pdfs"
        raise click.BadParameter(f"{exc}{more}", param_hint="--tools") from None


async def require_s3_credentials(option: str = "--s3") -> None:
    """:param option: the option that asked for S3, as the message names it
    :raises click.UsageError: when the standard AWS credential chain finds no credentials
        (a setup error, not a tool result)"""
    from ..fs_s3.store import has_credentials

    if not await has_credentials():
        raise click.UsageError(
            f"{option}: no AWS credentials found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
            "AWS_PROFILE, or another source of the standard credential chain)"
        )
