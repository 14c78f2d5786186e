"""``fs.shown.shown_name`` (D22): a name that could end or rewrite a line is printed as a JSON
string literal; any other name is printed as it is."""

from __future__ import annotations

import json
import unicodedata

from hypothesis import given, strategies as st

from dsh_fs.fs.shown import needs_quoting, shown_name


def test_examples() -> None:
    assert shown_name("src/a.ts") == "src/a.ts"
    assert shown_name("caf\u00e9 \u00a0x\u200b.txt") == "caf\u00e9 \u00a0x\u200b.txt"  # visible or harmless: as is
    assert shown_name("a\nLine 1: x") == '"a\\nLine 1: x"'
    assert shown_name('t\tq"\\') == '"t\\tq\\"\\\\"'
    assert shown_name("\x1b[2K\x7f\x85\u2028") == '"\\u001b[2K\\u007f\\u0085\\u2028"'


@given(st.text())
def test_no_line_can_be_forged_and_the_name_is_recoverable(name: str) -> None:
    shown = shown_name(name)
    assert not any(unicodedata.category(ch) in ("Cc", "Zl", "Zp") for ch in shown)
    assert len(shown.splitlines()) <= 1
    if needs_quoting(name):
        assert json.loads(shown) == name
    else:
        assert shown == name
