"""The deepagents backend's streamed line splitter: however the text is chunked, it splits as
``str.splitlines(keepends=True)`` does, and clips each line at ``max_chars`` (hypothesis)."""

from __future__ import annotations

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_fs.adapters.deepagents import _lines

TEXT = st.text(alphabet=st.sampled_from("ab\r\n\x0b\u2028 "), max_size=60)


def _split(chunks: list[str], max_chars: int) -> list[str]:
    async def source():  # type: ignore[no-untyped-def]
        for chunk in chunks:
            yield chunk

    async def collect() -> list[str]:
        return [line async for line in _lines(source(), max_chars)]

    return anyio.run(collect)


@settings(max_examples=200, deadline=None)
@given(TEXT, st.lists(st.integers(min_value=0, max_value=60), max_size=6), st.integers(min_value=1, max_value=80))
def test_any_chunking_splits_like_splitlines(text: str, cuts: list[int], max_chars: int) -> None:
    points = sorted({min(c, len(text)) for c in cuts})
    chunks = [text[a:b] for a, b in zip([0, *points], [*points, len(text)])]
    assert _split(chunks, max_chars) == [line[:max_chars] for line in text.splitlines(keepends=True)]
