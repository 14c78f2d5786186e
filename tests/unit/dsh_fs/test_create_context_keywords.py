"""``create_context``'s keywords: a misspelt one is refused by name, with the closest known
parameter or tool setting suggested, before anything is built (no provider opened, nothing to
close); every known setting still reaches its part."""

from __future__ import annotations

import pytest

import dsh_fs


@pytest.mark.parametrize(("given", "message"), [
    ({"read_limt": 5}, "create_context() got an unexpected keyword argument 'read_limt'; did you mean 'read_limit'?"),
    ({"sandbx": "read-only"}, "create_context() got an unexpected keyword argument 'sandbx'; did you mean 'sandbox'?"),
    ({"grep_max_match": 3},
     "create_context() got an unexpected keyword argument 'grep_max_match'; did you mean 'grep_max_matches'?"),
    ({"list_max_entry": 3},
     "create_context() got an unexpected keyword argument 'list_max_entry'; did you mean 'list_max_entries'?"),
    ({"zzz": 1}, "create_context() got an unexpected keyword argument 'zzz'"),
])
def test_a_misspelt_keyword_is_named_with_the_close_one(given: dict[str, object], message: str) -> None:
    with pytest.raises(TypeError) as caught:
        dsh_fs.create_context(**given)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_every_known_setting_is_taken() -> None:
    ctx = dsh_fs.create_context(read_limit=5, read_max_line_length=10, read_max_bytes=1000, read_stream_min_size=1000,
                                notebook_max_bytes=1000, list_max_entries=5, glob_max_results=5, grep_max_matches=5,
                                grep_max_line_bytes=100, raw_output_max_bytes=1000, timeout_ms=1000,
                                mirror_batch_bytes=1000, rg_path=None)
    assert ctx.tools.get("read") is not None and ctx.tools.get("grep") is not None
