"""``tool_fs/name_hints.py``: a missing name next to one that looks the same (DEVIATIONS D19).

Exact words per kind (Unicode spaces, invisible characters, NFC vs NFD, quotes and dashes,
letter case, several at once), no claim for names that differ otherwise, and properties: a
lookalike made by any of those changes is found, and a claimed name always folds to the same
text as the missing one. Not covered here: listing the directory (tests/integration/tool_fs/test_tools.py).
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_fs.tool_fs.hints.chars import fold_lookalikes
from dsh_fs.tool_fs.name_hints import lookalike


@pytest.mark.parametrize(
    ("missing", "existing", "what"),
    [
        ("my file.txt", "my\u00a0file.txt", "its name has a no-break space (U+00A0) where the path has a space"),
        ("ab.txt", "a\u200bb.txt", "its name has a zero width space (U+200B) that the path lacks"),
        ("a\u200bb.txt", "ab.txt", "the path has a zero width space (U+200B) that its name lacks"),
        ("caf\u00e9.txt", "cafe\u0301.txt", 'its name writes "\u00e9" as U+0065 U+0301 (decomposed), the path as U+00E9 (composed)'),
        ("cafe\u0301.txt", "caf\u00e9.txt", 'its name writes "\u00e9" as U+00E9 (composed), the path as U+0065 U+0301 (decomposed)'),
        ("readme.md", "README.md", "only letter case differs"),
        ("John's.txt", "John\u2019s.txt",
         "its name has a right single quotation mark (\u2019, U+2019) where the path has a straight quote (')"),
        ("a b-c.txt", "a\u00a0b\u2013c.txt",
         "its name has a no-break space (U+00A0) where the path has a space, plus 1 more such difference"),
    ],
)
def test_each_kind_is_named(missing: str, existing: str, what: str) -> None:
    assert lookalike(missing, ["other.txt", existing, "zzz"]) == (existing, what)


@pytest.mark.parametrize(("missing", "names"), [
    ("notes.txt", ["notes.md", "note.txt", "notes.txt.bak"]),  # really different names
    ("notes.txt", ["notes.txt"]),  # the same name is no lookalike
    ("", ["a"]),
    ("a" * 2000, ["A" * 2000]),  # longer than any file system allows
])
def test_no_claim_otherwise(missing: str, names: list[str]) -> None:
    assert lookalike(missing, names) is None


CHANGES = [
    lambda s: s.replace(" ", "\u00a0"),
    lambda s: unicodedata.normalize("NFD", s),
    lambda s: s.upper(),
    lambda s: s.replace("'", "\u2019"),
    lambda s: s.replace("-", "\u2013"),
    lambda s: s[:1] + "\u200b" + s[1:],
]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab -'\u00e9", min_size=1, max_size=12), st.sampled_from(range(len(CHANGES))),
       st.lists(st.text(alphabet="abc.", max_size=6), max_size=5))
def test_property_a_lookalike_is_found_and_every_claim_folds_alike(name: str, change: int, others: list[str]) -> None:
    existing = CHANGES[change](name)
    found = lookalike(name, [*others, existing])
    if existing != name:
        assert found is not None
    if found is not None:
        assert found[0] != name and fold_lookalikes(found[0]) == fold_lookalikes(name)
        assert found[1].isprintable()
