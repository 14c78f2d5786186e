"""``tool_common.shown.shown_name`` (D22): a name that could end or rewrite a line is printed as a JSON
string literal; any other name is printed as it is."""

from __future__ import annotations

import json
import unicodedata

from hypothesis import given, strategies as st

from dsh_fs.tool_common.shown import needs_quoting, shown_name


def test_examples() -> None:
    assert shown_name("src/a.ts") == "src/a.ts"
    assert shown_name("caf\u00e9 \u00a0x.txt") == "caf\u00e9 \u00a0x.txt"  # visible: as is
    assert shown_name("a\nLine 1: x") == '"a\\nLine 1: x"'
    assert shown_name('t\tq"\\') == '"t\\tq\\"\\\\"'
    assert shown_name("\x1b[2K\x7f\x85\u2028") == '"\\u001b[2K\\u007f\\u0085\\u2028"'


def test_D22_format_characters_are_escaped() -> None:
    """Bidi overrides and isolates, zero-width characters, U+2060 and U+FEFF (Unicode ``Cf``)
    change how a name reads without being seen: the name is quoted and they are escaped."""
    assert shown_name("report\u202egnp.exe") == '"report\\u202egnp.exe"'
    assert shown_name("a\u200bb.txt") == '"a\\u200bb.txt"'
    assert shown_name("\u2066x\u2069\u200c\u200d\u2060\ufeff\u200e") == (
        '"\\u2066x\\u2069\\u200c\\u200d\\u2060\\ufeff\\u200e"')
    assert shown_name("tag\U000e0041.txt") == '"tag\\udb40\\udc41.txt"'  # beyond U+FFFF: a UTF-16 pair, as JSON
    assert json.loads(shown_name("tag\U000e0041.txt")) == "tag\U000e0041.txt"


@given(st.text())
def test_no_line_can_be_forged_and_the_name_is_recoverable(name: str) -> None:
    shown = shown_name(name)
    assert not any(unicodedata.category(ch) in ("Cc", "Zl", "Zp", "Cf") for ch in shown)
    assert len(shown.splitlines()) <= 1
    if needs_quoting(name):
        assert json.loads(shown) == name
    else:
        assert shown == name
