"""Unit tests for ``dsh_fs.tool_fs.hints`` (DEVIATIONS D5, D18: near-match hints for a failed edit).

Covers: one exact hint per difference class (indentation, trailing whitespace, spacing runs,
bare/stray carriage returns, Unicode spaces, quotes/dashes/ellipsis, invisible characters,
NFC vs NFD, final/leading newline, read line-number prefixes, letter case, the closest-line
fallback), D18 (two differences at once — a copying mistake of old_string plus any other;
``\\n`` typed for a line break; whitespace of any kind; an edit already applied), the inputs
of the three D5 conformance cases (hard-coded, and re-read from the shared corpus when it is
present), the None cases (unrelated, literal occurrence, bounds, budget), the work budget
(counted, never timed: adversarial inputs stay within it and give the same answer every
time), and property tests (a hint never comes with a literal occurrence, never raises, is
always one printable line, and its line number is the real first normalized occurrence).

Not covered here: how the ``edit`` tool appends the hint to its error (tool tests and the
conformance suite).
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import pkgutil
import re
import unicodedata

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dsh_fs.tool_fs import hints as hints_mod
from dsh_fs.tool_fs.hints import chars, closest, forms, search, state
from dsh_fs.tool_fs.hints import near_match_hint
from stepcount import traced_lines

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")
SHARED = os.path.abspath(os.environ.get("DSH_FS_SHARED", os.path.join(ROOT, "..", "shared")))
CASES = os.path.join(SHARED, "conformance", "cases")

NFD_CAFE = unicodedata.normalize("NFD", "café")
NFC_CAFE = unicodedata.normalize("NFC", "café")


def hint(content: str, needle: str, **kwargs: object) -> str | None:
    """The hint with the default (counted, machine-independent) budget."""
    return near_match_hint(content, needle, **kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# D5 conformance cases
# --------------------------------------------------------------------------------------------


def test_d5_nbsp_case() -> None:
    result = near_match_hint("Preis:\u00a010 EUR\n", "Preis: 10 EUR")
    assert result == "Hint: line 1 has a no-break space (U+00A0) where old_string has a space."


def test_d5_tab_indent_case() -> None:
    result = near_match_hint("func f() {\n\treturn 1\n}\n", "    return 1")
    assert result == "Hint: line 2 matches if indentation is ignored: the file indents with tabs, old_string with spaces."


def test_d5_no_final_newline_case() -> None:
    result = near_match_hint("hello", "hello\n")
    assert result == (
        "Hint: line 1 matches without the final newline of old_string; the file does not end with a newline there."
    )
    # the follow-up edit of the case uses the literal text: no hint for it
    assert near_match_hint("hello", "hello") is None


@pytest.mark.parametrize(
    ("name", "call", "wanted"),
    [
        ("nbsp-hint.json", 1, "line 1"),
        ("tab-indent-hint.json", 1, "line 2"),
        ("no-final-newline-hint-then-literal.json", 1, None),
    ],
)
def test_d5_conformance_inputs_from_the_shared_corpus(name: str, call: int, wanted: str | None) -> None:
    """The real bytes of the shared scenarios (skipped when the corpus is not checked out)."""
    path = os.path.join(CASES, name)
    if not os.path.exists(path):
        pytest.skip(f"shared conformance corpus not found at {CASES}")
    with open(path, encoding="utf-8") as fh:
        scenario = json.load(fh)
    args = scenario["calls"][call]["args"]
    spec = scenario["files"][args["file_path"]]
    content = spec if isinstance(spec, str) else base64.b64decode(spec["base64"]).decode("utf-8")
    result = near_match_hint(content, args["old_string"])
    assert result is not None and result.startswith("Hint: ")
    for piece in scenario["expect"]["results"][call]["text_contains"]:
        assert piece.lstrip("\n") in result
    if wanted is not None:
        assert wanted in result


# --------------------------------------------------------------------------------------------
# One exact hint per difference class
# --------------------------------------------------------------------------------------------

EXACT = [
    # indentation
    pytest.param(
        "def f():\n        return 1\n",
        "def f():\n    return 1",
        "Hint: line 1 matches if indentation is ignored: the file indents line 2 with 8 spaces, old_string with 4 spaces.",
        id="indent-depth",
    ),
    pytest.param(
        "if x:\n    y = 1\n",
        "if x:\n\ty = 1",
        "Hint: line 1 matches if indentation is ignored: the file indents with spaces, old_string with tabs.",
        id="indent-spaces-vs-tabs",
    ),
    pytest.param(
        "a\n  \nb\n",
        "a\n\nb",
        "Hint: line 1 matches if indentation is ignored: blank line 2 holds 2 spaces in the file but nothing in old_string.",
        id="indent-blank-line",
    ),
    pytest.param(
        "x = [\n    1,\n]\n",
        "x = [\n1,\n]",
        "Hint: line 1 matches if indentation is ignored: line 2 is indented with 4 spaces in the file but not in old_string.",
        id="indent-missing",
    ),
    # trailing whitespace
    pytest.param(
        "a = 1  \nb = 2\n",
        "a = 1\nb = 2",
        "Hint: line 1 matches if trailing whitespace is ignored: line 1 ends with 2 spaces that old_string does not have.",
        id="trailing-in-file",
    ),
    pytest.param(
        "a = 1\nb = 2\n",
        "a = 1\nb = 2\t",
        "Hint: line 1 matches if trailing whitespace is ignored: old_string has 1 tab at the end of line 2, the file does not.",
        id="trailing-in-old-string",
    ),
    # both, and runs of spaces/tabs inside a line
    pytest.param(
        "if x:\n\ty = 1  \nz\n",
        "if x:\n    y = 1\nz",
        "Hint: line 1 matches if indentation and trailing whitespace are ignored: the file indents with tabs, "
        "old_string with spaces; line 2 ends with 2 spaces that old_string does not have.",
        id="indent-and-trailing",
    ),
    pytest.param(
        "x =\t1\n",
        "x = 1",
        "Hint: line 1 matches if spaces and tabs are compared loosely: line 1 has 1 tab where old_string has 1 space.",
        id="inner-tab",
    ),
    pytest.param(
        "    foo(a,  b)\n",
        "foo(a, b)",
        "Hint: line 1 matches if spaces and tabs are compared loosely: line 1 has 2 spaces where old_string has 1 space.",
        id="inner-double-space",
    ),
    # carriage returns (CRLF is normalized by the caller; lone CRs remain)
    pytest.param(
        "a\rb\n",
        "a\nb",
        "Hint: line 1 has a carriage return (\\r) where old_string has a line break (\\n).",
        id="bare-cr",
    ),
    pytest.param(
        "x = 1\r\ny = 2\n",
        "x = 1\ny = 2",
        "Hint: line 1 has a carriage return (\\r) that old_string lacks.",
        id="stray-cr",
    ),
    # Unicode spaces
    pytest.param(
        "Preis: 10 EUR\n",
        "Preis: 10\u00a0EUR",
        "Hint: line 1 has a space where old_string has a no-break space (U+00A0).",
        id="nbsp-in-old-string",
    ),
    pytest.param(
        "a 1\u202fkm\n",
        "a 1 km",
        "Hint: line 1 has a narrow no-break space (U+202F) where old_string has a space.",
        id="narrow-nbsp",
    ),
    pytest.param(
        "x\u3000y\n",
        "x y",
        "Hint: line 1 has an ideographic space (U+3000) where old_string has a space.",
        id="ideographic-space",
    ),
    pytest.param(
        "x\u2009y\u2009z\n",
        "x y z",
        "Hint: line 1 has a thin space (U+2009) where old_string has a space, plus 1 more such difference.",
        id="thin-spaces",
    ),
    pytest.param(
        "one\ntwo \u00a0x\nthree\n",
        "one\ntwo  x\nthree",
        "Hint: the text at line 1 matches, except that line 2 has a no-break space (U+00A0) where old_string has a space.",
        id="nbsp-on-a-later-line",
    ),
    # quotes, dashes, ellipsis
    pytest.param(
        "print(\u2018hi\u2019)\n",
        "print('hi')",
        "Hint: line 1 has a left single quotation mark (\u2018, U+2018) where old_string has a straight quote ('), "
        "plus 1 more such difference.",
        id="curly-single-quotes",
    ),
    pytest.param(
        'say "yes"\n',
        "say \u201cyes\u201d",
        'Hint: line 1 has a straight double quote (") where old_string has a left double quotation mark '
        "(\u201c, U+201C), plus 1 more such difference.",
        id="curly-double-quotes-in-old-string",
    ),
    pytest.param(
        "a \u2014 b\n",
        "a - b",
        "Hint: line 1 has an em dash (\u2014, U+2014) where old_string has a hyphen-minus (-).",
        id="em-dash",
    ),
    pytest.param(
        "x = a \u2212 b\n",
        "x = a - b",
        "Hint: line 1 has a minus sign (\u2212, U+2212) where old_string has a hyphen-minus (-).",
        id="minus-sign",
    ),
    pytest.param(
        "Wait\u2026 what\n",
        "Wait... what",
        "Hint: line 1 has a horizontal ellipsis (\u2026, U+2026) where old_string has three dots (...).",
        id="ellipsis",
    ),
    pytest.param(
        "x\u2026\ny\u2026 z\n",
        "y... z",
        "Hint: line 2 has a horizontal ellipsis (\u2026, U+2026) where old_string has three dots (...).",
        id="ellipsis-after-an-earlier-expansion",
    ),
    # invisible characters
    pytest.param(
        "foo\u200bbar\n",
        "foobar",
        "Hint: line 1 has a zero width space (U+200B) that old_string lacks.",
        id="zero-width-space-in-file",
    ),
    pytest.param(
        "foobar\n",
        "foo\u200bbar",
        "Hint: old_string has a zero width space (U+200B) that line 1 lacks.",
        id="zero-width-space-in-old-string",
    ),
    pytest.param(
        "x\n\ufeffimport os\n",
        "x\nimport os",
        "Hint: the text at line 1 matches, except that line 2 has a zero width no-break space (U+FEFF) "
        "that old_string lacks.",
        id="stray-bom-inside",
    ),
    pytest.param(
        "\ufeffx y\n",
        " x y",
        "Hint: line 1 has a zero width no-break space (U+FEFF) where old_string has a space.",
        id="feff-as-space",
    ),
    # NFC vs NFD
    pytest.param(
        NFD_CAFE + "\n",
        NFC_CAFE,
        'Hint: line 1 matches after Unicode normalization (NFC): the file writes "\u00e9" as U+0065 U+0301 '
        "(decomposed), old_string as U+00E9 (composed).",
        id="nfd-file",
    ),
    pytest.param(
        "x\n" + NFC_CAFE + "\n",
        NFD_CAFE,
        'Hint: line 2 matches after Unicode normalization (NFC): old_string writes "\u00e9" as U+0065 U+0301 '
        "(decomposed), the file as U+00E9 (composed).",
        id="nfd-old-string",
    ),
    # final and leading newlines
    pytest.param(
        "hello",
        "hello\n\n",
        "Hint: line 1 matches without the final 2 newlines of old_string; the file does not end with a newline there.",
        id="two-final-newlines",
    ),
    pytest.param(
        "a\nhello\n",
        "hello\n\n\n",
        "Hint: line 2 matches if old_string ends with 1 newline instead of 3; the file ends there.",
        id="extra-final-newlines",
    ),
    pytest.param(
        "hello\n",
        "\nhello",
        "Hint: line 1 matches without the leading newline of old_string; the file starts there.",
        id="leading-newline",
    ),
    # line-number prefixes copied from read output
    pytest.param(
        "alpha\nbeta\ngamma\n",
        "2: beta\n3: gamma",
        'Hint: line 2 matches without the line-number prefixes copied from read output (like "2: "); '
        "they are not part of the file.",
        id="read-prefixes",
    ),
    pytest.param(
        "alpha\n\ngamma\n",
        "1: alpha\n2:\n3: gamma\n",
        'Hint: line 1 matches without the line-number prefixes copied from read output (like "1: "); '
        "they are not part of the file.",
        id="read-prefixes-blank-line-without-space",
    ),
    pytest.param(
        "def f():\n\treturn 1\n",
        "2: \treturn 1",
        'Hint: line 2 matches without the line-number prefixes copied from read output (like "2: "); '
        "they are not part of the file.",
        id="read-prefix-with-tab",
    ),
    # letter case (last resort)
    pytest.param(
        "Hello World\n",
        "hello world",
        'Hint: line 1 has "Hello" where old_string has "hello", plus 1 more word; only letter case differs.',
        id="case",
    ),
    pytest.param(
        "x\nHello World\n",
        "x\nhello World",
        'Hint: the text at line 1 matches except for letter case: line 2 has "Hello" where old_string has "hello".',
        id="case-later-line",
    ),
    pytest.param(
        "STRASSE\n",
        "stra\u00dfe",
        'Hint: line 1 has "STRASSE" where old_string has "stra\u00dfe"; only letter case differs.',
        id="case-full-folding",
    ),
    # closest line (no match claimed)
    pytest.param(
        "x = 1\ntotal = compute(a, b)\n",
        "total = compute(a, c)",
        "Hint: nothing matches exactly; the most similar text is line 2 (95% alike): read it again and copy it exactly.",
        id="closest-line",
    ),
]


@pytest.mark.parametrize(("content", "needle", "expected"), EXACT)
def test_exact_hint_per_class(content: str, needle: str, expected: str) -> None:
    assert hint(content, needle) == expected


def test_first_normalized_occurrence_wins() -> None:
    content = "a\n\tx = 1\nb\n\tx = 1\n"
    assert hint(content, "    x = 1") == (
        "Hint: line 2 matches if indentation is ignored: the file indents with tabs, old_string with spaces."
    )


def test_indentation_is_tried_before_letter_case() -> None:
    # "  x = 1" matches line 1 case-insensitively and line 2 by indentation: indentation wins
    assert hint("\tX = 1\nx = 1  \n", "  x = 1") == (
        "Hint: line 2 matches if indentation is ignored: old_string indents line 2 with 2 spaces but the file does not."
    )
    assert hint("\tX = 1\n", "\tx = 1") == 'Hint: line 1 has "X" where old_string has "x"; only letter case differs.'


def test_mixed_indentation_names_the_first_differing_line() -> None:
    assert hint("if a:\n\tb\n    c\n", "if a:\n  b\n  c") == (
        "Hint: line 1 matches if indentation is ignored: the file indents line 2 with 1 tab, old_string with 2 spaces."
    )


def test_mid_line_start_is_not_reported_as_indentation() -> None:
    # old_string starts inside the line: the file's indentation is no part of the match
    assert hint("    x = foo(a,\n\t\tb)\n", "foo(a,\n  b)") == (
        "Hint: line 1 matches if indentation is ignored: the file indents with tabs, old_string with spaces."
    )
    assert hint("    x = foo(a,\n\t\tb)\n", "foo(a,\n   b)") == (
        "Hint: line 1 matches if indentation is ignored: the file indents with tabs, old_string with spaces."
    )
    assert hint("    x = foo(a,\n  b)\n", "foo(a,\n\tb)") == (
        "Hint: line 1 matches if indentation is ignored: the file indents with spaces, old_string with tabs."
    )


def test_hint_is_one_printable_line_even_with_control_characters() -> None:
    for content, needle in [("A\x01B\n", "a\x01b"), ("x\x01\u00a0y\x7f\n", "x\x01 y\x7f"), ("\x85a\u2028 b", "\x85a\u2028\u00a0b")]:
        result = hint(content, needle)
        assert result is not None
        assert result.startswith("Hint: ") and result.endswith(".")
        assert result.isprintable()


def test_escape_writes_non_printable_characters_as_escapes() -> None:
    assert chars.escape("a\tb\nc\rd\x01\u00a0\ud800\U000e0001 \u00e9") == (
        "a\\tb\\nc\\rd\\u0001\\u00a0\\ud800\\U000e0001 \u00e9"
    )


# --------------------------------------------------------------------------------------------
# None cases and bounds
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("alpha\nbeta\n", "completely different text"),
        ("def f():\n    return 1\n", "class Foo:\n    pass"),
        ("x = 1\n", "y = 2"),
        ("", "anything"),
        ("hello\n", "world\n"),
    ],
)
def test_unrelated_needles_give_none(content: str, needle: str) -> None:
    assert hint(content, needle) is None


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("Preis:\u00a010 EUR\n", "Preis:\u00a010 EUR"),
        ("func f() {\n\treturn 1\n}\n", "\treturn 1"),
        ("hello", "hello"),
        ("a\nb\n", "a\nb\n"),
    ],
)
def test_literal_occurrence_gives_none(content: str, needle: str) -> None:
    assert hint(content, needle) is None


@pytest.mark.parametrize("needle", ["", " ", "\n", " \t\n  ", "\u00a0"])
def test_empty_or_blank_needles_give_none(needle: str) -> None:
    assert hint("a\n\tb\u00a0\n", needle) is None


def test_non_string_arguments_give_none() -> None:
    assert near_match_hint(None, "x") is None  # type: ignore[arg-type]
    assert near_match_hint("x", b"y") is None  # type: ignore[arg-type]


def test_content_over_max_chars_is_not_searched() -> None:
    content = "Preis:\u00a010 EUR\n"
    assert hint(content, "Preis: 10 EUR", max_content_chars=len(content)) is not None
    assert hint(content, "Preis: 10 EUR", max_content_chars=len(content) - 1) is None


def test_needle_over_its_bound_is_not_searched() -> None:
    long = "x" * (search._MAX_NEEDLE_CHARS + 1)
    assert hint(long + "\u00a0", long + " ") is None


def test_zero_budget_gives_none() -> None:
    assert near_match_hint("func f() {\n\treturn 1\n}\n", "    return 1", work_budget=0) is None


def test_closest_line_needs_one_line_and_a_small_file() -> None:
    lines = [f"value_{i} = compute({i})" for i in range(closest._FUZZY_MAX_LINES + 10)]
    assert hint("\n".join(lines[:100]), "value_x = compute(42)") is not None
    assert hint("\n".join(lines), "value_x = compute(42)") is None
    assert hint("total = compute(a, b)\nx\n", "total = compute(a, c)\nx") is None


def spent(content: str, needle: str, **kwargs: object) -> tuple[str | None, dict[str, int]]:
    stats: dict[str, int] = {}
    result = near_match_hint(content, needle, stats=stats, **kwargs)  # type: ignore[arg-type]
    return result, stats


def test_large_content_stays_within_its_budget() -> None:
    content = "def f(x):\n\tif x:  \n        return 'a' + x\n    # comment here\n" * 50_000  # ~3 MB
    assert len(content) > 3_000_000
    for needle in ("nothing here matches at all", "if x:\n    return 'b' + x", "x\n" * 300 + "y"):
        result, stats = spent(content, needle)
        assert result is None
        assert stats["spent"] <= stats["budget"] == search._WORK_BASE + search._WORK_PER_CHAR * len(content)


def test_large_content_still_gets_cheap_hints() -> None:
    content = "line\n" * 600_000 + "hello"  # 3 MB
    result, stats = spent(content, "hello\n")
    assert result == (
        "Hint: line 600001 matches without the final newline of old_string; the file does not end with a newline there."
    )
    assert stats["spent"] <= 4 * len(content)  # a few passes, not the whole budget


PATHOLOGICAL = [
    ("a" * 1_000_000, "a" * 1000 + "b"),
    ("x\n" * 500_000, "x\n" * 500 + "y"),
    (" " * 1_000_000, "  x"),
    ("\u00a0" * 500_000 + "\n", " " * 1000 + "x"),
    ("e\u0301" * 300_000, "\u00e9" * 100 + "x"),
    ("\ta\n" * 300_000, "1: " + "    a\n1: " * 200 + "b"),  # prefixes: a second form is searched
    ("a\n" * 300_000, "a\\n" * 500 + "b"),  # escaped line breaks: another form
    ("x = 1 \n" * 200_000, "x  =  1  \n" * 300 + "y"),
]


@pytest.mark.parametrize(("content", "needle"), PATHOLOGICAL)
def test_pathological_repetition_is_bounded_by_the_budget(content: str, needle: str) -> None:
    """Counted, not timed: the work stays within the budget and the answer is the same for
    every run (and every machine)."""
    first, stats = spent(content, needle)
    assert stats["spent"] <= stats["budget"]
    assert spent(content, needle)[0] == first
    tight, tight_stats = spent(content, needle, work_budget=len(content) // 2)
    assert tight is None and tight_stats["spent"] <= len(content) // 2


# --------------------------------------------------------------------------------------------
# Property tests
# --------------------------------------------------------------------------------------------

LINE_NUMBER = re.compile(r"\bline (\d+)\b")
ANY_TEXT = st.text(max_size=200)
# small alphabets make near matches (and occasional literal matches) likely
NEARISH = st.text(alphabet="ab \t\n\r\u00a0\u2019'\u2014-\u2026.\u200bAB\u0301e\u00e9:1", max_size=60)


def _line_count(text: str) -> int:
    return text.count("\n") + 1


def _check(content: str, needle: str, result: str | None) -> None:
    if result is None:
        return
    assert needle not in content
    assert result.startswith("Hint: ")
    assert result.endswith(".")
    assert result.isprintable()  # one line: no newline, no control character, no surrogate
    for number in LINE_NUMBER.findall(result):
        assert 1 <= int(number) <= _line_count(content)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ANY_TEXT, ANY_TEXT)
def test_property_arbitrary_text_never_raises(content: str, needle: str) -> None:
    # the private entry point has no catch-all: a bug would surface here
    text = state.Text(content, state.Budget(10**9))
    if needle.strip() and needle not in content:
        for transform in forms.transforms(needle):
            ctx = state.Ctx(text, transform.needle)
            if transform.literal is not None:
                transform.literal(ctx)
            for stage in (*search._STAGES, *search._LAST_RESORT):
                if stage(ctx) is not None:
                    break
    _check(content, needle, hint(content, needle))


@settings(max_examples=500, deadline=None)
@given(NEARISH, NEARISH)
def test_property_hint_only_without_literal_occurrence(content: str, needle: str) -> None:
    result = hint(content, needle)
    if needle in content:
        assert result is None
    _check(content, needle, result)


@settings(max_examples=300, deadline=None)
@given(NEARISH, st.data())
def test_property_real_substring_gives_none(content: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(content)))
    end = data.draw(st.integers(start, len(content)))
    assert hint(content, content[start:end]) is None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab c\u00a0", max_size=8), min_size=1, max_size=8), st.data())
def test_property_unicode_space_hint_names_the_first_normalized_occurrence(
    lines: list[str], data: st.DataObject
) -> None:
    content = "\n".join(lines) + "\n"
    start = data.draw(st.integers(0, len(content)))
    end = data.draw(st.integers(start, len(content)))
    needle = content[start:end].replace("\u00a0", " ")
    assume(needle.strip() and needle not in content)
    result = hint(content, needle)
    assert result is not None, (content, needle)
    _check(content, needle, result)
    if "no-break space" not in result:
        # an earlier, equally true class won (e.g. the needle also matches without its final
        # newline); _check above already proved that claim against the content
        return
    # the claimed line is where the space-normalized old_string first occurs
    normalized = content.replace("\u00a0", " ")
    first = normalized.count("\n", 0, normalized.find(needle)) + 1
    claimed = re.match(r"Hint: (?:the text at )?line (\d+)", result)
    assert claimed is not None, result
    assert int(claimed.group(1)) == first
    assert "no-break space (U+00A0) where old_string has a space" in result


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["", " ", "  ", "\t", "\t\t", "    "]), st.text("xyz=1", min_size=1, max_size=6)),
             min_size=1, max_size=8),
    st.data(),
)
def test_property_indentation_hint_is_a_real_match(lines: list[tuple[str, str]], data: st.DataObject) -> None:
    content = "\n".join(indent + text for indent, text in lines) + "\n"
    first = data.draw(st.integers(0, len(lines) - 1))
    last = data.draw(st.integers(first, len(lines) - 1))
    new_indent = data.draw(st.sampled_from([" ", "  ", "\t", "    "]))
    needle = "\n".join(new_indent + text for _indent, text in lines[first : last + 1])
    assume(needle not in content)
    result = hint(content, needle)
    assert result is not None
    _check(content, needle, result)
    claimed = int(re.match(r"Hint: line (\d+)", result).group(1))  # type: ignore[union-attr]
    # old_string without indentation really starts the claimed line of the file without indentation
    stripped = [line.lstrip(" \t") for line in content.split("\n")]
    wanted = "\n".join(text for _indent, text in lines[first : last + 1])
    assert "\n".join(stripped[claimed - 1 :]).startswith(wanted)
    assert claimed <= first + 1


# --------------------------------------------------------------------------------------------
# D18: two differences at once, escaped line breaks, any whitespace, an edit already applied
# --------------------------------------------------------------------------------------------

D18 = [
    pytest.param(
        "func f() {\n\treturn 1\n}\n", "2:     return 1",
        'Hint: old_string has the line-number prefixes copied from read output (like "2: "), which are not part of '
        "the file; without them, line 2 matches if indentation is ignored: the file indents with tabs, old_string "
        "with spaces.",
        id="prefix-and-tab-as-spaces",
    ),
    pytest.param(
        "hello\nworld\n", "1: hello \n2: world",
        'Hint: old_string has the line-number prefixes copied from read output (like "1: "), which are not part of '
        "the file; without them, line 1 matches if trailing whitespace is ignored: old_string has 1 space at the end "
        "of line 1, the file does not.",
        id="prefix-and-trailing-space",
    ),
    pytest.param(
        "a = 1\nb = 2\n", "a = 1\\nb = 2",
        "Hint: line 1 matches if each \\n (a backslash and an n) in old_string is a line break: write real line "
        "breaks, not those two characters.",
        id="escaped-line-break",
    ),
    pytest.param(
        "def f():\n\treturn 1\n", "def f():\\n    return 1",
        "Hint: old_string has \\n (a backslash and an n) where the file has line breaks; with real line breaks, "
        "line 1 matches if indentation is ignored: the file indents with tabs, old_string with spaces.",
        id="escaped-line-break-and-indentation",
    ),
    pytest.param(
        "x\ny = 1\nz = 2\n", "2: y = 1\\n3: z = 2",
        'Hint: line 2 matches without the line-number prefixes copied from read output (like "2: ") and with a real '
        "line break for each \\n (a backslash and an n) in old_string.",
        id="prefix-and-escaped-line-break",
    ),
    pytest.param(
        "foo(a, b)\n", "foo( a,b )",
        "Hint: line 1 matches if all whitespace is ignored.",
        id="whitespace-inside-a-line",
    ),
    pytest.param(
        "x = [\n  1, 2,\n  3]\n", "x = [1, 2, 3]",
        "Hint: line 1 matches if all whitespace is ignored: the text runs over 3 lines in the file (lines 1-3) but 1 "
        "in old_string.",
        id="whitespace-line-breaks",
    ),
    pytest.param(
        "a\n\n\nb\n", "a\nb",
        "Hint: line 1 matches if all whitespace is ignored: the text runs over 4 lines in the file (lines 1-4) but 2 "
        "in old_string.",
        id="whitespace-blank-lines",
    ),
]


@pytest.mark.parametrize(("content", "needle", "expected"), D18)
def test_D18_hints(content: str, needle: str, expected: str) -> None:
    assert hint(content, needle) == expected


def test_D18_an_edit_already_applied() -> None:
    content = "x = compute(2)\ny = 3\n"
    assert hint(content, "x = compute(1)", replacement="x = compute(2)") == (
        "Hint: new_string is already in the file at line 1: the edit looks already applied; read the file before "
        "changing it again.")
    # not a claim: a short or blank new_string, one that is part of old_string, or one not in the file
    for needle, replacement in (("y = 4", "3"), ("y = 3\nz", "y = 3"), ("zzz", "   "), ("x = compute(1)", "x = compute(9)")):
        assert "already" not in (hint(content, needle, replacement=replacement) or "")
    # old_string literally there: no hint at all, whatever new_string is
    assert hint(content, "y = 3", replacement="x = compute(2)") is None


@settings(max_examples=300, deadline=None)
@given(NEARISH, NEARISH, NEARISH)
def test_property_already_applied_names_a_real_occurrence(content: str, needle: str, replacement: str) -> None:
    result = hint(content, needle, replacement=replacement)
    _check(content, needle, result)
    if result is not None and result.startswith("Hint: new_string is already in the file"):
        line = int(re.search(r"at line (\d+)", result).group(1))  # type: ignore[union-attr]
        assert replacement in content and replacement not in needle
        assert content.count("\n", 0, content.find(replacement)) + 1 == line


@settings(max_examples=300, deadline=None)
@given(NEARISH, NEARISH)
def test_property_whitespace_claims_are_real(content: str, needle: str) -> None:
    result = hint(content, needle)
    _check(content, needle, result)
    if result is not None and "if all whitespace is ignored" in result:
        line = int(re.match(r"Hint: line (\d+)", result).group(1))  # type: ignore[union-attr]
        rest = "\n".join(content.split("\n")[line - 1 :])
        assert "".join(needle.split()) in "".join(rest.split())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab \t", min_size=1, max_size=6), min_size=1, max_size=6), st.data())
def test_property_prefixed_lines_from_read_output_are_recognized(lines: list[str], data: st.DataObject) -> None:
    """A block copied from read output, with one more whitespace difference, is recognized and
    its claimed line starts the block (or an earlier copy of it)."""
    content = "\n".join(lines) + "\n"
    first = data.draw(st.integers(0, len(lines) - 1))
    last = data.draw(st.integers(first, len(lines) - 1))
    block = lines[first : last + 1]
    assume(any(line.strip(" \t") for line in block))
    extra = data.draw(st.sampled_from(["", " ", "\t"]))
    needle = "\n".join(f"{first + 1 + i}: {line}" for i, line in enumerate(block)) + extra
    assume(needle not in content)
    # the block without prefixes must not occur inside a line (then it is no copy of read output)
    stripped = "\n".join(block) + extra
    assume(stripped not in content or ("\n" + content).find("\n" + stripped) >= 0)
    result = hint(content, needle)
    _check(content, needle, result)
    assert result is not None, (content, needle)
    assert "line-number prefixes" in result or "whitespace" in result or "newline" in result


# --------------------------------------------------------------------------------------------
# The work budget, counted independently (no timers)
# --------------------------------------------------------------------------------------------


LINES_PER_STEP = 12
"""traced lines one paid step may execute: a loop iteration (about five lines) plus the
``pay`` call it makes (five more), e.g. the closest-line loop over blank lines, which pays
``_STEP`` per line"""


HINT_MODULES = tuple(importlib.import_module(f"{hints_mod.__name__}.{info.name}")
                     for info in pkgutil.iter_modules(hints_mod.__path__))
"""every module of the ``hints`` package: the traced lines are counted in all of them"""


def traced(content: str, needle: str, **kwargs: object) -> tuple[str | None, int, dict[str, int]]:
    """The hint, the Python lines executed in the ``hints`` package while finding it, and its budget stats."""
    stats: dict[str, int] = {}
    result, lines = traced_lines(lambda: near_match_hint(content, needle, stats=stats, **kwargs), *HINT_MODULES)
    return result, lines, stats


ADVERSARIAL = [
    ("total = compute(a, b)\n" * 4999, "total = compute(a, c)"),  # the closest-line loop on every line
    ("x\n" * 100_000 + "yz\n", "y z"),  # whitespace: the match at the very end
    ("e\u0301 " * 30_000 + "\n", "\u00e9 " * 50 + "x"),
    ("\u2019" * 50_000, "'" * 5_000 + "x"),
    ("ab" * 50_000, "AB" * 1_000 + "c"),
    *[(c[:200_000], n) for c, n in PATHOLOGICAL],
]


@pytest.mark.parametrize(("content", "needle"), ADVERSARIAL)
def test_python_level_work_is_paid_for(content: str, needle: str) -> None:
    """Every Python-level step is paid from the budget at ``_STEP`` characters or more (the
    rest is C-speed passes, paid by their length): so the steps a search takes are bounded by
    its budget, whatever the input."""
    _result, events, stats = traced(content, needle)
    assert stats["spent"] <= stats["budget"]
    assert events <= LINES_PER_STEP * (stats["spent"] // state.STEP) + 3_000


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet="ab \t\n\u00a0\u2019'\\n:1", min_size=1, max_size=8), st.integers(1, 20_000),
       st.text(alphabet="ab \t\n\u00a0'\\n:1", min_size=1, max_size=40))
def test_property_adversarial_repetition_stays_within_budget(unit: str, times: int, needle: str) -> None:
    content = unit * times
    _result, events, stats = traced(content, needle, replacement=needle[::-1])
    assert stats["spent"] <= stats["budget"]
    assert events <= LINES_PER_STEP * (stats["spent"] // state.STEP) + 3_000
