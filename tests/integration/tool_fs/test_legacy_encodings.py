"""Legacy encodings through the registry (docs/ENCODINGS.md; DEVIATIONS F7–F10): ``read`` says the
encoding, ``edit`` changes only the replaced bytes (checked here by comparing every other byte
of the file on disk), ``write`` keeps the encoding, unencodable characters and edits a codec
cannot make byte-exact are refused with the file untouched — on the local disk and in memory,
under a sandbox too. Without ``encodings`` nothing changes (the conformance corpus runs that).
S3: tests/s3/test_s3_formats.py; MCP: tests/e2e/mcp/test_mcp_formats.py."""

from __future__ import annotations

import codecs
import os

import pytest

import dsh_fs
from dsh_fs import Session, create_context
from dsh_fs.fs_memory import MemoryFileSystem

pytestmark = pytest.mark.anyio

ENCODINGS = ["shift_jis", "gb18030", "cp1252"]


def put(ws: str, name: str, data: bytes) -> str:
    path = os.path.join(ws, name)
    with open(path, "wb") as handle:
        handle.write(data)
    return path


def on_disk(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def envelope(path: str, lines: list[str], encoding: str) -> str:
    body = "\n".join(f"{n}: {line}" for n, line in enumerate(lines, start=1))
    return (f"<path>{path}</path>\n<type>file</type>\n<content>\n{body}\n\n(End of file - total {len(lines)} lines)\n"
            f"(This file is {encoding} text, not UTF-8: edit and write keep it in {encoding}.)\n</content>")


@pytest.fixture
def ctx(ws: str) -> dsh_fs.Context:
    return create_context(cwd=ws, encodings=ENCODINGS)


async def read(ctx: dsh_fs.Context, name: str, session: Session | None = None) -> dsh_fs.ToolResult:
    return await ctx.tools.execute("read", {"file_path": name}, session=session)


@pytest.mark.parametrize(("encoding", "lines"), [
    ("shift_jis", ["日本語のファイル", "二行目です"]),
    ("gb18030", ["中文文件", "第二行𠀀"]),
    ("cp1252", ["Café crème", "naïve — déjà vu €"]),
])
async def test_F7_read_says_the_encoding(ws: str, ctx: dsh_fs.Context, encoding: str, lines: list[str]) -> None:
    path = put(ws, "a.txt", "\n".join(lines).encode(encoding) + b"\n")
    assert (await read(ctx, "a.txt")).text == envelope(path, lines, encoding)


async def test_without_encodings_nothing_changes(ws: str, ctx: dsh_fs.Context) -> None:
    path = put(ws, "w.txt", b"line1\nBrand\x99\nline3\n")
    plain = await read(create_context(cwd=ws), "w.txt")
    assert plain.text == f'Error: cannot read "{path}": invalid UTF-8 text (byte 0x99 at offset 11, line 2)'
    utf8 = put(ws, "u.txt", "déjà\n".encode())
    assert (await read(ctx, "u.txt")).text == (f"<path>{utf8}</path>\n<type>file</type>\n<content>\n1: déjà\n\n"
                                              "(End of file - total 1 lines)\n</content>")
    put(ws, "bad.txt", b"\x81\x81\x81\xff\n")
    refused = await read(ctx, "bad.txt")
    assert refused.text == (f'Error: cannot read "{ws}/bad.txt": invalid UTF-8 text (byte 0x81 at offset 0, line 1; '
                            "not shift_jis, gb18030, cp1252 text either)")
    put(ws, "nul.txt", b"caf\xe9\x00\n")
    assert "binary file (NUL byte at offset 4" in (await read(ctx, "nul.txt")).text
    reference = await read(create_context(cwd=ws, encodings=["cp1252"], profile="reference"), "w.txt")
    assert reference.text.endswith("(This file is cp1252 text, not UTF-8: edit and write keep it in cp1252.)\n</content>")


async def test_F9_edit_changes_only_the_replaced_bytes(ws: str, ctx: dsh_fs.Context) -> None:
    text = "一行目\r\n置き換える行\r\n三行目\r\n" * 3
    before = text.encode("shift_jis")
    path = put(ws, "sj.txt", before)
    session = Session(cwd=ws)
    await read(ctx, "sj.txt", session)
    result = await ctx.tools.execute("edit", {"file_path": "sj.txt", "old_string": "置き換える行\n三行目\r\n一行目",
                                              "new_string": "新しい\n行", "replace_all": True}, session=session)
    assert not result.is_error, result.text
    after = on_disk(path)
    assert after == text.replace("置き換える行\r\n三行目\r\n一行目", "新しい\r\n行").encode("shift_jis")
    old = "置き換える行\r\n三行目\r\n一行目".encode("shift_jis")
    assert after.split("新しい\r\n行".encode("shift_jis")) == before.split(old)  # every other byte is the file's
    assert result.meta["diffs"] and "新しい" in result.meta["diffs"][0]["newText"]


async def test_F8_write_keeps_the_encoding_and_line_breaks(ws: str, ctx: dsh_fs.Context) -> None:
    path = put(ws, "w.txt", "Café\r\nold\r\n".encode("cp1252"))
    session = Session(cwd=ws)
    await read(ctx, "w.txt", session)
    assert not (await ctx.tools.execute("write", {"file_path": "w.txt", "content": "Déjà\nvu €\n"},
                                        session=session)).is_error
    assert on_disk(path) == "Déjà\r\nvu €\r\n".encode("cp1252")
    new = await ctx.tools.execute("write", {"file_path": "new.txt", "content": "Déjà\n"}, session=session)
    assert not new.is_error and on_disk(os.path.join(ws, "new.txt")) == "Déjà\n".encode()  # new files: UTF-8


async def test_F7_unencodable_characters_are_refused_with_their_name_and_place(ws: str, ctx: dsh_fs.Context) -> None:
    before = "Café\nline two\n".encode("cp1252")
    path = put(ws, "w.txt", before)
    session = Session(cwd=ws)
    await read(ctx, "w.txt", session)
    edit = await ctx.tools.execute("edit", {"file_path": "w.txt", "old_string": "two", "new_string": "2\n→ 日"},
                                   session=session)
    assert edit.error is not None and edit.error.code == "FS_NOT_TEXT"
    assert edit.text == (f'Error: cannot edit "{path}": U+2192 (RIGHTWARDS ARROW) at line 2, column 1 of new_string '
                         "cannot be written in cp1252, the file's encoding; nothing was written")
    write = await ctx.tools.execute("write", {"file_path": "w.txt", "content": "ok\nstill ok\nnot ok: 日本\n"},
                                    session=session)
    assert write.text == (f'Error: cannot write "{path}": U+65E5 (CJK UNIFIED IDEOGRAPH-65E5) at line 3, column 9 of '
                          "content cannot be written in cp1252, the file's encoding; nothing was written")
    assert on_disk(path) == before


def _toggle_codec(name: str) -> codecs.CodecInfo | None:
    """A test codec whose bytes are not a character's each: a run of Greek small letters is
    written as ASCII letters between two 0x80 bytes (``"aβγb"`` → ``b"a\\x80bg\\x80b"``), so the
    bytes of a replaced letter depend on its neighbours."""
    if name != "toggle_test":
        return None

    def encode(text: str, errors: str = "strict") -> tuple[bytes, int]:
        out, greek = bytearray(), False
        for index, ch in enumerate(text):
            if "α" <= ch <= "ω":
                if not greek:
                    out.append(0x80)
                greek = True
                out.append(ord("a") + ord(ch) - ord("α"))
                continue
            if ord(ch) >= 0x80:
                raise UnicodeEncodeError(name, text, index, index + 1, "not in toggle_test")
            if greek:
                out.append(0x80)
            greek = False
            out.append(ord(ch))
        if greek:
            out.append(0x80)
        return bytes(out), len(text)

    def decode(data: bytes, errors: str = "strict") -> tuple[str, int]:
        out, greek = [], False
        for index, byte in enumerate(bytes(data)):
            if byte == 0x80:
                greek = not greek
            elif byte > 0x80 or (greek and not 0x61 <= byte <= 0x79):
                raise UnicodeDecodeError(name, bytes(data), index, index + 1, "not in toggle_test")
            else:
                out.append(chr(ord("α") + byte - 0x61) if greek else chr(byte))
        return "".join(out), len(data)

    return codecs.CodecInfo(encode, decode, name="toggle_test")


codecs.register(_toggle_codec)


async def test_F9_an_edit_a_codec_cannot_make_byte_exact_is_refused(ws: str) -> None:
    before = "one αβγ two\n".encode("toggle_test")
    assert before == b"one \x80abc\x80 two\n"
    path = put(ws, "t.txt", before)
    ctx, session = create_context(cwd=ws, encodings=["toggle_test"]), Session(cwd=ws)
    assert (await read(ctx, "t.txt", session)).text == envelope(path, ["one αβγ two"], "toggle_test")
    refused = await ctx.tools.execute("edit", {"file_path": "t.txt", "old_string": "β", "new_string": "δ"},
                                      session=session)
    assert refused.text == (f'Error: cannot edit "{path}": in toggle_test this edit would change bytes outside the '
                            "replaced text; nothing was written")
    assert on_disk(path) == before
    fine = await ctx.tools.execute("edit", {"file_path": "t.txt", "old_string": "two", "new_string": "2"},
                                   session=session)
    assert not fine.is_error and on_disk(path) == b"one \x80abc\x80 2\n"


async def test_edit_refusals_are_the_usual_ones(ws: str, ctx: dsh_fs.Context) -> None:
    path = put(ws, "w.txt", "Café Café\n".encode("cp1252"))
    session = Session(cwd=ws)
    await read(ctx, "w.txt", session)
    ambiguous = await ctx.tools.execute("edit", {"file_path": "w.txt", "old_string": "Café", "new_string": "X"},
                                        session=session)
    assert ambiguous.error is not None and ambiguous.error.code == "FS_AMBIGUOUS_EDIT"
    missing = await ctx.tools.execute("edit", {"file_path": "w.txt", "old_string": "Cafe", "new_string": "X"},
                                      session=session)
    assert missing.error is not None and missing.error.code == "FS_EDIT_NOT_FOUND"
    assert on_disk(path) == "Café Café\n".encode("cp1252")


async def test_on_the_memory_provider_and_under_a_sandbox(ws: str) -> None:
    data = "中文\r\n".encode("gb18030")
    fs = MemoryFileSystem(files={"/w/a.txt": data}, cwd="/w", encodings=["gb18030"])
    ctx, session = create_context(provider=fs, search=False), Session(cwd="/w")
    assert (await read(ctx, "a.txt", session)).text == envelope("/w/a.txt", ["中文"], "gb18030")
    assert not (await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "文", "new_string": "国"},
                                        session=session)).is_error
    assert fs.get("/w/a.txt") == "中国\r\n".encode("gb18030")
    path = put(ws, "s.txt", "日本\n".encode("shift_jis"))
    sandboxed = create_context(cwd=ws, encodings=["shift_jis"], sandbox="workspace-write")
    assert (await read(sandboxed, "s.txt")).text == envelope(path, ["日本"], "shift_jis")
    with pytest.raises(ValueError, match="encodings= applies to the built-in provider"):
        create_context(provider=MemoryFileSystem(), encodings=["cp1252"])
    with pytest.raises(ValueError, match="encodings= is a list"):
        create_context(cwd=ws, encodings="cp1252")  # type: ignore[arg-type]
