"""What a channel provider says when the channel, not the file, fails (DEVIATIONS C2): the
reasons that fill §1.5 #15's ``cannot <verb> "<dp>": <reason>`` (``FS_IO_ERROR``, as an OS
error's ``strerror`` does, A2), and the texts of the start-up refusals. Every text is written
here once.

::

    could_not_start      the dsh-fs helper could not start over <channel>: <why>
    no_python            there is no <python> on <channel> (the dsh-fs helper needs Python 3.11 or
                         later there): install it there, or name an interpreter with python=
    python_too_old       <python> on <channel> is Python <v>; the dsh-fs helper needs 3.11 or later: …
    lost                 the channel to <channel> closed before the answer (<why>)
    lost_mutation        … ; the file is unchanged or completely written (read it to see which)
    no_answer_after_abort  aborted, and <channel> did not answer within <s> s; the file is
                         unchanged or completely written (read it to see which)
    garbled              the dsh-fs helper on <channel> answered outside the protocol (<detail>)
"""

from __future__ import annotations

from ..fs.errors import FsError, Verb, io_error

__all__ = (
    "ChannelError",
    "MIN_PYTHON",
    "could_not_start",
    "garbled",
    "lost",
    "no_answer_after_abort",
    "no_python",
    "python_too_old",
)

MIN_PYTHON = (3, 11)
"""the oldest far-side Python the helper runs on (dsh-fs's own ``requires-python``)"""

_MUTATIONS = frozenset({"write", "edit", "delete", "rename"})
_UNKNOWN_OUTCOME = "the file is unchanged or completely written (read it to see which)"


class ChannelError(Exception):
    """The channel failed (not a file): ``reason`` completes ``cannot <verb> "<dp>": <reason>``
    once the primitive that met it is known (``as_fs_error``).

    :param reason: the text after ``cannot <verb> "<dp>": ``
    :param before_sent: ``True`` when the request never left this side (the helper could not
        start): nothing on the far side can have changed
    """

    def __init__(self, reason: str, *, before_sent: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.before_sent = before_sent

    def as_fs_error(self, verb: Verb, display: str) -> FsError:
        """``FS_IO_ERROR`` ``cannot <verb> "<dp>": <reason>``; for a mutation whose request may
        have reached the far side, the reason adds that the file is old or new, never torn."""
        reason = self.reason
        if verb in _MUTATIONS and not self.before_sent and _UNKNOWN_OUTCOME not in reason:
            reason = f"{reason}; {_UNKNOWN_OUTCOME}"
        return io_error(verb, display, reason, cause=self)


def could_not_start(channel: str, why: str) -> ChannelError:
    """The helper did not start: the channel's command failed, or the helper refused its settings."""
    return ChannelError(f"the dsh-fs helper could not start over {channel}: {why}", before_sent=True)


def no_python(channel: str, python: str) -> ChannelError:
    """The far side has no such interpreter (the command was not found there)."""
    return ChannelError(f"there is no {python} on {channel} (the dsh-fs helper needs Python "
                        f"{MIN_PYTHON[0]}.{MIN_PYTHON[1]} or later there): install it there, or name an "
                        "interpreter with python=", before_sent=True)


def python_too_old(channel: str, python: str, version: str) -> ChannelError:
    """The far side's interpreter is older than ``MIN_PYTHON``."""
    need = f"{MIN_PYTHON[0]}.{MIN_PYTHON[1]}"
    return ChannelError(f"{python} on {channel} is Python {version}; the dsh-fs helper needs {need} or later: "
                        f"install Python {need} or later there, or name it with python=", before_sent=True)


def lost(channel: str, why: str) -> ChannelError:
    """The channel ended (or failed) while a request was unanswered."""
    return ChannelError(f"the channel to {channel} closed before the answer ({why})")


def no_answer_after_abort(channel: str, seconds: float) -> ChannelError:
    """A mutation was aborted and the far side did not say, within the grace, whether it ran."""
    return ChannelError(f"aborted, and {channel} did not answer within {seconds:g} s; {_UNKNOWN_OUTCOME}")


def garbled(channel: str, detail: str) -> ChannelError:
    """The far side sent something that is not the protocol."""
    return ChannelError(f"the dsh-fs helper on {channel} answered outside the protocol ({detail})")
