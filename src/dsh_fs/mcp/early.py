"""Fast start over stdio (DEVIATIONS M2): answer ``initialize`` while the MCP SDK is imported.

Importing the SDK costs most of ``dsh-fs mcp``'s start-up (``python -X importtime``: about
0.7 s of the 0.9 s to the first answer, before this). A client that starts one server per
tool call pays it on every call. So, over stdio, ``dsh-fs mcp``:

1. starts importing the SDK-side modules (``server``, ``stdio``) in a background thread
   (:func:`import_sdk_in_background`);
2. reads the first line of stdin itself, straight from fd 0 (:func:`answer_first_line`), and,
   if it is an ``initialize`` the SDK-free :func:`handshake.early_reply` accepts, writes the
   SDK's answer to fd 1 at once;
3. hands every byte it read (that ``initialize`` included) to the real transport, which
   gives the request to the SDK as if nothing had happened and drops the SDK's reply to it
   (``stdio.stdio_transport(early=...)``): the SDK's session state, and every later answer,
   are the SDK's own.

No SDK import here. The streamable HTTP transport does not use this (its server is long-lived).
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Final

from .fdio import read_into, write_all
from .handshake import early_reply

__all__ = ("EarlyStart", "answer_first_line", "import_sdk_in_background")

logger = logging.getLogger(__name__)

FIRST_LINE_LIMIT: Final = 1 << 20
"""bytes read at most while looking for the end of the first line (a longer first line is
left to the transport, unanswered early)"""

_SDK_MODULES: Final = ("dsh_fs.mcp.stdio", "dsh_fs.mcp.server")

HOLD_ENV_VAR: Final = "DSH_FS_MCP_TEST_HOLD_IMPORT"
"""a test hook: while the file this names exists, the background import does not start (so a
test can prove an answer was given before the SDK was loaded, ``prelude.py``)"""


@dataclass(frozen=True, slots=True)
class EarlyStart:
    """What the early phase did, for the transport to carry on from."""

    preread: bytes
    """every byte read from stdin so far (the first line included), not yet served"""
    answered_id: str | int | None = None
    """the id of the ``initialize`` answered early (``None``: nothing was answered)"""
    answer: str | None = None
    """the reply line written (no line end), to compare with the SDK's"""


def import_sdk_in_background() -> threading.Thread:
    """Start importing the SDK-side modules in a daemon thread; returns the thread.

    An import error there is left for the importer on the main thread to meet (the modules
    are simply imported again there, and fail the same way). While the file named by
    ``$DSH_FS_MCP_TEST_HOLD_IMPORT`` exists, the import waits (:data:`HOLD_ENV_VAR`).
    """
    hold = os.environ.get(HOLD_ENV_VAR)

    def run() -> None:
        while hold and os.path.exists(hold):
            time.sleep(0.01)
        for name in _SDK_MODULES:
            try:
                importlib.import_module(name)
            except Exception:  # ImportError without the [mcp] extra: raised again where it is used
                logger.debug("background import of %s failed", name, exc_info=True)
                return

    thread = threading.Thread(target=run, name="dsh-fs mcp sdk import", daemon=True)
    thread.start()
    return thread


def answer_first_line(*, version: str, instructions: str | None, stdin_fd: int = 0, stdout_fd: int = 1) -> EarlyStart:
    """Read stdin up to the end of its first line; answer it on stdout if it is an
    ``initialize`` the early path accepts (``handshake.early_reply``).

    Blocks until the first line (or the end of input, or :data:`FIRST_LINE_LIMIT` bytes)
    has arrived, even from a stdin the client made non-blocking (``O_NONBLOCK``); a read error
    after some bytes arrived ends the early phase with those bytes (the transport meets the
    error again), so no byte read is lost. A failure to write the answer (the client has gone) is left to the transport
    to meet again; nothing is answered early then.

    :param version: ``serverInfo.version``
    :param instructions: the server's instructions (``None``: none)
    :raises OSError: stdin cannot be read (before any byte arrived)
    """
    data = bytearray()
    chunk = bytearray(65536)
    while b"\n" not in data and len(data) < FIRST_LINE_LIMIT:
        try:
            count = read_into(stdin_fd, chunk)
        except OSError:
            if not data:
                raise
            break
        if not count:
            break
        data += memoryview(chunk)[:count]
    end = data.find(b"\n")
    if end < 0:
        return EarlyStart(bytes(data))
    early = early_reply(bytes(data[:end]), version=version, instructions=instructions)
    if early is None:
        return EarlyStart(bytes(data))
    request_id, answer = early
    try:
        write_all(stdout_fd, answer.encode("utf-8") + b"\n")
    except OSError:
        logger.debug("could not write the early initialize answer", exc_info=True)
        return EarlyStart(bytes(data))
    return EarlyStart(bytes(data), request_id, answer)

