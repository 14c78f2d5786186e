"""``is_lossless_json``'s one-pass answer for flat objects (the usual tool arguments) is the
full walk's answer, for every flat dict of JSON-ish and non-JSON values (hypothesis)."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings, strategies as st

from dsh_fs.core import jsonvalue

LEAVES = st.one_of(
    st.none(), st.booleans(), st.text(max_size=5),
    st.integers(), st.integers(min_value=-(1 << 60), max_value=1 << 60), st.just(1 << 53), st.just(-(1 << 53) - 1),
    st.floats(allow_nan=True, allow_infinity=True), st.just(-0.0), st.binary(max_size=3),
    st.tuples(st.integers()), st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)
KEYS = st.one_of(st.text(max_size=4), st.integers(), st.booleans())


def _full_walk(value: Any) -> bool:
    """The answer without the flat fast path: the same walk over a one-element list."""
    return jsonvalue.is_lossless_json([value])


@settings(max_examples=400, deadline=None, database=None)
@given(st.dictionaries(KEYS, LEAVES, max_size=5))
def test_flat_fast_path_agrees_with_the_full_walk(value: dict[Any, Any]) -> None:
    assert jsonvalue.is_lossless_json(value) == _full_walk(value)


def test_flat_fast_path_refuses_what_json_cannot_carry() -> None:
    assert jsonvalue.is_lossless_json({"file_path": "a", "offset": 3, "replace_all": True, "x": None})
    assert not jsonvalue.is_lossless_json({"offset": math.nan})
    assert not jsonvalue.is_lossless_json({"offset": -0.0})
    assert not jsonvalue.is_lossless_json({1: "a"})
    assert not jsonvalue.is_lossless_json({"big": 1 << 1100})
    assert jsonvalue.is_lossless_json({"big": 1 << 60})
