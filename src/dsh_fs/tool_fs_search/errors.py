"""``SearchError`` and the texts of search failures (REFERENCE-SPEC §6.3; DEVIATIONS S3, S5).

::

    SEARCH_INVALID_PATTERN      <- ripgrep rejected the regex or glob
    SEARCH_FAILED               <- ripgrep missing or could not start, a nonzero exit, a
                                   signal, malformed --json output
    SEARCH_RAW_OUTPUT_OVERFLOW  <- more raw output than rawOutputMaxBytes
    SEARCH_ABORTED              <- the call's abort signal, or its time budget (timeoutMs)

``unsearchable`` builds the ``FsError`` of a ``path`` argument that names no searchable
target (DEVIATIONS S5). Pure: message builders only. ``search_texts`` (the S3 switch) and
``first_page_on_overflow`` (S4) select the default profile's texts where they differ (no
"bash executor": there is none here).
"""

from __future__ import annotations

import re

from ..core.errors import HarnessError
from ..fs.errors import FsError, FsErrorCode

__all__ = (
    "NARROW",
    "SearchError",
    "aborted",
    "could_not_start",
    "exit_failure",
    "killed",
    "malformed",
    "missing_ripgrep",
    "overflow",
    "stderr_excerpt",
    "timed_out",
    "unsearchable",
)

NARROW = "narrow pattern, path, or include and retry"

_INVALID = re.compile(r"regex parse error|error parsing glob", re.IGNORECASE)
_NOT_FOUND = re.compile(r"command not found", re.IGNORECASE)


class SearchError(HarnessError):
    """A search failure with a stable ``SEARCH_*`` code; ``str(err)`` is the model-facing text."""


def aborted(tool: str) -> SearchError:
    """The call's abort signal fired (caller cancellation, or an outer timeout policy)."""
    return SearchError(f"{tool} was aborted before completion (tool timeout or caller cancellation)", "SEARCH_ABORTED")


def timed_out(tool: str, timeout_ms: int, *, search_texts: bool) -> SearchError:
    """The call used up its ``timeoutMs``. Reference: the timeout policy aborts the signal,
    so the text is ``aborted``'s; default profile (S3): it says what happened and what to do."""
    if not search_texts:
        return aborted(tool)
    return SearchError(f"{tool} timed out after {timeout_ms}ms; {NARROW}", "SEARCH_ABORTED")


def could_not_start(tool: str, reason: str | None, *, search_texts: bool) -> SearchError:
    """ripgrep could not be started (unusable working directory, exec failure)."""
    if not search_texts or not reason:
        return SearchError(
            f"{tool} could not start its search command (unusable working directory or missing shell)", "SEARCH_FAILED"
        )
    return SearchError(f"{tool} could not start ripgrep: {reason}", "SEARCH_FAILED")


def missing_ripgrep(tool: str, hint: str, *, search_texts: bool) -> SearchError:
    """Neither the ripgrep wheel nor ``rg`` on PATH (reference: the shell's exit 127)."""
    if not search_texts:
        return SearchError(f"{tool} requires ripgrep (rg) on the bash executor's PATH", "SEARCH_FAILED")
    return SearchError(f"{tool} requires ripgrep (rg): {hint}", "SEARCH_FAILED")


def killed(tool: str, signal_name: str | None) -> SearchError:
    """ripgrep died of a signal we did not send."""
    return SearchError(f"{tool} search command was killed by signal {signal_name or '(unknown)'}", "SEARCH_FAILED")


def stderr_excerpt(text: str, truncated: bool) -> str:
    """The trimmed retained stderr, `` [stderr truncated]`` when its head was dropped."""
    text = text.strip()
    if not text:
        return ""
    return f"{text} [stderr truncated]" if truncated else text


MULTILINE_ADVICE = (
    'pattern rejected: it matches a line break ("\\n"), and grep searches one line at a time; search for '
    "one line of it, then read the file around the match"
)
"""DEVIATIONS S12: the text after ``<tool> `` for a pattern ripgrep refuses without ``--multiline``"""
_MULTILINE = re.compile(r"--multiline")


def multiline_refusal(tool: str, stderr: str) -> SearchError | None:
    """S12: ``SEARCH_INVALID_PATTERN`` ``<tool> pattern rejected: it matches a line break …``
    when ripgrep's ``stderr`` advises ``--multiline`` (a flag the tool does not have), else
    ``None``."""
    if not _MULTILINE.search(stderr):
        return None
    return SearchError(f"{tool} {MULTILINE_ADVICE}", "SEARCH_INVALID_PATTERN")


def exit_failure(tool: str, code: int, stderr: str, *, search_texts: bool) -> SearchError:
    """A ripgrep exit other than 0 and 1, classified by its stderr (§6.3)."""
    if _INVALID.search(stderr):
        return SearchError(f"{tool} pattern rejected by ripgrep: {stderr}", "SEARCH_INVALID_PATTERN")
    if code == 127 or _NOT_FOUND.search(stderr):
        place = "" if search_texts else " on the bash executor's PATH"
        return SearchError(f"{tool} requires ripgrep (rg){place}{': ' + stderr if stderr else ''}", "SEARCH_FAILED")
    return SearchError(f"{tool} search failed (exit {code}){': ' + stderr if stderr else ''}", "SEARCH_FAILED")


def overflow(tool: str, cap: int, produced: int | None = None, *, first_page_on_overflow: bool = False) -> SearchError:
    """More raw output than ``cap`` bytes: retained-truncated (``produced`` unknown), or a
    complete output that decodes to more than ``cap`` bytes."""
    if produced is None and first_page_on_overflow:
        return SearchError(f"{tool} produced more than {cap} bytes of raw output; {NARROW}",
                           "SEARCH_RAW_OUTPUT_OVERFLOW")
    if produced is None:
        return SearchError(
            f"{tool} produced more raw output than the bash executor retained within the {cap}-byte cap; {NARROW}",
            "SEARCH_RAW_OUTPUT_OVERFLOW",
        )
    return SearchError(f"{tool} produced {produced} bytes of raw output, over the {cap}-byte cap; {NARROW}",
                       "SEARCH_RAW_OUTPUT_OVERFLOW")


def busy(tool: str, running: int, waiting: int) -> SearchError:
    """This owner already has ``running`` searches running and ``waiting`` waiting (D23)."""
    return SearchError(
        f"{tool} refused: this session already has {running} searches running and {waiting} waiting;"
        " wait for them to finish, then retry",
        "SEARCH_FAILED",
    )


def malformed(detail: str) -> SearchError:
    """An ``rg --json`` record of an unexpected shape (§6.2)."""
    return SearchError(f"grep received malformed ripgrep --json output ({detail})", "SEARCH_FAILED")


_UNSEARCHABLE = {
    FsErrorCode.NOT_REGULAR_FILE: "not a regular file or directory",
    FsErrorCode.NOT_FOUND: "not found",
    FsErrorCode.NOT_DIRECTORY: "not a directory",
}


def unsearchable(display: str, code: FsErrorCode) -> FsError:
    """``cannot search "<display>": <why>`` for a ``path`` that is a FIFO, device or socket
    (``FS_NOT_REGULAR_FILE``: ripgrep would block on it), missing (``FS_NOT_FOUND``) or, for
    ``glob``, a file (``FS_NOT_DIRECTORY``) — DEVIATIONS S5.

    :raises KeyError: for any other code
    """
    return FsError(f'cannot search "{display}": {_UNSEARCHABLE[code]}', code)
