"""``open_provider``: a provider from a URL, by a registry of schemes (as fsspec's
``filesystem(protocol, **options)``).

::

    open_provider("/srv/project")                  # LocalFileSystem confined to /srv/project
    open_provider("/srv/project", root=None)       # … serving the whole disk (the reference)
    open_provider("memory://")                     # MemoryFileSystem
    open_provider("s3://bucket/prefix", endpoint_url="http://127.0.0.1:9000")  # S3FileSystem
    open_provider("docker://box/work")             # ChannelFileSystem: /work inside the container box
    open_provider("ssh://me@host/srv/project")     # … on host, over ssh (also podman://, kubectl://)

A location without a scheme (or ``file://``) is a local directory. A new provider is one entry
of ``PROVIDERS`` (``register_provider``): a function taking the location after ``<scheme>://``
and the keywords of ``open_provider``. ``create_context``, ``dsh-fs mcp``, the CLI tool
commands and ``dsh-fs replay`` build their provider here. Provider modules are imported only
when their scheme is opened (S3 needs the ``[s3]`` extra).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from types import EllipsisType
from typing import Any

from .core.profile import Profile
from .fs.filesystem import FileSystem

__all__ = ("PROVIDERS", "ProviderOpener", "open_provider", "register_provider")

ProviderOpener = Callable[..., FileSystem]
"""``opener(location, *, profile, root, cwd, **options) -> FileSystem``: ``location`` is the
URL after ``<scheme>://`` (for a bare path: the path itself); ``root`` is ``...`` when the
caller gave none"""

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def _open_local(location: str, *, profile: Profile, root: Any, cwd: Any, **options: Any) -> FileSystem:
    """``LocalFileSystem`` on the directory ``location``: confined to it unless ``root`` says
    otherwise (``None``: no containment; a path: that directory); ``cwd`` defaults to it."""
    from .fs_local import LocalFileSystem

    directory = os.path.abspath(os.fspath(location) or ".")
    if options.get("roots") is not None:  # several roots (DEVIATIONS D28): the directory is the cwd
        if root is not ...:
            raise ValueError("open_provider: give root= or roots=, not both")
        return LocalFileSystem(cwd=os.fspath(cwd) if cwd is not None else directory, profile=profile, **options)
    options.pop("roots", None)
    return LocalFileSystem(
        cwd=os.fspath(cwd) if cwd is not None else directory,
        profile=profile,
        root=directory if root is ... else root,
        **options,
    )


def _open_memory(location: str, *, profile: Profile, root: Any, cwd: Any, **options: Any) -> FileSystem:
    """``MemoryFileSystem`` (``memory://`` or ``memory://<name>``); ``root``: its display root
    (default ``/``); ``options``: ``files``, ``write_max_size``."""
    from .fs_memory import MemoryFileSystem

    if "/" in location:
        raise ValueError(f'open_provider: "memory://{location}" names a path; use memory:// or memory://<name>')
    if root is not ...:
        options["root"] = root
    return MemoryFileSystem(cwd=cwd, profile=profile, name=location or None, **options)


def _open_s3(location: str, *, profile: Profile, root: Any, cwd: Any, **options: Any) -> FileSystem:
    """``S3FileSystem`` on ``s3://bucket/prefix``; ``root``: its display root (default ``/``);
    ``options``: ``endpoint_url``, ``client_options`` and the other ``S3FileSystem`` keywords;
    ``roots``: several ``s3://`` URLs (D28, ``fs_s3.from_urls``), ``location`` among them: the
    default cwd is its display root."""
    from .fs_s3 import from_url, from_urls
    from .fs_s3.roots import display_roots

    url = f"s3://{location}"
    urls = options.pop("roots", None)
    if urls is not None:
        if root is not ...:
            raise ValueError("open_provider: give root= or roots=, not both")
        urls = [os.fspath(u) for u in urls]
        if len(urls) > 1 and cwd is None:
            named = display_roots(urls)
            if url not in named.values():
                raise ValueError(f'open_provider: "{url}" is not one of roots=')
            cwd = next(shown for shown, given in named.items() if given == url)
        return from_urls(urls, profile=profile, cwd=cwd, **options)
    if root is not ...:
        options["root"] = root
    return from_url(url, profile=profile, cwd=cwd, **options)


_CHANNEL_OPTIONS = {
    "docker": ("user", "exec_args", "program"),
    "podman": ("user", "exec_args", "program"),
    "kubectl": ("namespace", "container", "context", "program"),
    "ssh": ("ssh_command", "env"),
}
"""the channel's own keywords of each channel scheme (``fs_channel.channels.channel_for_url``)"""


def _channel_opener(scheme: str) -> ProviderOpener:
    def _open_channel(location: str, *, profile: Profile, root: Any, cwd: Any, **options: Any) -> FileSystem:
        """``ChannelFileSystem`` on ``<scheme>://<location>`` (docs/CHANNELS.md): the URL's path
        is the far-side root (``root=None``: no containment; a path: that far directory) and
        the default cwd; ``roots``: several far roots (D28), each a far path or a URL of the
        same channel; ``options``: the channel's keywords (``_CHANNEL_OPTIONS``), then
        ``ChannelFileSystem``'s (``python``, ``prefetch_max``, ``write_max_size``, …)."""
        from .fs_channel import ChannelFileSystem, channel_for_url

        wanted = {k: options.pop(k) for k in _CHANNEL_OPTIONS[scheme] if k in options}
        named = channel_for_url(scheme, location, **wanted)
        roots = options.pop("roots", None)
        far_roots = None
        if roots is not None:
            if root is not ...:
                raise ValueError("open_provider: give root= or roots=, not both")
            far_roots = []
            for given in map(os.fspath, roots):
                if "://" in given:
                    other = channel_for_url(scheme, given.split("://", 1)[1], **wanted) \
                        if given.startswith(f"{scheme}://") else None
                    if other is None or other.channel.identity != named.channel.identity:
                        raise ValueError(f'open_provider: "{given}" is not a path of {named.channel.identity}')
                    given = other.root
                far_roots.append(given)
        far_root = named.root if root is ... else (os.fspath(root) if root is not None else None)
        return ChannelFileSystem(named.channel, root=None if far_roots is not None else far_root, roots=far_roots,
                                 cwd=os.fspath(cwd) if cwd is not None else named.root, profile=profile, **options)

    return _open_channel


PROVIDERS: dict[str, ProviderOpener] = {
    "file": _open_local,
    "memory": _open_memory,
    "s3": _open_s3,
    **{scheme: _channel_opener(scheme) for scheme in _CHANNEL_OPTIONS},
}
"""scheme → opener; ``file`` also serves a location without a scheme"""


def register_provider(scheme: str, opener: ProviderOpener) -> None:
    """Make ``open_provider("<scheme>://…")`` call ``opener`` (replacing an earlier entry).

    :param scheme: lower-case URL scheme (``"memory"``)
    :raises ValueError: for a scheme that is not a URL scheme
    """
    if not re.fullmatch(r"[a-z][a-z0-9+.-]*", scheme):
        raise ValueError(f"register_provider: {scheme!r} is not a URL scheme")
    PROVIDERS[scheme] = opener


def open_provider(
    url: str | os.PathLike[str],
    *,
    profile: Profile | str | None = None,
    root: str | os.PathLike[str] | None | EllipsisType = ...,
    cwd: str | None = None,
    roots: Sequence[str | os.PathLike[str]] | None = None,
    **options: Any,
) -> FileSystem:
    """The provider ``url`` names, built by its scheme's entry of ``PROVIDERS``.

    :param url: a local directory (``/dir``, ``./dir``, ``file:///dir``), ``memory://``
        (``memory://<name>``), ``s3://bucket`` / ``s3://bucket/key/prefix``, or a far side over
        a command channel: ``docker://CONTAINER/path``, ``podman://CONTAINER/path``,
        ``kubectl://POD/path``, ``ssh://[user@]host[:port]/path`` (docs/CHANNELS.md)
    :param profile: ``default`` or ``reference`` (``None`` = default)
    :param root: local: the directory no path may leave (``...``, default: the directory
        itself; ``None``: no containment); memory and S3: the display root (default ``/``)
    :param cwd: the base of relative paths (default: the directory, or the display root)
    :param roots: several directories no path may leave (DEVIATIONS D28,
        ``LocalFileSystem(roots=…)``) instead of ``root``; ``url`` is then the default cwd. S3:
        several ``s3://bucket/prefix`` URLs, ``url`` one of them, each served under
        ``/<last prefix segment>`` (``fs_s3.from_urls``)
    :param options: the provider's other keywords (S3: ``endpoint_url``, ``client_options``…)
    :raises ValueError: an unknown scheme or profile, a malformed URL, a local root that is
        not a directory; ``roots`` with ``root`` or on memory://, or refused by
        ``LocalFileSystem`` / ``S3FileSystem`` (overlapping, too many)
    :raises TypeError: an option the provider does not take
    :raises ImportError: ``s3://`` without the ``[s3]`` extra
    """
    text = os.fspath(url)
    found = _SCHEME.match(text)
    scheme, location = (found.group(1).lower(), text[found.end():]) if found else ("file", text)
    if scheme == "file" and found and not location.startswith("/"):
        raise ValueError(f'open_provider: "{text}" is not an absolute file URL (file:///dir)')
    if roots is not None:
        if scheme not in ("file", "s3", *_CHANNEL_OPTIONS):
            raise ValueError(f'open_provider: roots= applies to a local directory, S3 or a channel, not "{scheme}://"')
        options["roots"] = roots
    opener = PROVIDERS.get(scheme)
    if opener is None:
        known = ", ".join(f"{name}://" for name in sorted(PROVIDERS))
        raise ValueError(f'open_provider: unknown scheme "{scheme}" in "{text}" (a directory, or {known})')
    return opener(location, profile=Profile.parse(profile), root=root, cwd=cwd, **options)
