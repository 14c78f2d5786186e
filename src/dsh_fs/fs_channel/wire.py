"""The frames of the channel protocol (DEVIATIONS C1): how one message travels over a byte stream.

A frame is an 8-byte header — two big-endian unsigned 32-bit lengths, of the JSON part and of
the body — then the JSON part (one UTF-8 JSON object, lone surrogates kept as
``surrogatepass`` bytes so every Python string travels exactly) and the body (raw bytes:
file content read or written as bytes; empty for most messages)::

    +--------+--------+----------------------+------------------+
    | jlen:4 | blen:4 | JSON object (jlen B) | body (blen B)    |
    +--------+--------+----------------------+------------------+

Both sides use this module: the near side (``client``) and the far side's helper (``far``).
The bootstrap program (``boot``) reads and writes the same frames with its own few lines,
since it runs before this package is loaded. Pure: no I/O (``FrameReader`` is fed bytes).
"""

from __future__ import annotations

import json
import struct
from typing import Any

__all__ = (
    "FrameReader",
    "HEADER",
    "MAX_BODY",
    "MAX_JSON",
    "ProtocolError",
    "decode_json",
    "encode_frame",
)

HEADER = struct.Struct(">II")
"""the frame header: JSON length, body length (bytes)"""

MAX_JSON = 1 << 30
"""the largest JSON part accepted (bytes): a write's content travels in it (at most the
providers' ``write_max_size``, 256 MiB by default, as UTF-8 with JSON escapes)"""

MAX_BODY = 1 << 30
"""the largest body accepted (bytes)"""


class ProtocolError(Exception):
    """The byte stream is not a sequence of frames (a length over the limits, a JSON part that
    is not one JSON object): the connection cannot go on."""


def encode_frame(message: dict[str, Any], body: bytes = b"") -> bytes:
    """One frame: ``message`` as JSON, then ``body``.

    :param message: a JSON-serializable mapping (strings may hold lone surrogates)
    :param body: raw bytes carried after the JSON part
    :raises ProtocolError: the JSON part or the body is over its limit
    """
    data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
    if len(data) > MAX_JSON or len(body) > MAX_BODY:
        raise ProtocolError(f"a frame of {len(data)} + {len(body)} bytes is over the limit")
    return HEADER.pack(len(data), len(body)) + data + body


def decode_json(data: bytes) -> dict[str, Any]:
    """The JSON part of a frame as a mapping.

    :raises ProtocolError: not UTF-8 (lone surrogates allowed) or not one JSON object
    """
    try:
        found = json.loads(data.decode("utf-8", "surrogatepass"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError(f"a frame's JSON part cannot be read: {exc}") from None
    if not isinstance(found, dict):
        raise ProtocolError("a frame's JSON part is not an object")
    return found


class FrameReader:
    """Cuts a byte stream into frames: ``feed`` bytes as they arrive, get the complete frames.

    Memory stays bounded by one frame (its lengths are checked against ``MAX_JSON`` and
    ``MAX_BODY`` before anything is held for it) plus what one ``feed`` brought.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._need: tuple[int, int] | None = None

    @property
    def pending(self) -> int:
        """Bytes held that do not make a complete frame yet."""
        return len(self._buffer)

    def feed(self, data: bytes) -> list[tuple[dict[str, Any], bytes]]:
        """Take ``data`` (the next bytes of the stream); return the frames it completed, in order.

        :raises ProtocolError: a header names a length over its limit, or a JSON part is bad
        """
        buffer = self._buffer
        buffer += data
        frames: list[tuple[dict[str, Any], bytes]] = []
        while True:
            need = self._need
            if need is None:
                if len(buffer) < HEADER.size:
                    return frames
                jlen, blen = HEADER.unpack_from(buffer)
                if jlen > MAX_JSON or blen > MAX_BODY:
                    raise ProtocolError(f"a frame header names {jlen} + {blen} bytes, over the limit")
                need = self._need = (jlen, blen)
            jlen, blen = need
            end = HEADER.size + jlen + blen
            if len(buffer) < end:
                return frames
            message = decode_json(bytes(buffer[HEADER.size:HEADER.size + jlen]))
            body = bytes(buffer[HEADER.size + jlen:end])
            del buffer[:end]
            self._need = None
            frames.append((message, body))
