"""How ``dsh-fs mcp`` builds the deployment it serves: the provider and the ``Context``.

No SDK import. The provider (the local directory ``--root``, or the ``--s3`` bucket prefix) is
built in exactly one place, ``build_provider``, by ``dsh_fs.open_provider``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Final

from ..core.context import Context
from ..core.profile import Profile
from ..fs.filesystem import FileSystem

__all__ = ("OBSERVATIONS_PER_OWNER", "ServeOptions", "build_context", "build_provider")

OBSERVATIONS_PER_OWNER: Final = 10_000
"""default ``ServeOptions.observations_per_owner`` (a few MB per owner at most)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeOptions:
    """What ``dsh-fs mcp`` serves.

    :raises ValueError: for an unknown profile
    """

    root: str = field(default_factory=os.getcwd)
    """the served directory: the provider's default cwd and every session's cwd (absolute)"""
    roots: tuple[str, ...] = ()
    """every served directory, ``root`` first (``dsh-fs mcp --root A --root B``, DEVIATIONS
    D28); empty: ``root`` alone. Ignored with ``s3``"""
    profile: Profile | str = Profile.DEFAULT
    """``default`` (DEVIATIONS on) or ``reference`` (byte-exact); a ``Profile`` after construction"""
    policy: bool = True
    """``False``: the bare deployment without the observation policy"""
    tool_config: dict[str, Any] = field(default_factory=dict)
    """the tools' settings, as ``create_context`` takes them: ``read_limit``,
    ``read_max_line_length``, ``read_max_bytes``, ``read_stream_min_size``, ``glob_max_results``,
    ``grep_max_matches``, ``grep_max_line_bytes``, ``raw_output_max_bytes``, ``timeout_ms``"""
    s3: str | None = None
    """``s3://bucket/prefix``: serve that bucket prefix instead of a local directory; the
    sessions' cwd is then the provider's display root ``/``"""
    s3_roots: tuple[str, ...] = ()
    """every served bucket prefix, ``s3`` first (``dsh-fs mcp --s3 A --s3 B``, DEVIATIONS D28:
    each served as ``/<its last segment>``, the sessions' cwd the first); empty: ``s3`` alone"""
    endpoint_url: str | None = None
    """an S3-compatible endpoint (with ``s3``); ``None``: AWS via the standard credential chain"""
    channel: str | None = None
    """a far side over a command channel (``docker://box/work``, docs/CHANNELS.md): serve it;
    ``root`` and ``roots`` are then far-side paths (``dsh-fs mcp --root URL`` gives the URL's)"""
    faces: tuple[str, ...] = ()
    """optional editing faces to load, by tool name (``dsh_fs.faces.FACE_TOOLS``); none by default"""
    list_tool: bool | None = None
    """load the ``list`` tool: ``None`` in the ``default`` profile only (DEVIATIONS L1)"""
    images: bool = False
    """``True`` adds ``read_image`` (docs/IMAGES.md): for a client whose model takes images"""
    pdfs: bool = False
    """``True`` adds ``read_pdf`` (docs/PDF.md): the text of PDF files by page ranges"""
    encodings: tuple[str, ...] = ()
    """legacy encodings besides UTF-8 (``--encoding NAME``; DEVIATIONS F7, docs/ENCODINGS.md)"""
    observations_per_owner: int = OBSERVATIONS_PER_OWNER
    """files one owner's observations may cover (the least recently recorded is forgotten
    first: a later overwrite of it fails safe); bounds each connection's memory"""
    sandbox: str | None = None
    """a sandbox mode (``read-only``, ``workspace-write``, ``danger-full-access``; docs/SANDBOX.md):
    the provider is fenced and an escalation asks the person through the client's elicitation
    (``mcp.approval``); ``None``: no sandbox"""
    deny: tuple[str, ...] = ()
    """path rules (docs/PATH-RULES.md): gitignore patterns of paths no tool may read, list,
    search or change, relative to each root"""
    read_only_paths: tuple[str, ...] = ()
    """gitignore patterns of paths every tool may read but none change"""
    rules_files: tuple[str, ...] = ()
    """rules files to add (TOML ``deny``/``read_only`` arrays)"""
    show_rules: bool = False
    """the ``tool:path-rules`` instructions list the patterns"""

    def __post_init__(self) -> None:
        if self.channel is not None:  # far-side paths, as given (the far side checks them)
            roots = tuple(self.roots) or (self.root,)
            if roots[0] != self.root:
                raise ValueError("ServeOptions: roots must start with root")
            object.__setattr__(self, "roots", roots)
            object.__setattr__(self, "profile", Profile.parse(self.profile))
            return
        object.__setattr__(self, "root", "/" if self.s3 is not None else os.path.abspath(self.root))
        roots = () if self.s3 is not None else tuple(os.path.abspath(r) for r in self.roots) or (self.root,)
        if roots and roots[0] != self.root:
            raise ValueError("ServeOptions: roots must start with root")
        if self.s3_roots and self.s3_roots[0] != self.s3:
            raise ValueError("ServeOptions: s3_roots must start with s3")
        if len(self.s3_roots) > 1:
            from ..fs_s3.roots import display_roots

            object.__setattr__(self, "root", next(iter(display_roots(self.s3_roots))))
        object.__setattr__(self, "roots", roots)
        object.__setattr__(self, "profile", Profile.parse(self.profile))


def build_provider(options: ServeOptions) -> FileSystem:
    """The provider ``dsh-fs mcp`` serves (``dsh_fs.open_provider``): the bucket prefix of
    ``options.s3``, the far side's directory of ``options.channel``, else the local directory ``options.root`` (or every one of ``options.roots``,
    D28) — relative paths resolve against the root, and paths resolving outside it are refused (``FS_PERMISSION_DENIED``,
    containment).

    The single place the MCP server constructs its provider.
    """
    from ..providers import open_provider

    more: dict[str, Any] = {"encodings": options.encodings} if options.encodings else {}
    if options.s3 is not None:
        several = options.s3_roots if len(options.s3_roots) > 1 else None
        return open_provider(options.s3, profile=options.profile, endpoint_url=options.endpoint_url, roots=several,
                             **more)
    if options.channel is not None:
        return open_provider(options.channel, profile=options.profile,
                             roots=options.roots if len(options.roots) > 1 else None, **more)
    if len(options.roots) > 1:
        return open_provider(options.root, profile=options.profile, roots=options.roots, **more)
    return open_provider(options.root, profile=options.profile, **more)


def build_context(options: ServeOptions, *, observations: Any = None, history: Any = False) -> Context:
    """The default deployment over ``build_provider(options)``, its observations bounded per
    owner (``options.observations_per_owner``).

    :param observations: the policy's ``ObservationStore`` (``dsh-fs mcp --session``: a
        ``session_store.SqliteObservationStore``, DEVIATIONS M1); default: a fresh one
    :param history: ``create_context``'s ``history`` (docs/HISTORY.md): ``True`` (in memory) or a
        store (``--session``, HTTP: ``history.sqlite_store.SqliteHistoryStore``); ``False``: none

    :raises ValueError: for an invalid tool setting (``tool-fs: <name> must be a positive integer``)
        or an unknown face
    """
    from .. import create_context
    from ..fs_policy import ObservationStore

    return create_context(
        cwd=options.root,
        profile=options.profile,
        policy=options.policy,
        provider=build_provider(options),
        observations=(
            observations if observations is not None else ObservationStore(max_per_owner=options.observations_per_owner)
        ),
        faces=options.faces,
        list_tool=options.list_tool,
        images=options.images,
        pdfs=options.pdfs,
        **_sandboxed(options),
        deny=options.deny,
        read_only_paths=options.read_only_paths,
        rules_files=options.rules_files,
        show_rules=options.show_rules,
        history=history,
        **options.tool_config,
    )


def _sandboxed(options: ServeOptions) -> dict[str, Any]:
    """``create_context``'s sandbox arguments: the mode and the elicitation approval callback."""
    if options.sandbox is None:
        return {}
    from .approval import approve_by_elicitation

    return {"sandbox": options.sandbox, "approval": approve_by_elicitation}
