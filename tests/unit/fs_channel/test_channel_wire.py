"""The channel protocol's frames (``fs_channel.wire``): exact bytes, any chunking of the stream,
strings with lone surrogates, and every malformed stream refused with ``ProtocolError``."""

from __future__ import annotations

import json
import struct

import pytest
from hypothesis import given, settings, strategies as st

from dsh_fs.fs_channel import wire
from dsh_fs.fs_channel.wire import FrameReader, ProtocolError, decode_json, encode_frame

TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)


def test_a_frame_is_its_two_lengths_its_json_and_its_body() -> None:
    frame = encode_frame({"id": 1, "op": "stat"}, b"\x00\x01")
    data = b'{"id":1,"op":"stat"}'
    assert frame == struct.pack(">II", len(data), 2) + data + b"\x00\x01"
    assert encode_frame({"a": "é"}) == struct.pack(">II", 10, 0) + b"{\"a\":\"\xc3\xa9\"}"


def test_a_lone_surrogate_travels_exactly() -> None:
    frame = encode_frame({"s": "a\ud800b\udfffc"})
    [(message, body)] = FrameReader().feed(frame)
    assert message == {"s": "a\ud800b\udfffc"} and body == b""


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.dictionaries(st.text(max_size=5), TEXT, max_size=3), st.binary(max_size=50)),
                min_size=1, max_size=5), st.lists(st.integers(1, 40), max_size=30))
def test_frames_come_out_whole_and_in_order_however_the_stream_is_cut(frames, cuts) -> None:  # type: ignore[no-untyped-def]
    stream = b"".join(encode_frame(m, b) for m, b in frames)
    reader = FrameReader()
    out = []
    at = 0
    for cut in cuts:
        out += reader.feed(stream[at:at + cut])
        at += cut
    out += reader.feed(stream[at:])
    assert out == frames
    assert reader.pending == 0


def test_a_partial_frame_is_held_until_it_is_whole() -> None:
    frame = encode_frame({"id": 7}, b"body")
    reader = FrameReader()
    assert reader.feed(frame[:3]) == []
    assert reader.pending == 3
    assert reader.feed(frame[3:9]) == []
    assert reader.feed(frame[9:]) == [({"id": 7}, b"body")]
    assert reader.pending == 0
    assert reader.feed(b"") == []


def test_lengths_over_the_limits_are_refused_before_anything_is_held(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ProtocolError, match="over the limit"):
        FrameReader().feed(struct.pack(">II", wire.MAX_JSON + 1, 0))
    with pytest.raises(ProtocolError, match="over the limit"):
        FrameReader().feed(struct.pack(">II", 2, wire.MAX_BODY + 1))
    assert FrameReader().feed(struct.pack(">II", 2, 0) + b"{}") == [({}, b"")]
    assert wire.MAX_JSON == wire.MAX_BODY == 1 << 30  # a 256 MiB write's JSON with escapes fits
    monkeypatch.setattr(wire, "MAX_JSON", 2)
    monkeypatch.setattr(wire, "MAX_BODY", 3)
    assert FrameReader().feed(encode_frame({}, b"abc")) == [({}, b"abc")]  # at the limits: accepted
    with pytest.raises(ProtocolError, match="over the limit"):
        encode_frame({"a": 1})
    with pytest.raises(ProtocolError, match="over the limit"):
        encode_frame({}, b"abcd")
    with pytest.raises(ProtocolError):
        FrameReader().feed(struct.pack(">II", 5, 0))


@pytest.mark.parametrize("data", [b"[1]", b"nope", b"\xff{}", b'"x"', b"", b"{"])
def test_a_json_part_that_is_not_one_object_is_refused(data: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_json(data)
    with pytest.raises(ProtocolError):
        FrameReader().feed(struct.pack(">II", len(data), 0) + data)


def test_decode_json_reads_what_encode_frame_wrote() -> None:
    message = {"n": [1, None, True], "s": "\u2028\ud83d"}
    frame = encode_frame(message)
    assert decode_json(frame[wire.HEADER.size:]) == message
    assert json.loads(frame[wire.HEADER.size:].decode("utf-8", "surrogatepass")) == message
