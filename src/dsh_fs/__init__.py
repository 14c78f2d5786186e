"""dsh-fs: the DeepSeek Harness filesystem stack for LLM agents.

``create_context()`` loads the default deployment (local provider, observation policy,
read/write/edit tools, glob/grep, a spill store); ``ctx.tools.execute("read", {...},
session=Session(cwd=...))`` runs a call. See ``dsh_fs.core`` (kernel), ``dsh_fs.fs`` (the
seam), ``dsh_fs.fs_local``, ``dsh_fs.fs_policy``, ``dsh_fs.tool_fs``, ``dsh_fs.tool_fs_search``
and ``dsh_fs.spill``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from types import EllipsisType
from typing import Any

from .core import (
    AbortSignal as AbortSignal,
    Context as Context,
    ErrorInfo as ErrorInfo,
    HarnessError as HarnessError,
    Profile as Profile,
    Session as Session,
    ToolCall as ToolCall,
    ToolResult as ToolResult,
)
from .fs import (
    CreateIfAbsent as CreateIfAbsent,
    DeleteIntent as DeleteIntent,
    DeleteOutcome as DeleteOutcome,
    DirEntry as DirEntry,
    EditIntent as EditIntent,
    EditOutcome as EditOutcome,
    EditRequest as EditRequest,
    FileSystem as FileSystem,
    FsError as FsError,
    FsErrorCode as FsErrorCode,
    Info as Info,
    PathInfo as PathInfo,
    RenameIntent as RenameIntent,
    RenameOutcome as RenameOutcome,
    ReplaceIfVersion as ReplaceIfVersion,
    Target as Target,
    TargetKey as TargetKey,
    Version as Version,
    WriteIntent as WriteIntent,
    WriteOutcome as WriteOutcome,
)

from .providers import open_provider as open_provider

__version__ = "0.1.0"
"""the package version, defined here only (``pyproject.toml`` reads it: ``dynamic = ["version"]``)"""

__all__ = (
    "AbortSignal",
    "Context",
    "CreateIfAbsent",
    "DeleteIntent",
    "DeleteOutcome",
    "DirEntry",
    "EditIntent",
    "EditOutcome",
    "EditRequest",
    "ErrorInfo",
    "FileSystem",
    "FsError",
    "FsErrorCode",
    "HarnessError",
    "Info",
    "PathInfo",
    "Profile",
    "RenameIntent",
    "RenameOutcome",
    "ReplaceIfVersion",
    "Session",
    "Target",
    "TargetKey",
    "ToolCall",
    "ToolResult",
    "Version",
    "WriteIntent",
    "WriteOutcome",
    "__version__",
    "create_context",
    "open_provider",
)


def create_context(
    *,
    cwd: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None | EllipsisType = ...,
    roots: Sequence[str | os.PathLike[str]] | None = None,
    profile: Profile | str | None = None,
    policy: bool = True,
    provider: FileSystem | None = None,
    observations: Any = None,
    spill_root: str | os.PathLike[str] | None = None,
    search: bool = True,
    faces: Iterable[str] = (),
    list_tool: bool | None = None,
    images: bool = False,
    pdfs: bool = False,
    encodings: Sequence[str] = (),
    sandbox: str | None = None,
    approval: Any = None,
    deny: Iterable[str] = (),
    read_only_paths: Iterable[str] = (),
    rules_files: Iterable[str | os.PathLike[str]] = (),
    show_rules: bool = False,
    history: Any = False,
    **tool_config: Any,
) -> Context:
    """The default deployment: ``LocalFileSystem`` (or ``provider``) + ``FsPolicy`` + ``ToolFs``
    + ``LocalSpillStore`` + ``ToolFsSearch``.

    Safe by default: the model's paths are confined to ``root``, which is the ``cwd`` unless
    said otherwise — ``..``, absolute paths and symlinks that lead
    elsewhere fail ``FS_PERMISSION_DENIED`` ``cannot resolve "<path>": outside the workspace
    "<root>"``. ``root=None`` serves the whole disk, as the reference does (its conformance
    scenarios assume no containment root).

    :param cwd: the provider's default base for relative paths (default: ``root`` when one is
        given, else the process cwd)
    :param root: the directory no path may leave; ``...`` (default): ``cwd``; ``None``: no
        containment. Only for the built-in local provider (a given ``provider`` has its own)
    :param roots: instead of ``root``, several directories no path may leave (DEVIATIONS D28,
        ``LocalFileSystem(roots=…)``); ``cwd`` defaults to the first one
    :param profile: ``"default"``: the reference's tools with dsh-fs's deviations on (an edit keeps
        a file's BOM and line endings, a refusal names its remedy, a missed ``old_string`` gets
        its near match, a read always makes progress …: each one's ID, reason and switch in
        docs/DEVIATIONS.md), or ``"reference"``: the reference's texts and behaviour byte for byte
    :param policy: ``False`` loads the bare deployment (unconditional write/edit)
    :param provider: an already built provider to serve as ``ctx.fs`` instead of a local one;
        the context owns it from then on: ``await ctx.aclose()`` closes it
    :param observations: the policy's ``ObservationStore`` (e.g. a persistent one); default fresh
    :param faces: optional editing faces to add, by tool name (``dsh_fs.faces.FACE_TOOLS``:
        ``apply_patch``, ``str_replace_based_edit_tool``, ``str_replace_editor``,
        ``notebook_edit`` (needs ``dsh-fs[notebooks]``)); none by default
    :param list_tool: load the ``list`` tool (``ToolFsList``, docs/LIST.md); ``None``
        (default): in the ``default`` profile only (DEVIATIONS L1), so the ``reference``
        profile's default tool set stays the seed's
    :param images: ``True`` adds ``read_image`` (docs/IMAGES.md): only for a model that takes
        image input, since its results carry an image. Needs Pillow (``dsh-fs[images]``).
        Its caps: ``image_max_bytes``, ``image_max_message_bytes``, ``image_max_pixels``,
        ``image_max_dimension``, ``image_media_types`` (``dsh_fs.tool_image.ImageConfig``)
    :param pdfs: ``True`` adds ``read_pdf`` (docs/PDF.md): the text of a PDF by page ranges (with
        ``images``, pages without a text layer as images). Needs pypdfium2 (``dsh-fs[pdfs]``). Its
        caps: ``pdf_max_bytes``, ``pdf_max_output_bytes``, ``pdf_worker_memory``,
        ``pdf_worker_seconds``, ``pdf_workers`` (``dsh_fs.tool_pdf.PdfConfig``)
    :param encodings: legacy encodings besides UTF-8 for the built-in provider (DEVIATIONS F7,
        docs/ENCODINGS.md), e.g. ``["shift_jis", "gb18030", "cp1252"]``: a file that is not UTF-8
        is read in the one that decodes it (a detector picks among several), and an edit or write
        keeps it in that encoding, changing only the bytes of what it replaces. Empty (default):
        UTF-8 only, as the reference
    :param sandbox: a sandbox mode (docs/SANDBOX.md): ``"read-only"``, ``"workspace-write"`` or
        ``"danger-full-access"``; the provider is wrapped in ``fs_sandbox.filesystem.SandboxedFileSystem``
        and the mutating tools take ``sandbox_permissions`` + ``justification``. ``None``
        (default): no sandbox, today's deployment byte for byte
    :param approval: with ``sandbox``, the approval callback of an escalation: an
        ``async (fs_sandbox.approval.ApprovalRequest) -> "allowed-once" | "rejected" |
        "cancelled" | "unavailable"``; ``None``: every escalation is refused
    :param deny: path rules (docs/PATH-RULES.md): gitignore patterns, relative to each workspace
        root (without one, to ``cwd``), of paths no tool may read, list, search or change
        (``FS_PERMISSION_DENIED`` ``… the path rules deny access to it``); the provider is
        wrapped in ``fs_rules.filesystem.RuledFileSystem`` (inside the sandbox, if any)
    :param read_only_paths: gitignore patterns of paths every tool may read but none change
        (``… the path rules make it read-only``)
    :param rules_files: rules files to add (TOML: ``deny = [...]``, ``read_only = [...]``); read
        only because they are named here
    :param show_rules: the ``tool:path-rules`` prompt section lists the patterns (by default it
        says only that rules exist)
    :param history: record every change the tools make, per session, for ``ctx.history``,
        ``ctx.checkpoint`` and ``ctx.rewind`` (docs/HISTORY.md): ``True`` keeps it in memory
        (``history.MemoryHistoryStore``), or a ``history.HistoryStore`` (e.g. a named session's
        ``SqliteHistoryStore``); the provider is wrapped in ``history.HistoryFileSystem``
        (outside the sandbox and the path rules, so only what they let through is recorded).
        ``False`` (default): no history
    :param spill_root: where capped search results are saved whole (``LocalSpillStore``);
        default: a private temporary directory removed when the process exits
    :param search: ``False`` leaves out ``glob``/``grep`` and the spill store (the file tools
        alone, as the reference's ``tool-fs`` deployment)
    :param tool_config: ``read_limit``, ``read_max_line_length``, ``read_max_bytes``,
        ``read_stream_min_size`` (``ToolFs``); ``list_max_entries`` (``ToolFsList``);
        ``glob_max_results``, ``grep_max_matches``,
        ``grep_max_line_bytes``, ``raw_output_max_bytes``, ``timeout_ms``,
        ``mirror_batch_bytes``, ``rg_path`` (``ToolFsSearch``)
    :raises ValueError: for an invalid profile or tool setting, an unknown face, an unknown or
        unsupported encoding, ``encodings`` with ``provider``, or ``root``
        (or ``roots``) with ``provider``, ``roots`` with ``root``, roots ``LocalFileSystem`` refuses;
        an unknown sandbox mode, ``approval`` without ``sandbox``; an ``image_*`` setting without
        ``images=True``, a ``pdf_*`` setting without ``pdfs=True``; a path rule that is not a
        pattern, a rules file that cannot be used
    :raises ImportError: ``images=True`` without Pillow, ``pdfs=True`` without pypdfium2
    :raises TypeError: for a keyword that is neither a parameter nor a tool setting: the message
        names it and the closest known ones (``did you mean 'read_limit'?``)
    """
    _check_tool_config(tool_config)
    from .fs_policy import FsPolicy
    from .spill import LocalSpillStore
    from .tool_common.switches import ToolSwitches
    from .tool_fs import ToolFs, ToolFsList
    from .tool_fs_search import ToolFsSearch
    from .tool_fs_search.config import CONFIG_KEYS as SEARCH_KEYS

    ctx = Context(profile=profile)
    if encodings and provider is not None:
        raise ValueError("create_context: encodings= applies to the built-in provider; give the provider its own")
    if roots is not None and (provider is not None or root is not ...):
        raise ValueError("create_context: roots= applies to the built-in local provider, instead of root=")
    if provider is None and roots is not None:
        base = os.fspath(cwd) if cwd is not None else os.path.abspath(os.fspath(next(iter(roots), ".")))
        provider = open_provider(base, profile=ctx.profile, roots=roots, cwd=base, **_encodings(encodings))
    elif provider is None:
        if cwd is not None:
            base = os.fspath(cwd)
        else:  # relative paths resolve inside the given root, not against an outside process cwd
            base = os.fspath(root) if root is not ... and root is not None else os.getcwd()
        provider = open_provider(base, profile=ctx.profile, root=root, cwd=base, **_encodings(encodings))
    elif root is not ...:
        raise ValueError("create_context: root= applies to the built-in local provider; give the provider its own")
    rules = _path_rules(deny, read_only_paths, rules_files, show_rules)
    if rules:
        from .fs_rules.filesystem import RuledFileSystem

        provider = RuledFileSystem(provider, rules=rules, base=os.fspath(cwd) if cwd is not None else None)
    if sandbox is not None:
        from .fs_sandbox.filesystem import SandboxedFileSystem

        provider = SandboxedFileSystem(provider, mode=sandbox, approval=approval)
    elif approval is not None:
        raise ValueError("create_context: approval= needs sandbox=")
    recorded = history is not False and history is not None
    if recorded:
        from .history import HistoryFileSystem, HistoryStore, MemoryHistoryStore

        if history is True:
            history = MemoryHistoryStore()
        elif not isinstance(history, HistoryStore):
            raise ValueError("create_context: history= is True, False or a history.HistoryStore")
        provider = HistoryFileSystem(provider, history)
    ctx.plugin(_Provided, provider=provider)
    if recorded:
        from .history import HistoryService

        ctx.plugin(HistoryService)
    if policy:
        ctx.plugin(FsPolicy, store=observations)
    search_config = {k: tool_config.pop(k) for k in [*SEARCH_KEYS, "mirror_batch_bytes", "rg_path"] if k in tool_config}
    list_config = {k: tool_config.pop(k) for k in ["list_max_entries"] if k in tool_config}
    if list_tool or (list_tool is None and ToolSwitches.of(ctx.profile).list_served):  # L1
        ctx.plugin(ToolFsList, **list_config)
    image_config = {k: tool_config.pop(k) for k in list(tool_config) if k.startswith("image_")}
    if image_config and not images:
        raise ValueError(f"create_context: {', '.join(sorted(image_config))} needs images=True")
    pdf_config = {k: tool_config.pop(k) for k in list(tool_config) if k.startswith("pdf_")}
    if pdf_config and not pdfs:
        raise ValueError(f"create_context: {', '.join(sorted(pdf_config))} needs pdfs=True")
    ctx.plugin(ToolFs, **tool_config)
    if images:
        from .tool_image import ToolReadImage

        ctx.plugin(ToolReadImage, **image_config)
    if pdfs:
        from .tool_pdf import ToolReadPdf

        ctx.plugin(ToolReadPdf, **pdf_config)
    if search:
        ctx.plugin(LocalSpillStore, root=spill_root)
        ctx.plugin(ToolFsSearch, **search_config)
    if faces:
        from .faces import load_faces

        load_faces(ctx, faces)
    if rules:
        from .fs_rules.prompt import PathRulesPrompt

        ctx.plugin(PathRulesPrompt, rules=rules)
    if sandbox is not None:
        from .fs_sandbox.prompt import SandboxPolicyPrompt

        ctx.plugin(SandboxPolicyPrompt)  # the ``sandbox:policy`` section
    return ctx


def _check_tool_config(tool_config: dict[str, Any]) -> None:
    """Refuse a ``create_context`` keyword no part takes, naming the close ones (a misspelt
    setting must not be dropped nor reported as another class's argument).

    :raises TypeError: ``create_context() got an unexpected keyword argument 'read_limt'; did
        you mean 'read_limit'?``
    """
    import dataclasses

    from .tool_fs.config import ToolFsConfig
    from .tool_fs_search.config import CONFIG_KEYS as SEARCH_KEYS

    known = {f.name for f in dataclasses.fields(ToolFsConfig)} - {"profile"}
    known |= {*SEARCH_KEYS, "mirror_batch_bytes", "rg_path", "list_max_entries"}
    unknown = sorted(k for k in tool_config if k not in known and not k.startswith(("image_", "pdf_")))
    if not unknown:
        return
    import difflib
    import inspect

    from .tool_image.config import CONFIG_KEYS as IMAGE_KEYS
    from .tool_pdf.config import CONFIG_KEYS as PDF_KEYS

    names = known | set(IMAGE_KEYS) | set(PDF_KEYS) | {"image_media_types"}
    names |= {n for n in inspect.signature(create_context).parameters if n != "tool_config"}
    close = difflib.get_close_matches(unknown[0], sorted(names), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise TypeError(f"create_context() got an unexpected keyword argument {unknown[0]!r}{hint}")


def _path_rules(deny: Iterable[str], read_only: Iterable[str], files: Iterable[str | os.PathLike[str]],
                show: bool) -> Any:
    """The deployment's ``PathRules`` (empty: no rules), built only when some are given."""
    if isinstance(deny, str) or isinstance(read_only, str) or isinstance(files, (str, os.PathLike)):
        raise ValueError("create_context: deny, read_only_paths and rules_files take lists")
    deny, read_only, files = tuple(deny), tuple(read_only), tuple(files)
    if not (deny or read_only or files):
        if show:
            raise ValueError("create_context: show_rules= needs deny=, read_only_paths= or rules_files=")
        return None
    from .fs_rules.files import load_rules

    return load_rules(deny=deny, read_only=read_only, files=files, show=show)


def _encodings(encodings: Sequence[str]) -> dict[str, Any]:
    """``open_provider``'s ``encodings`` option, only when some are given (a provider that takes
    none is then never asked)."""
    if isinstance(encodings, str):
        raise ValueError("create_context: encodings= is a list of encoding names")
    return {"encodings": tuple(encodings)} if encodings else {}


class _Provided:
    """A plugin that provides an existing provider object as ``fs`` (and closes it with the
    scope, as ``FileSystem.apply`` does for a provider it builds)."""

    name = "fs-provided"

    @staticmethod
    def apply(scope: Any, /, provider: FileSystem) -> None:
        scope.provide("fs", provider)
        scope.effect(provider.aclose)
