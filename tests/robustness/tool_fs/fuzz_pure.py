"""An atheris (libFuzzer) target for the pure text modules (tracker issue 4, item 5, optional).

Run: ``python tests/robustness/tool_fs/fuzz_pure.py -runs=100000`` (``test_hostile_args`` runs it
briefly when atheris is installed). Properties, for any input bytes:

* ``decode_text`` and ``TextStreamDecoder`` fed the same bytes in arbitrary chunks agree:
  the same text, or both ``NotTextError`` — with the same message whenever the first chunk
  holds the whole NUL sample, as every real stream does (its chunks are 1 MiB; with smaller
  ones an invalid byte before a NUL of a later chunk is reported first) (REFERENCE-SPEC §2.5);
* ``plan_edit`` fails only with ``EditFailure``; a plan's ``before`` is the normalized input;
* ``node_resolve`` always returns an absolute, normalized path (no ``.``/``..``/empty
  segments), whatever the string (NUL, surrogates included);
* ``WindowBuilder`` windows any text for any valid window without raising anything but the
  offset-out-of-range ``FsError``, and ``format_read_output`` renders the result;
* ``check_positive_integer`` returns an ``int`` ≥ 1 or raises ``ToolInputError``.
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    from dsh_fs.fs.errors import FsError
    from dsh_fs.fs.literal_edit import EditFailure, plan_edit
    from dsh_fs.fs.paths import node_resolve
    from dsh_fs.fs.text import NUL_SAMPLE, NotTextError, TextStreamDecoder, decode_text, normalize
    from dsh_fs.fs.window import ReadWindow, WindowBuilder
    from dsh_fs.core.errors import ToolInputError
    from dsh_fs.tool_fs.args import check_positive_integer
    from dsh_fs.tool_fs.read_render import format_read_output


def _decode_both(raw: bytes, cuts: list[int], foreign: bool) -> None:
    try:
        whole: str | None = decode_text(raw, foreign_boms=foreign)
        whole_error = None
    except NotTextError as exc:
        whole, whole_error = None, exc.message(True)
    decoder = TextStreamDecoder(foreign_boms=foreign)
    pieces: list[str] = []
    bounds = sorted(c % (len(raw) + 1) for c in cuts) + [len(raw)]
    try:
        start = 0
        for cut in bounds:
            pieces.append(decoder.feed(raw[start:cut]))
            start = cut
        pieces.append(decoder.finish())
        streamed: str | None = "".join(pieces)
        stream_error = None
    except NotTextError as exc:
        streamed, stream_error = None, exc.message(True)
    assert whole == streamed, (raw, cuts, whole_error, stream_error)
    if next((b for b in bounds if b > 0), 0) >= min(len(raw), NUL_SAMPLE):
        assert whole_error == stream_error, (raw, cuts, whole_error, stream_error)


def _edit(fdp: atheris.FuzzedDataProvider) -> None:
    raw = fdp.ConsumeUnicodeNoSurrogates(200)
    old = fdp.ConsumeUnicodeNoSurrogates(10)
    new = fdp.ConsumeUnicodeNoSurrogates(10)
    try:
        plan = plan_edit(raw, old, new, fdp.ConsumeBool(), keep_bytes=fdp.ConsumeBool())
    except EditFailure:
        return
    assert plan.before == normalize(raw)
    assert isinstance(plan.text, str) and isinstance(plan.after, str)


def _resolve(fdp: atheris.FuzzedDataProvider) -> None:
    base = "/" + fdp.ConsumeUnicode(20).replace("\0", "")
    path = fdp.ConsumeUnicode(40)
    out = node_resolve(base, path)
    assert out.startswith("/"), out
    segments = out.split("/")[1:]
    assert out == "/" or all(s not in ("", ".", "..") for s in segments), out


def _window(fdp: atheris.FuzzedDataProvider) -> None:
    window = ReadWindow(
        offset=fdp.ConsumeIntInRange(1, 50),
        limit=fdp.ConsumeIntInRange(1, 50),
        max_line_length=fdp.ConsumeIntInRange(1, 50),
        max_bytes=fdp.ConsumeIntInRange(1, 500),
        always_progress=fdp.ConsumeBool(),
        exact_truncation=fdp.ConsumeBool(),
    )
    text = fdp.ConsumeUnicodeNoSurrogates(400)
    builder = WindowBuilder(window)
    step = fdp.ConsumeIntInRange(1, 64)
    for i in range(0, len(text), step):
        if not builder.feed(text[i : i + step]):
            break
    try:
        result = builder.finish("/f")
    except FsError as exc:
        assert exc.code == "FS_NOT_FOUND" and "is out of range" in exc.message, exc
        return
    assert format_read_output("/f", result).startswith("<path>/f</path>\n<type>file</type>\n<content>\n")


def _integer(fdp: atheris.FuzzedDataProvider) -> None:
    value: int | float = fdp.ConsumeInt(16) if fdp.ConsumeBool() else fdp.ConsumeRegularFloat()
    try:
        out = check_positive_integer("offset", value)
    except ToolInputError:
        return
    assert type(out) is int and out >= 1


def one_input(data: bytes) -> None:
    """One libFuzzer input: the first byte picks the property, the rest feeds it."""
    fdp = atheris.FuzzedDataProvider(data)
    choice = fdp.ConsumeIntInRange(0, 4)
    if choice == 0:
        cuts = [fdp.ConsumeIntInRange(0, 1 << 14) for _ in range(fdp.ConsumeIntInRange(0, 4))]
        foreign = fdp.ConsumeBool()
        _decode_both(fdp.ConsumeBytes(fdp.remaining_bytes()), cuts, foreign)
    elif choice == 1:
        _edit(fdp)
    elif choice == 2:
        _resolve(fdp)
    elif choice == 3:
        _window(fdp)
    else:
        _integer(fdp)


if __name__ == "__main__":
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()
