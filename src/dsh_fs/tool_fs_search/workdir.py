"""Where one search runs: a host directory for ripgrep, its path argument, and how printed
paths become display paths (REFERENCE-SPEC §6.3 "Workdir" and "Display paths").

The reference runs ``rg … -- <path>`` in the session's working directory ``W`` and shows what
ripgrep prints relative to ``W``. Here:

* a provider with host paths (the local disk): ripgrep runs in ``W`` itself with the model's
  ``path`` verbatim, so it prints, matches globs and reads ignore files exactly as the
  reference's does — after the provider resolved ``W`` and ``path`` (containment: outside a
  root they are refused with the file tools' ``FS_PERMISSION_DENIED`` message);
* a provider with a search host (a command channel's far side, DEVIATIONS C4): ripgrep runs
  there, in ``W`` with ``path`` verbatim, exactly as on the local disk (the host applies S8);
* any other provider: ripgrep runs in a ``Mirror`` of the searched part, in the mirror's
  stand-in for ``W``, and printed mirror paths are mapped back to display paths;
* a spill artifact (``grep`` on a locator that the workspace provider cannot reach): ripgrep
  runs on the artifact in the spill store's directory, and its path is shown as given.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from ..fs.search_host import SearchHost
from ..tool_common.shown import shown_name
from .denied import HostRules
from .links import LinkFilter
from .mirror import Mirror
from .output import to_workdir_relative

__all__ = ("Space",)


@dataclass(slots=True, kw_only=True)
class Space:
    """One search's place."""

    cwd: str
    """the host directory ripgrep runs in"""
    path_arg: str | None
    """ripgrep's path argument (``None``: search ``cwd``)"""
    workdir: str | None
    """the display path printed paths are made relative to (``None``: shown as printed)"""
    mirror: Mirror | None = None
    """the stand-in directory for a provider without host paths"""
    links: LinkFilter | None = None
    """S8: which printed paths to show when ripgrep follows symlinks on the host"""
    far: SearchHost | None = None
    """the machine where ripgrep runs when it is not this one (a command channel's far side,
    DEVIATIONS C4): ``cwd`` and the paths are its paths, and it applies S8 itself"""
    far_root: str | None = None
    """with ``far``: the containment root the search stays in (S8), ``None``: links not checked"""
    rejected: set[str] | None = None
    """with ``far`` and S8: the printed paths the host did not admit (it names them beside
    the lines that print them)"""
    rules: HostRules | None = None
    """P4: the deployment's path rules on the host (denied paths are never shown)"""
    excludes: tuple[str, ...] = ()
    """P4: ripgrep arguments keeping it out of the denied entries (``denied.deny_globs``),
    given to every ripgrep run of the search"""

    def admit(self, printed: str) -> bool:
        """Whether to show a path ripgrep printed (always, unless links are followed: S8, or
        path rules apply: P4)."""
        if self.rejected and printed in self.rejected:
            return False
        return (self.links is None or self.links.admit(printed)) and (self.rules is None or self.rules.admit(printed))

    def admit_many(self, printed: list[str]) -> list[str]:
        """The paths of ``printed`` that ``admit`` shows, in order (``LinkFilter.admit_many``,
        ``HostRules.admit_many``; on a search host, all but those it did not admit)."""
        if self.rejected:
            printed = [path for path in printed if path not in self.rejected]
        kept = printed if self.links is None else self.links.admit_many(printed)
        return kept if self.rules is None else self.rules.admit_many(kept)

    def shown_many(self, printed: list[str]) -> list[str]:
        """``shown`` of each path of ``printed``, in order. Without a mirror, when no name
        needs quoting (the usual case, told by one look at all of them joined), relative
        printed paths are their own display paths and absolute ones below a (normalized)
        ``workdir`` lose its prefix: what ``shown`` gives each, without a call per path."""
        if self.mirror is None and printed and "".join(printed).isprintable():
            workdir = self.workdir
            joined = "\n" + "\n".join(printed) + "\n"  # no name holds a "\n": all are printable
            if workdir is None or "\n/" not in joined:
                return printed
            prefix = workdir.rstrip("/") + "/"
            if (workdir.startswith("/") and posixpath.normpath(workdir) == workdir.rstrip("/") or workdir == "/") \
                    and joined.count("\n" + prefix) == len(printed) and not any(
                        part in joined for part in ("//", "/./", "/../", "/.\n", "/..\n", "/\n")):
                cut = len(prefix)
                return [path[cut:] for path in printed]
        return [self.shown(path) for path in printed]

    def shown(self, printed: str) -> str:
        """The display form of a path ripgrep printed (§6.3), a name that could forge a line
        quoted (``tool_common.shown``, D22)."""
        if self.mirror is not None:
            printed = self.mirror.unmap(printed)
        return shown_name(printed if self.workdir is None else to_workdir_relative(printed, self.workdir))

    def scrub(self, text: str) -> str:
        """ripgrep's stderr with mirror paths as display paths."""
        return self.mirror.scrub(text) if self.mirror is not None else text

    def host(self, printed: str) -> str:
        """The host path of a path ripgrep printed (relative ones are below ``cwd``)."""
        return posixpath.normpath(posixpath.join(self.cwd, printed))
