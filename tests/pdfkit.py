"""Real PDF files for the ``read_pdf`` tests, written here byte by byte (imported as ``pdfkit``;
no tests here): PDF 1.4 with a cross-reference table, one standard font (Helvetica, WinAnsi
text), pages of text, pages that only draw an image (a "scan"), blank pages; ``encrypted``
uses pypdf to add a user password. The hostile ones: ``many_pages`` (100,000 pages sharing one
content stream), ``deep_pages`` (a page tree nested ``depth`` levels), ``inflating`` (a content
stream that decompresses to ``size`` bytes, from a few kilobytes: FlateDecode twice).
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Sequence

__all__ = ("Scan", "deep_pages", "encrypted", "inflating", "many_pages", "pdf", "text_pages", "zeros_stream")


class Scan:
    """A page that only draws an RGB image (``width`` × ``height`` pixels), like a scanned page."""

    def __init__(self, width: int = 60, height: int = 80, colour: tuple[int, int, int] = (90, 90, 90)) -> None:
        self.width, self.height, self.colour = width, height, colour


def _escape(text: str) -> bytes:
    data = text.encode("cp1252")
    return data.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def _stream(dictionary: bytes, data: bytes) -> bytes:
    return b"<< " + dictionary + b" /Length " + str(len(data)).encode() + b" >>\nstream\n" + data + b"\nendstream"


class _Writer:
    def __init__(self) -> None:
        self.objects: list[bytes | None] = []

    def reserve(self) -> int:
        self.objects.append(None)
        return len(self.objects)

    def set(self, number: int, body: bytes) -> int:
        self.objects[number - 1] = body
        return number

    def add(self, body: bytes) -> int:
        return self.set(self.reserve(), body)

    def bytes(self, root: int) -> bytes:
        out = io.BytesIO()
        out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
        offsets = []
        for number, body in enumerate(self.objects, start=1):
            offsets.append(out.tell())
            out.write(f"{number} 0 obj\n".encode() + (body or b"null") + b"\nendobj\n")
        xref = out.tell()
        out.write(f"xref\n0 {len(self.objects) + 1}\n0000000000 65535 f \n".encode())
        for offset in offsets:
            out.write(f"{offset:010d} 00000 n \n".encode())
        out.write(f"trailer\n<< /Size {len(self.objects) + 1} /Root {root} 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
        return out.getvalue()


def _text_content(text: str) -> bytes:
    lines = text.split("\n")
    ops = [b"BT /F1 11 Tf 72 760 Td 14 TL"]
    for index, line in enumerate(lines):
        ops.append((b"T* " if index else b"") + b"(" + _escape(line) + b") Tj")
    ops.append(b"ET")
    return b"\n".join(ops)


def pdf(pages: Sequence[str | Scan | None]) -> bytes:
    """A PDF of ``pages``: text (lines, cp1252 characters), a ``Scan``, or ``None`` (blank)."""
    w = _Writer()
    catalog, tree = w.reserve(), w.reserve()
    font = w.add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    kids = []
    for page in pages:
        resources = f"<< /Font << /F1 {font} 0 R >> >>".encode()
        if isinstance(page, Scan):
            pixels = bytes(page.colour) * (page.width * page.height)
            image = w.add(_stream(f"/Type /XObject /Subtype /Image /Width {page.width} /Height {page.height} "
                                  "/ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode".encode(),
                                  zlib.compress(pixels)))
            content = b"q 612 0 0 792 0 0 cm /Im1 Do Q"
            resources = f"<< /XObject << /Im1 {image} 0 R >> >>".encode()
        elif page is None:
            content = b""
        else:
            content = _text_content(page)
        stream = w.add(_stream(b"", content))
        kids.append(w.add(f"<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 612 792] /Contents {stream} 0 R "
                          f"/Resources ".encode() + resources + b" >>"))
    w.set(tree, f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] /Count {len(kids)} >>".encode())
    w.set(catalog, f"<< /Type /Catalog /Pages {tree} 0 R >>".encode())
    return w.bytes(catalog)


def text_pages(count: int, *, words: int = 40) -> bytes:
    """``count`` pages of text; page ``n`` says ``Page n`` then ``words`` words."""
    return pdf([f"Page {n}\n" + " ".join(f"word{n}-{i}" for i in range(words)) for n in range(1, count + 1)])


def many_pages(count: int) -> bytes:
    """``count`` pages that share one font and one content stream (``Same text``)."""
    w = _Writer()
    catalog, tree = w.reserve(), w.reserve()
    font = w.add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    stream = w.add(_stream(b"", _text_content("Same text")))
    resources = f"<< /Font << /F1 {font} 0 R >> >>"
    kids = [w.add(f"<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 612 792] /Contents {stream} 0 R "
                  f"/Resources {resources} >>".encode()) for _ in range(count)]
    w.set(tree, f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] /Count {count} >>".encode())
    w.set(catalog, f"<< /Type /Catalog /Pages {tree} 0 R >>".encode())
    return w.bytes(catalog)


def deep_pages(depth: int) -> bytes:
    """One page at the bottom of a page tree ``depth`` levels deep."""
    w = _Writer()
    catalog = w.reserve()
    nodes = [w.reserve() for _ in range(depth)]
    stream = w.add(_stream(b"", _text_content("Deep")))
    page = w.add(f"<< /Type /Page /Parent {nodes[-1]} 0 R /MediaBox [0 0 612 792] /Contents {stream} 0 R >>".encode())
    for index, node in enumerate(nodes):
        child = nodes[index + 1] if index + 1 < depth else page
        parent = f"/Parent {nodes[index - 1]} 0 R " if index else ""
        w.set(node, f"<< /Type /Pages {parent}/Kids [{child} 0 R] /Count 1 >>".encode())
    w.set(catalog, f"<< /Type /Catalog /Pages {nodes[0]} 0 R >>".encode())
    return w.bytes(catalog)


def _adler_combine(first: int, second: int, length: int) -> int:
    """zlib's ``adler32_combine``: the Adler-32 of two byte strings end to end, from theirs."""
    base = 65521
    rem = length % base
    sum1 = first & 0xFFFF
    sum2 = (rem * sum1) % base
    sum1 += (second & 0xFFFF) + base - 1
    sum2 += ((first >> 16) & 0xFFFF) + ((second >> 16) & 0xFFFF) + base - rem
    sum1 -= base if sum1 >= base else 0
    sum1 -= base if sum1 >= base else 0
    sum2 -= 2 * base if sum2 >= 2 * base else 0
    sum2 -= base if sum2 >= base else 0
    return sum1 | (sum2 << 16)


def zeros_stream(size: int) -> bytes:
    """A zlib stream that inflates to ``size`` spaces (a multiple of 1 MiB), built without
    compressing them all: after a full flush each 1 MiB block compresses to the same bytes, so
    the stream repeats them, with the checksum combined."""
    chunk = b" " * (1 << 20)
    count = size // len(chunk)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    steady = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    assert c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH) == steady
    end = c.flush(zlib.Z_FINISH)
    one = zlib.adler32(chunk)
    total, block, length, left = 1, one, len(chunk), count  # adler32 of count chunks, by doubling
    total = None
    while left:
        if left & 1:
            total = block if total is None else _adler_combine(total, block, length)
        block, length, left = _adler_combine(block, block, length), 2 * length, left >> 1
    body = b"\x78\xda" + first + steady * (count - 1) + end
    return body + (total or 1).to_bytes(4, "big")


def inflating(size: int) -> bytes:
    """One page whose content stream decompresses to ``size`` bytes of spaces (a multiple of
    1 MiB; FlateDecode applied twice: the file stays a few kilobytes)."""
    twice = zlib.compress(zeros_stream(size), 9)
    w = _Writer()
    catalog, tree = w.reserve(), w.reserve()
    stream = w.add(_stream(b"/Filter [/FlateDecode /FlateDecode]", twice))
    page = w.add(f"<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 612 792] /Contents {stream} 0 R >>".encode())
    w.set(tree, f"<< /Type /Pages /Kids [{page} 0 R] /Count 1 >>".encode())
    w.set(catalog, f"<< /Type /Catalog /Pages {tree} 0 R >>".encode())
    return w.bytes(catalog)


def encrypted(data: bytes, password: str = "secret") -> bytes:
    """``data`` encrypted with a user password (pypdf)."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=password, owner_password=password + "-owner")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
