"""The ``read``/``write``/``edit`` tools through the registry, as the model uses them.
Covers REFERENCE-SPEC §7.5 (``tools.spec.ts``: tools over a recording fake provider plus the
real policy) and §7.8 (``integration.spec.ts``: registry + real local provider, checked by
reading the files back), every test named in its docstring; the verbatim prompt (§4.2),
§4.5 session cwd, §4.10 where ``fs/observed`` is emitted, §4.11 stat budget, the Appendix A
sequence; and one test per deviation D1–D12 (plus A1) in the profile it applies to, with the
reference-profile behaviour beside it.

Not covered here: pure windowing (tests/unit/tool_fs/test_read_render.py), hint wording
(tests/unit/tool_fs/test_hints.py), hostile arguments (test_bad_input.py), random sequences
(test_properties.py), the provider's own contract (test_local_provider.py).
"""

from __future__ import annotations

import os
import stat as stat_mod
from collections.abc import Callable
from typing import Any

import anyio
import pytest

import dsh_fs
from dsh_fs import AbortSignal, Context, ErrorInfo, Session
from dsh_fs.core.session import ToolExecution
from dsh_fs.core.tools import ToolResult
from dsh_fs.fs import FS_OBSERVED, FsError, FsErrorCode
from dsh_fs.fs.types import CreateIfAbsent, EditIntent, Version
from dsh_fs.fs_policy import FsPolicy
from dsh_fs.tool_fs import ToolFs
from filekit import get, put
from spectext import FULL_TOOL_GUIDANCE_UNGUARDED, PROMPT, TOOL_GUIDANCE, TOOL_GUIDANCE_UNGUARDED

pytestmark = pytest.mark.anyio

FS_ERROR = "FsError"


def rewrite_in_place(path: str, data: bytes) -> None:
    with open(path, "r+b") as handle:
        handle.truncate(0)
        handle.write(data)


def envelope(path: str, body: str) -> str:
    return f"<path>{path}</path>\n<type>file</type>\n<content>\n{body}\n</content>"


def failed(result: ToolResult, code: str | None, text: str | None = None) -> None:
    """``result`` is an error with ``code`` (``None``: a plain error without ``error``)."""
    assert result.is_error, result.text
    assert result.meta is None
    if code is None:
        assert result.error is None, result.error
    else:
        assert result.error == ErrorInfo(FS_ERROR if code.startswith("FS_") else result.error.name, code), result.text
    if text is not None:
        assert result.text == text


def ok(result: ToolResult, text: str | None = None) -> ToolResult:
    assert not result.is_error, result.text
    assert result.error is None
    if text is not None:
        assert result.text == text
    return result


# ==========================================================================================
# fixtures: a recording fake provider (§7.5) and the default deployment on disk (§7.8)
# ==========================================================================================

@pytest.fixture
def fake(memory_fs: type) -> Callable[..., Context]:
    """``fake(files={...}, profile="reference", policy=True, **tool_config)`` over ``MemoryFs``."""

    def build(*, files: dict[str, str] | None = None, dirs: tuple[str, ...] = (), profile: str = "reference",
              policy: bool = True, **config: Any) -> Context:
        ctx = Context(profile=profile)
        ctx.plugin(memory_fs, cwd="/abs", files={f"/abs/{k}": v for k, v in (files or {}).items()},
                   dirs=tuple(f"/abs/{d}" for d in dirs))
        if policy:
            ctx.plugin(FsPolicy)
        ctx.plugin(ToolFs, **config)
        return ctx

    return build


@pytest.fixture
def session() -> Session:
    return Session("/abs")


# ==========================================================================================
# §7.5 registration
# ==========================================================================================

def test_registers_read_write_and_edit(fake: Callable[..., Context]) -> None:
    """registration: registers read, write, and edit"""
    assert [s["name"] for s in fake().tools.schemas()] == ["edit", "read", "write"]


def test_declares_read_parallel_safe_while_write_edit_remain_exclusive(fake: Callable[..., Context]) -> None:
    """registration: declares read parallel-safe while write/edit remain exclusive"""
    tools = fake().tools
    assert tools.is_parallel("read", {"file_path": "a.txt", "offset": 2})
    assert not tools.is_parallel("write", {"file_path": "a.txt", "content": "x"})
    assert not tools.is_parallel("edit", {"file_path": "a.txt", "old_string": "a", "new_string": "b"})


@pytest.mark.parametrize("profile", ["reference", "default"])
def test_registers_prompt_sections_for_each_tool(fake: Callable[..., Context], profile: str) -> None:
    """registration: registers prompt sections for each tool (§4.2 verbatim rendering)"""
    ctx = fake(profile=profile)
    assert ctx.system_prompt.render() == PROMPT
    assert [(s.name, s.order) for s in ctx.system_prompt.sections()] == [
        ("harness:identity", -100), ("deployment:persona", 0), ("tool:read", 100), ("tool:write", 101), ("tool:edit", 102)
    ]


def test_the_prompt_describes_the_deployment_it_runs_in_d14(fake: Callable[..., Context], memory_fs: type) -> None:
    """DEVIATIONS D14: without a policy the default profile does not claim one requires reading;
    the reference profile keeps §4.2 verbatim; a policy loaded later or unloaded is seen"""
    assert TOOL_GUIDANCE_UNGUARDED.count("Read the file first, unless") == 1 and TOOL_GUIDANCE_UNGUARDED != TOOL_GUIDANCE
    assert fake(profile="default", policy=False).system_prompt.render(only="tool:") == TOOL_GUIDANCE_UNGUARDED
    assert fake(profile="default", policy=False).system_prompt.render() == PROMPT.split("\n\n", 1)[0] + "\n\n" + (
        TOOL_GUIDANCE_UNGUARDED
    )
    assert fake(profile="reference", policy=False).system_prompt.render() == PROMPT
    assert fake(profile="default").system_prompt.render() == PROMPT

    ctx = Context()
    ctx.plugin(memory_fs)
    ctx.plugin(ToolFs)
    assert ctx.system_prompt.render(only="tool:") == TOOL_GUIDANCE_UNGUARDED
    policy = ctx.plugin(FsPolicy)  # loaded after the tools
    assert ctx.system_prompt.render(only="tool:") == TOOL_GUIDANCE
    policy.dispose()
    assert ctx.system_prompt.render(only="tool:") == TOOL_GUIDANCE_UNGUARDED
    from dsh_fs.tool_fs.list_tool import LIST_PROMPT  # the default deployment serves list too (L1)

    assert dsh_fs.create_context(policy=False).system_prompt.render(only="tool:") == (
        LIST_PROMPT + "\n\n" + FULL_TOOL_GUIDANCE_UNGUARDED)


def test_stays_pending_until_ctx_fs_exists(memory_fs: type) -> None:
    """registration: stays pending until ctx.fs exists (inject)"""
    ctx = Context()
    ctx.plugin(ToolFs)
    assert ctx.tools.schemas() == [] and "tool:read" not in ctx.system_prompt.names()
    ctx.plugin(memory_fs)
    assert [s["name"] for s in ctx.tools.schemas()] == ["edit", "read", "write"]


def test_unregisters_everything_on_fiber_disposal(memory_fs: type) -> None:
    """registration: unregisters everything on fiber disposal (HMR safety)"""
    ctx = Context()
    ctx.plugin(memory_fs)
    scope = ctx.plugin(ToolFs)
    assert ctx.system_prompt.names() == ["deployment:persona", "harness:identity", "tool:edit", "tool:read", "tool:write"]
    scope.dispose()
    assert ctx.system_prompt.names() == ["deployment:persona", "harness:identity"]
    assert ctx.tools.names() == []


# ==========================================================================================
# §7.5 read tool
# ==========================================================================================

async def test_read_formats_line_numbered_content_with_a_footer(fake: Callable[..., Context], session: Session) -> None:
    """read tool: formats line-numbered content with a footer"""
    ctx = fake(files={"a.txt": "hello\nworld"})
    result = await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session)
    ok(result, "<path>/abs/a.txt</path>\n<type>file</type>\n<content>\n1: hello\n2: world\n\n"
               "(End of file - total 2 lines)\n</content>")
    assert result.content == [{"type": "text", "text": result.text}] and result.meta is None


@pytest.mark.parametrize("offset", [0, -1, -0.5, 0.0])
async def test_read_rejects_a_non_positive_offset(fake: Callable[..., Context], session: Session, offset: float) -> None:
    """read tool: rejects a non-positive offset via arg validation"""
    result = await fake(files={"a.txt": "x"}).tools.execute("read", {"file_path": "a.txt", "offset": offset}, session=session)
    failed(result, None, "Error: offset must be a positive integer")


async def test_read_rejects_a_fractional_offset_and_a_zero_or_negative_limit(fake: Callable[..., Context], session: Session) -> None:
    """read tool: rejects a fractional offset and a zero/negative limit"""
    ctx = fake(files={"a.txt": "x"})
    for args, message in (({"offset": 1.5}, "offset must be a positive integer"),
                          ({"limit": 0}, "limit must be a positive integer"),
                          ({"limit": -3}, "limit must be a positive integer"),
                          ({"limit": 2.5}, "limit must be a positive integer")):
        failed(await ctx.tools.execute("read", {"file_path": "a.txt", **args}, session=session), None, "Error: " + message)
    ok(await ctx.tools.execute("read", {"file_path": "a.txt", "offset": 1.0, "limit": 2.0}, session=session))


async def test_read_rejects_a_non_json_numeric_offset_before_tool_specific_validation(
        fake: Callable[..., Context], session: Session) -> None:
    """read tool: rejects a non-JSON numeric offset before tool-specific validation"""
    ctx = fake(files={"a.txt": "x"})
    for value in (float("nan"), float("inf"), -0.0):
        failed(await ctx.tools.execute("read", {"file_path": "", "offset": value}, session=session), None,
               "Error: tool execution arguments must be losslessly JSON-serializable")
    assert ctx.fs.calls == []


async def test_read_rejects_a_limit_above_the_cap(fake: Callable[..., Context], session: Session) -> None:
    """read tool: rejects a limit above the cap"""
    result = await fake(files={"a.txt": "x"}).tools.execute("read", {"file_path": "a.txt", "limit": 2001}, session=session)
    failed(result, None, "Error: limit must be less than or equal to 2000")


@pytest.mark.parametrize("tool", ["read", "write", "edit"])
async def test_rejects_a_blank_file_path(fake: Callable[..., Context], session: Session, tool: str) -> None:
    """read/write/edit tool: rejects a blank file_path"""
    ctx = fake()
    args = {"read": {}, "write": {"content": "x"}, "edit": {"old_string": "", "new_string": ""}}[tool]
    failed(await ctx.tools.execute(tool, {"file_path": " \t", **args}, session=session), None,
           "Error: file_path must be a non-empty string")
    assert ctx.fs.calls == []


async def test_read_records_observed_state_so_a_follow_up_edit_is_authorized(
        fake: Callable[..., Context], session: Session) -> None:
    """read tool: records observed state so a follow-up edit by the same session is authorized"""
    ctx = fake(files={"a.txt": "hello"})
    seen = ctx.fs.put("/abs/a.txt", "hello")  # the version the read will observe
    ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session))
    ok(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "hello", "new_string": "bye"},
                               session=session))
    edit_call = next(c for c in ctx.fs.calls if c[0] == "edit_text")
    assert edit_call[3] == EditIntent(Version(seen))


async def test_read_propagates_fs_not_found_for_an_absent_file(fake: Callable[..., Context], session: Session) -> None:
    """read tool: propagates FS_NOT_FOUND for an absent file"""
    failed(await fake().tools.execute("read", {"file_path": "nope.txt"}, session=session), "FS_NOT_FOUND",
           'Error: cannot read "/abs/nope.txt": not found')


async def test_read_rejects_a_non_regular_target(fake: Callable[..., Context], session: Session) -> None:
    """read tool: rejects a non-regular target"""
    ctx = fake(dirs=("d",))
    failed(await ctx.tools.execute("read", {"file_path": "d"}, session=session), "FS_NOT_REGULAR_FILE",
           'Error: cannot read "/abs/d": not a regular file')
    assert ctx.fs.count("read_text") == ctx.fs.count("stream_text") == 0


async def test_read_streams_a_large_file_instead_of_reading_whole(fake: Callable[..., Context], session: Session) -> None:
    """read tool: streams a large file (size at/above the cap) instead of reading whole"""
    ctx = fake(files={"big.txt": "a\nb\n", "under.txt": "c\n"})
    ctx.fs.sizes["/abs/big.txt"] = 10 * 1024 * 1024
    ctx.fs.sizes["/abs/under.txt"] = 10 * 1024 * 1024 - 1
    result = ok(await ctx.tools.execute("read", {"file_path": "big.txt"}, session=session))
    assert "1: a\n2: b\n\n(End of file - total 2 lines)" in result.text
    assert (ctx.fs.count("stream_text"), ctx.fs.count("read_text")) == (1, 0)
    ok(await ctx.tools.execute("read", {"file_path": "under.txt"}, session=session))
    assert (ctx.fs.count("stream_text"), ctx.fs.count("read_text")) == (1, 1)


async def test_read_streams_when_the_backend_reports_no_size(fake: Callable[..., Context], session: Session) -> None:
    """read tool: streams when the backend reports no size (never buffers a size-less file)"""
    ctx = fake(files={"a.txt": "x\n"})
    ctx.fs.sizes["/abs/a.txt"] = None
    ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session))
    assert (ctx.fs.count("stream_text"), ctx.fs.count("read_text")) == (1, 0)


async def test_read_surfaces_a_byte_capped_read_as_a_truncated_footer(fake: Callable[..., Context], session: Session) -> None:
    """read tool: surfaces a byte-capped read as a truncated footer"""
    ctx = fake(files={"big.txt": ("y" * 100 + "\n") * 2000})
    result = ok(await ctx.tools.execute("read", {"file_path": "big.txt"}, session=session))
    assert result.text.endswith("\n\n(Output capped. Showing lines 1-506. Use offset=507 to continue.)\n</content>")


# ==========================================================================================
# §7.5 write tool / edit tool
# ==========================================================================================

async def test_write_formats_a_create_result_and_uses_create_if_absent(fake: Callable[..., Context], session: Session) -> None:
    """write tool: formats a create result and uses createIfAbsent (unobserved, with the gate)"""
    ctx = fake()
    result = ok(await ctx.tools.execute("write", {"file_path": "new.txt", "content": "fresh\n"}, session=session),
                envelope("/abs/new.txt", "Created file"))
    assert result.meta is None
    (_, key, content, intent), = [c for c in ctx.fs.calls if c[0] == "write_text"]
    assert (key, content, intent) == ("/abs/new.txt", "fresh\n", CreateIfAbsent())


@pytest.mark.parametrize("profile,suffix", [("reference", ""), ("default", " — re-read the file, then retry")])
async def test_write_propagates_a_backend_fs_error_with_its_code(fake: Callable[..., Context], session: Session,
                                                                profile: str, suffix: str) -> None:
    """write tool: propagates a backend FsError as an isError result carrying its code"""
    ctx = fake(profile=profile)
    ctx.fs.failures["write_text"] = FsError("blocked", FsErrorCode.STALE_VERSION)
    failed(await ctx.tools.execute("write", {"file_path": "a.txt", "content": "x"}, session=session),
           "FS_STALE_VERSION", "Error: blocked" + suffix)


async def _read_then_edit(ctx: Context, session: Session, args: dict[str, Any]) -> ToolResult:
    ok(await ctx.tools.execute("read", {"file_path": args["file_path"]}, session=session))
    return await ctx.tools.execute("edit", args, session=session)


async def test_edit_formats_a_single_replacement_success_after_a_read(fake: Callable[..., Context], session: Session) -> None:
    """edit tool: formats a single-replacement success after a read"""
    ctx = fake(files={"a.txt": "hello world"})
    ok(await _read_then_edit(ctx, session, {"file_path": "a.txt", "old_string": "world", "new_string": "there"}),
       "The file /abs/a.txt has been updated successfully.")
    assert ctx.fs.text("/abs/a.txt") == "hello there"


async def test_edit_formats_the_replace_all_success_message_distinctly(fake: Callable[..., Context], session: Session) -> None:
    """edit tool: formats the replace_all success message distinctly (wording follows the argument)"""
    ctx = fake(files={"a.txt": "b b b", "one.txt": "b"})
    ok(await _read_then_edit(ctx, session, {"file_path": "a.txt", "old_string": "b", "new_string": "c",
                                            "replace_all": True}),
       "The file /abs/a.txt has been updated. All occurrences were successfully replaced.")
    ok(await _read_then_edit(ctx, session, {"file_path": "one.txt", "old_string": "b", "new_string": "c",
                                            "replace_all": True}),
       "The file /abs/one.txt has been updated. All occurrences were successfully replaced.")
    ok(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "c c c", "new_string": "d",
                                        "replace_all": False}, session=session),
       "The file /abs/a.txt has been updated successfully.")


async def test_edit_rejects_identical_old_and_new_strings(fake: Callable[..., Context], session: Session) -> None:
    """edit tool: rejects identical old/new strings"""
    ctx = fake(files={"a.txt": "x"})
    failed(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "x", "new_string": "x"}, session=session),
           None, "Error: old_string and new_string must differ")
    assert ctx.fs.calls == []


async def test_edit_rejects_an_empty_old_string(fake: Callable[..., Context], session: Session) -> None:
    """edit tool: rejects an empty old_string (whitespace-only is allowed)"""
    ctx = fake(files={"a.txt": "a  b"})
    failed(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "", "new_string": "x"}, session=session),
           None, "Error: old_string must be a non-empty string")
    ok(await _read_then_edit(ctx, session, {"file_path": "a.txt", "old_string": "  ", "new_string": " "}))
    assert ctx.fs.text("/abs/a.txt") == "a b"


async def test_edit_propagates_fs_not_observed_when_the_file_was_never_read(fake: Callable[..., Context], session: Session) -> None:
    """edit tool: propagates FS_NOT_OBSERVED when the file was never read (the gate decides)"""
    ctx = fake(files={"a.txt": "x"})
    failed(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "x", "new_string": "y"}, session=session),
           "FS_NOT_OBSERVED", 'Error: edit requires reading "/abs/a.txt" first')
    assert ctx.fs.count("edit_text") == 0


# ==========================================================================================
# §7.5 tool-owned presentation (pure presentCall)
# ==========================================================================================

def _present(ctx: Context, tool: str, args: Any) -> Any:
    definition = ctx.tools.get(tool)
    assert definition is not None and definition.present_call is not None
    return definition.present_call(args)


def test_read_presents_a_generic_card_with_the_read_window(fake: Callable[..., Context]) -> None:
    """tool-owned presentation: read: generic card titled by file with the read window, read kind, location with the offset line"""
    assert _present(fake(), "read", {"file_path": "src/a.ts", "offset": 12, "limit": 40}) == {
        "card": "generic", "title": "Read src/a.ts (12 - 51)", "kind": "read", "locations": [{"path": "src/a.ts", "line": 12}]
    }


def test_read_presents_a_bare_title_when_offset_and_limit_are_unset(fake: Callable[..., Context]) -> None:
    """tool-owned presentation: read: bare title and line-1 location when offset/limit are unset"""
    assert _present(fake(), "read", {"file_path": "a.txt"}) == {
        "card": "generic", "title": "Read a.txt", "kind": "read", "locations": [{"path": "a.txt", "line": 1}]
    }


def test_read_presents_from_line_n_when_only_offset_is_set(fake: Callable[..., Context]) -> None:
    """tool-owned presentation: read: "from line N" window when only offset is set"""
    card = _present(fake(), "read", {"file_path": "a.txt", "offset": 5})
    assert (card["title"], card["locations"]) == ("Read a.txt (from line 5)", [{"path": "a.txt", "line": 5}])


def test_write_presents_a_new_file_style_diff_card(fake: Callable[..., Context]) -> None:
    """tool-owned presentation: write: diff card (new-file style, oldText null), location"""
    assert _present(fake(), "write", {"file_path": "a.txt", "content": "x\n"}) == {
        "card": "diff", "title": "Write a.txt", "diffs": [{"path": "a.txt", "oldText": None, "newText": "x\n"}],
        "locations": [{"path": "a.txt"}],
    }


def test_read_presents_a_limit_with_no_offset_from_line_1(fake: Callable[..., Context]) -> None:
    """tool-owned presentation: read: a limit with no offset windows from line 1"""
    card = _present(fake(), "read", {"file_path": "a.txt", "limit": 10})
    assert card["title"] == "Read a.txt (1 - 10)" and card["locations"] == [{"path": "a.txt", "line": 1}]


def test_edit_presents_an_empty_old_string_as_old_text_null(fake: Callable[..., Context]) -> None:
    """tool-owned presentation: edit: an empty old_string maps to oldText null (a whole-file replace diff)"""
    assert _present(fake(), "edit", {"file_path": "a.txt", "old_string": "", "new_string": "all"}) == {
        "card": "diff", "title": "Edit a.txt", "diffs": [{"path": "a.txt", "oldText": None, "newText": "all"}],
        "locations": [{"path": "a.txt"}],
    }


def test_presenters_soft_validate_and_format_numbers_like_js(fake: Callable[..., Context]) -> None:
    ctx = fake()
    assert _present(ctx, "read", {"file_path": 3}) is None
    assert _present(ctx, "write", ["a"]) is None
    assert _present(ctx, "edit", {"file_path": "a"}) is None
    assert _present(ctx, "read", {"file_path": "a", "offset": 2.0, "limit": 1.5})["title"] == "Read a (2 - 2.5)"


# ==========================================================================================
# §7.5 result-time contextual diff (meta + presentResult)
# ==========================================================================================

EIGHT = "".join(f"line{i}\n" for i in range(1, 9))


def _present_result(ctx: Context, tool: str, args: Any, result: ToolResult) -> Any:
    definition = ctx.tools.get(tool)
    assert definition is not None and definition.present_result is not None
    return definition.present_result(args, result)


async def test_edit_execute_attaches_the_applied_hunk_as_meta(fake: Callable[..., Context], session: Session) -> None:
    """result-time contextual diff: edit: execute attaches the applied hunk as meta { diffs }"""
    ctx = fake(files={"a.txt": EIGHT})
    result = ok(await _read_then_edit(ctx, session, {"file_path": "a.txt", "old_string": "line4", "new_string": "CHANGED"}))
    assert result.meta == {"diffs": [{
        "path": "a.txt",
        "oldText": "line1\nline2\nline3\nline4\nline5\nline6\nline7",
        "newText": "line1\nline2\nline3\nCHANGED\nline5\nline6\nline7",
    }]}


async def test_edit_present_result_turns_the_meta_into_a_diff_card(fake: Callable[..., Context], session: Session) -> None:
    """result-time contextual diff: edit: presentResult turns the meta into a diff result card"""
    ctx = fake(files={"a.txt": EIGHT})
    args = {"file_path": "a.txt", "old_string": "line4", "new_string": "CHANGED"}
    result = ok(await _read_then_edit(ctx, session, args))
    assert _present_result(ctx, "edit", args, result) == {"card": "diff", "title": "Edit a.txt",
                                                          "diffs": result.meta["diffs"]}


async def test_write_overwrite_attaches_a_contextual_hunk(fake: Callable[..., Context], session: Session) -> None:
    """result-time contextual diff: write OVERWRITE: execute attaches a contextual hunk; presentResult renders a diff card"""
    ctx = fake(files={"a.txt": "a\nb\nc\n"})
    ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session))
    args = {"file_path": "a.txt", "content": "a\nB\nc\n"}
    result = ok(await ctx.tools.execute("write", args, session=session), envelope("/abs/a.txt", "Updated file"))
    assert result.meta == {"diffs": [{"path": "a.txt", "oldText": "a\nb\nc", "newText": "a\nB\nc"}]}
    assert _present_result(ctx, "write", args, result) == {"card": "diff", "title": "Write a.txt",
                                                           "diffs": result.meta["diffs"]}


async def test_write_create_has_no_meta_but_present_result_renders_a_whole_file_card(
        fake: Callable[..., Context], session: Session) -> None:
    """result-time contextual diff: write CREATE: no before-version → no meta, but presentResult still renders a whole-file diff card"""
    ctx = fake()
    args = {"file_path": "n.txt", "content": "brand new\n"}
    result = ok(await ctx.tools.execute("write", args, session=session))
    assert result.meta is None
    assert _present_result(ctx, "write", args, result) == {
        "card": "diff", "title": "Write n.txt", "diffs": [{"path": "n.txt", "oldText": None, "newText": "brand new\n"}]
    }


async def test_write_identical_overwrite_falls_back_to_a_whole_file_diff(fake: Callable[..., Context], session: Session) -> None:
    """result-time contextual diff: write OVERWRITE with identical content: a before exists but yields no hunk → no meta, presentResult falls back to a whole-file diff"""
    ctx = fake(files={"a.txt": "same\n"})
    ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session))
    args = {"file_path": "a.txt", "content": "same\n"}
    result = ok(await ctx.tools.execute("write", args, session=session), envelope("/abs/a.txt", "Updated file"))
    assert result.meta is None
    assert _present_result(ctx, "write", args, result)["diffs"] == [{"path": "a.txt", "oldText": None, "newText": "same\n"}]


async def test_present_result_returns_none_on_an_error_result(fake: Callable[..., Context], session: Session) -> None:
    """result-time contextual diff: presentResult returns undefined on an error result (nothing applied)"""
    ctx = fake(files={"a.txt": "x"})
    edit_args = {"file_path": "a.txt", "old_string": "x", "new_string": "y"}
    write_args = {"file_path": "a.txt", "content": "z"}
    edit = await ctx.tools.execute("edit", edit_args, session=session)
    write = await ctx.tools.execute("write", write_args, session=session)
    assert edit.is_error and write.is_error
    assert _present_result(ctx, "edit", edit_args, edit) is None
    assert _present_result(ctx, "write", write_args, write) is None


@pytest.mark.parametrize("meta", [None, {}, {"diffs": []}, {"diffs": "x"}, {"diffs": [{"path": 1, "newText": "a"}]}, [1]])
def test_edit_present_result_returns_none_on_malformed_meta(fake: Callable[..., Context], meta: Any) -> None:
    """result-time contextual diff: edit presentResult returns undefined on malformed meta (defensive narrowing)"""
    ctx = fake()
    result = ToolResult(content=[{"type": "text", "text": "The file /abs/a.txt has been updated successfully."}], meta=meta)
    assert _present_result(ctx, "edit", {"file_path": "a.txt", "old_string": "a", "new_string": "b"}, result) is None


@pytest.mark.parametrize("meta", [None, {"diffs": "x"}, {"diffs": [None]}, "text"])
def test_write_present_result_falls_back_to_a_whole_file_diff_on_malformed_meta(fake: Callable[..., Context], meta: Any) -> None:
    """result-time contextual diff: write presentResult falls back to a whole-file diff on malformed meta (never leaks the result text)"""
    ctx = fake()
    result = ToolResult(content=[{"type": "text", "text": envelope("/abs/a.txt", "Updated file")}], meta=meta)
    card = _present_result(ctx, "write", {"file_path": "a.txt", "content": "c"}, result)
    assert card == {"card": "diff", "title": "Write a.txt", "diffs": [{"path": "a.txt", "oldText": None, "newText": "c"}]}


# ==========================================================================================
# §7.5 read caps are plugin config
# ==========================================================================================

async def test_a_configured_read_limit_is_both_the_default_and_the_cap(fake: Callable[..., Context], session: Session) -> None:
    """read caps are plugin config: a configured readLimit is both the default and the cap, and the schema names it"""
    ctx = fake(files={"a.txt": "one\ntwo\nthree\nfour"}, read_limit=2)
    result = ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session))
    assert result.text.endswith("\n\n(Showing lines 1-2 of 4. Use offset=3 to continue.)\n</content>")
    failed(await ctx.tools.execute("read", {"file_path": "a.txt", "limit": 3}, session=session), None,
           "Error: limit must be less than or equal to 2")
    read = next(s for s in ctx.tools.schemas() if s["name"] == "read")
    assert read["parameters"]["properties"]["limit"]["description"].endswith("Defaults to 2.")


async def test_a_configured_read_max_line_length_truncates_lines(fake: Callable[..., Context], session: Session) -> None:
    """read caps are plugin config: a configured readMaxLineLength truncates lines at the configured length"""
    ctx = fake(files={"a.txt": "abcdefgh"}, read_max_line_length=4)
    assert "\n1: abcd... (line truncated to 4 chars)\n" in ok(
        await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session)).text


async def test_a_configured_read_max_bytes_caps_the_window(fake: Callable[..., Context], session: Session) -> None:
    """read caps are plugin config: a configured readMaxBytes caps the window at the configured bytes"""
    ctx = fake(files={"a.txt": "aaaa\nbbbb\ncccc"}, read_max_bytes=9)
    text = ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session)).text
    assert "(Output capped." in text and "cccc" not in text


async def test_a_configured_read_stream_min_size_routes_smaller_files_to_streaming(
        fake: Callable[..., Context], session: Session) -> None:
    """read caps are plugin config: a configured readStreamMinSize routes smaller files to the streaming path"""
    ctx = fake(files={"a.txt": "tiny\n"}, read_stream_min_size=5)
    ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session))
    assert (ctx.fs.count("stream_text"), ctx.fs.count("read_text")) == (1, 0)


# ==========================================================================================
# §7.8 default deployment (with the policy) — real local provider, files read back
# ==========================================================================================

@pytest.fixture
def disk(make_ctx: Callable[..., Context], ws: str) -> tuple[Context, Session, str]:
    """The reference-profile default deployment over ``ws`` and a session rooted there."""
    return make_ctx(profile="reference"), Session(ws), ws


async def test_write_creates_a_file_with_exactly_the_requested_bytes(disk: tuple[Context, Session, str]) -> None:
    """default deployment / write → disk: creates a file with exactly the requested bytes"""
    ctx, session, ws = disk
    content = "line one\r\nline two\n\ttabbed \u00e9 😀\n\ufeffmid-BOM\n"
    ok(await ctx.tools.execute("write", {"file_path": "sub/new.txt", "content": content}, session=session),
       envelope(f"{ws}/sub/new.txt", "Created file"))
    assert get(f"{ws}/sub/new.txt") == content.encode()


async def test_rejects_overwriting_an_existing_file_without_reading_it_first(disk: tuple[Context, Session, str]) -> None:
    """default deployment / write → disk: rejects overwriting an existing file without reading it first"""
    ctx, session, ws = disk
    put(f"{ws}/a.txt", "keep")
    failed(await ctx.tools.execute("write", {"file_path": "a.txt", "content": "x"}, session=session), "FS_NOT_OBSERVED",
           f'Error: cannot overwrite existing "{ws}/a.txt" without reading it first')
    assert get(f"{ws}/a.txt") == b"keep"


async def test_allows_overwriting_after_a_read(disk: tuple[Context, Session, str]) -> None:
    """default deployment / write → disk: allows overwriting after a read"""
    ctx, session, ws = disk
    put(f"{ws}/a.txt", "old\n")
    ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session))
    ok(await ctx.tools.execute("write", {"file_path": "a.txt", "content": "new\n"}, session=session),
       envelope(f"{ws}/a.txt", "Updated file"))
    assert get(f"{ws}/a.txt") == b"new\n"


async def test_rejects_a_full_overwrite_when_the_file_changed_since_the_read(disk: tuple[Context, Session, str]) -> None:
    """default deployment / write → disk: rejects a full overwrite when the file changed since the read (stale)"""
    ctx, session, ws = disk
    put(f"{ws}/a.txt", "v1\n")
    ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session))
    rewrite_in_place(f"{ws}/a.txt", b"v2 external\n")
    failed(await ctx.tools.execute("write", {"file_path": "a.txt", "content": "mine\n"}, session=session),
           "FS_STALE_VERSION", f'Error: cannot write "{ws}/a.txt": file changed since it was read')
    assert get(f"{ws}/a.txt") == b"v2 external\n"


async def test_read_returns_line_numbered_content(disk: tuple[Context, Session, str]) -> None:
    """default deployment / read: returns line-numbered content"""
    ctx, session, ws = disk
    put(f"{ws}/a.txt", "alpha\nbeta\n")
    ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session),
       envelope(f"{ws}/a.txt", "1: alpha\n2: beta\n\n(End of file - total 2 lines)"))


async def test_read_reports_a_binary_file_as_an_error(disk: tuple[Context, Session, str]) -> None:
    """default deployment / read: reports a binary file as an error"""
    ctx, session, ws = disk
    put(f"{ws}/a.bin", b"\x7fELF\x02\x01\x01\x00")
    failed(await ctx.tools.execute("read", {"file_path": "a.bin"}, session=session), "FS_NOT_TEXT",
           f'Error: cannot read "{ws}/a.bin": binary file')


async def test_read_paginates_a_multi_line_file_with_offset_and_limit(disk: tuple[Context, Session, str]) -> None:
    """default deployment / read: paginates a multi-line file with offset/limit"""
    ctx, session, ws = disk
    put(f"{ws}/a.txt", "one\ntwo\nthree\nfour\n")
    ok(await ctx.tools.execute("read", {"file_path": "a.txt", "offset": 2, "limit": 2}, session=session),
       envelope(f"{ws}/a.txt", "2: two\n3: three\n\n(Showing lines 2-3 of 4. Use offset=4 to continue.)"))


async def test_edit_applies_a_unique_literal_replacement_after_a_read(disk: tuple[Context, Session, str]) -> None:
    """default deployment / edit → disk: applies a unique literal replacement after a read"""
    ctx, session, ws = disk
    put(f"{ws}/a.txt", "hello world\n")
    ok(await _read_then_edit(ctx, session, {"file_path": "a.txt", "old_string": "world", "new_string": "there"}),
       f"The file {ws}/a.txt has been updated successfully.")
    assert get(f"{ws}/a.txt") == b"hello there\n"


async def test_edit_before_any_read_is_rejected_leaving_the_file_untouched(disk: tuple[Context, Session, str]) -> None:
    """default deployment / edit → disk: rejects an edit before any read, leaving the file untouched"""
    ctx, session, ws = disk
    put(f"{ws}/a.txt", "hello world\n")
    inode = os.stat(f"{ws}/a.txt").st_ino
    failed(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "world", "new_string": "x"},
                                   session=session),
           "FS_NOT_OBSERVED", f'Error: edit requires reading "{ws}/a.txt" first')
    assert get(f"{ws}/a.txt") == b"hello world\n" and os.stat(f"{ws}/a.txt").st_ino == inode


async def test_a_windowed_read_authorizes_an_edit_when_the_file_is_unchanged(disk: tuple[Context, Session, str]) -> None:
    """default deployment / edit → disk: lets a WINDOWED read authorize an edit when the file is unchanged (freshness, not full-view)"""
    ctx, session, ws = disk
    put(f"{ws}/a.txt", "".join(f"line {i}\n" for i in range(1, 21)))
    ok(await ctx.tools.execute("read", {"file_path": "a.txt", "limit": 1}, session=session))
    ok(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "line 12\n", "new_string": "LINE 12\n"},
                               session=session))
    assert b"\nLINE 12\n" in get(f"{ws}/a.txt")


async def test_rejects_an_edit_when_the_file_changed_since_the_windowed_read(disk: tuple[Context, Session, str]) -> None:
    """default deployment / edit → disk: rejects an edit when the file changed since the windowed read (stale before matching)"""
    ctx, session, ws = disk
    put(f"{ws}/a.txt", "".join(f"line {i}\n" for i in range(1, 21)))
    ok(await ctx.tools.execute("read", {"file_path": "a.txt", "limit": 1}, session=session))
    rewrite_in_place(f"{ws}/a.txt", b"totally different\n")
    failed(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "line 12", "new_string": "x"},
                                   session=session),
           "FS_STALE_VERSION", f'Error: cannot edit "{ws}/a.txt": file changed since it was read')
    assert get(f"{ws}/a.txt") == b"totally different\n"


async def test_rejects_an_ambiguous_match_without_replace_all(disk: tuple[Context, Session, str]) -> None:
    """default deployment / edit → disk: rejects an ambiguous match without replace_all"""
    ctx, session, ws = disk
    put(f"{ws}/a.txt", "x = 1\nx = 1\n")
    failed(await _read_then_edit(ctx, session, {"file_path": "a.txt", "old_string": "x = 1", "new_string": "x = 2"}),
           "FS_AMBIGUOUS_EDIT",
           f'Error: old_string matched 2 times in "{ws}/a.txt"; provide a more specific old_string or set replace_all to true')
    assert get(f"{ws}/a.txt") == b"x = 1\nx = 1\n"


async def test_replaces_all_matches_with_replace_all(disk: tuple[Context, Session, str]) -> None:
    """default deployment / edit → disk: replaces all matches with replace_all"""
    ctx, session, ws = disk
    put(f"{ws}/a.txt", "x = 1\nx = 1\n")
    ok(await _read_then_edit(ctx, session, {"file_path": "a.txt", "old_string": "x = 1", "new_string": "x = 2",
                                            "replace_all": True}))
    assert get(f"{ws}/a.txt") == b"x = 2\nx = 2\n"


async def test_supports_a_full_write_edit_cycle_without_an_intervening_read(disk: tuple[Context, Session, str]) -> None:
    """default deployment / edit → disk: supports a full write→edit cycle without an intervening read"""
    ctx, session, ws = disk
    ok(await ctx.tools.execute("write", {"file_path": "c.txt", "content": "status: draft\n"}, session=session))
    ok(await ctx.tools.execute("edit", {"file_path": "c.txt", "old_string": "draft", "new_string": "review"},
                               session=session))
    ok(await ctx.tools.execute("edit", {"file_path": "c.txt", "old_string": "review", "new_string": "final"},
                               session=session))
    ok(await ctx.tools.execute("write", {"file_path": "c.txt", "content": "status: shipped\n"}, session=session))
    assert get(f"{ws}/c.txt") == b"status: shipped\n"


async def test_a_direct_ctx_fs_read_text_records_no_observed_state(disk: tuple[Context, Session, str]) -> None:
    """the gate records only through the events: a direct ctx.fs.readText records no observed-state, so a later edit rejects"""
    ctx, session, ws = disk
    put(f"{ws}/a.txt", "x\n")
    assert await ctx.fs.read_text(await ctx.fs.resolve("a.txt")) == "x\n"
    failed(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "x", "new_string": "y"}, session=session),
           "FS_NOT_OBSERVED")


def _count_stats(ctx: Context) -> list[int]:
    calls = [0]
    fs = ctx.fs
    original = fs.stat

    async def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return await original(*args, **kwargs)

    fs.stat = counting  # type: ignore[method-assign]
    return calls


@pytest.mark.parametrize("policy", [True, False], ids=["policy", "bare"])
async def test_read_stats_once_write_and_edit_never_stat_in_the_tool(make_ctx: Callable[..., Context], ws: str,
                                                                    policy: bool) -> None:
    """stat budget: read stats once; write and edit never stat in the tool (the gate stats zero too);
    bare provider: neither write nor edit stats in the tool on the bare path"""
    ctx = make_ctx(profile="reference", policy=policy)
    session = Session(ws)
    put(f"{ws}/a.txt", "a\n")
    calls = _count_stats(ctx)
    ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session))
    assert calls[0] == 1
    ok(await ctx.tools.execute("write", {"file_path": "a.txt", "content": "b\n"}, session=session))
    ok(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "b", "new_string": "c"}, session=session))
    ok(await ctx.tools.execute("write", {"file_path": "n.txt", "content": "n"}, session=session))
    assert calls[0] == 1


# ==========================================================================================
# §7.8 bare provider (no policy)
# ==========================================================================================

@pytest.fixture
def bare(make_ctx: Callable[..., Context], ws: str) -> tuple[Context, Session, str]:
    return make_ctx(profile="reference", policy=False), Session(ws), ws


async def test_bare_read_works(bare: tuple[Context, Session, str]) -> None:
    """bare provider: read works (it never needed policy)"""
    ctx, session, ws = bare
    put(f"{ws}/a.txt", "x")
    ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session),
       envelope(f"{ws}/a.txt", "1: x\n\n(End of file - total 1 lines)"))


async def test_bare_write_unconditionally_creates_a_new_file(bare: tuple[Context, Session, str]) -> None:
    """bare provider: write unconditionally creates a new file"""
    ctx, session, ws = bare
    ok(await ctx.tools.execute("write", {"file_path": "n.txt", "content": "n"}, session=session),
       envelope(f"{ws}/n.txt", "Created file"))
    assert get(f"{ws}/n.txt") == b"n"


async def test_bare_write_unconditionally_overwrites_an_existing_unread_file(bare: tuple[Context, Session, str]) -> None:
    """bare provider: write unconditionally OVERWRITES an existing unread file"""
    ctx, session, ws = bare
    put(f"{ws}/a.txt", "old")
    ok(await ctx.tools.execute("write", {"file_path": "a.txt", "content": "new"}, session=session),
       envelope(f"{ws}/a.txt", "Updated file"))
    assert get(f"{ws}/a.txt") == b"new"


async def test_bare_edit_unconditionally_edits_an_unread_existing_file(bare: tuple[Context, Session, str]) -> None:
    """bare provider: edit unconditionally edits an UNREAD existing file"""
    ctx, session, ws = bare
    put(f"{ws}/a.txt", "abc")
    ok(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "b", "new_string": "B"}, session=session))
    assert get(f"{ws}/a.txt") == b"aBc"


async def test_bare_edit_of_a_missing_target_reports_fs_stale_version(bare: tuple[Context, Session, str]) -> None:
    """bare provider: edit of a MISSING target reports FS_STALE_VERSION even on the unguarded path"""
    ctx, session, ws = bare
    failed(await ctx.tools.execute("edit", {"file_path": "nope.txt", "old_string": "a", "new_string": "b"},
                                   session=session),
           "FS_STALE_VERSION", f'Error: cannot edit "{ws}/nope.txt": file changed since it was read')
    assert not os.path.exists(f"{ws}/nope.txt")


async def test_bare_edit_still_enforces_literal_match_codes(bare: tuple[Context, Session, str]) -> None:
    """bare provider: edit still enforces literal-match codes (FS_EDIT_NOT_FOUND), unrelated to freshness"""
    ctx, session, ws = bare
    put(f"{ws}/a.txt", "abc")
    failed(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "zzz", "new_string": "y"},
                                   session=session),
           "FS_EDIT_NOT_FOUND", f'Error: old_string was not found in "{ws}/a.txt"')


# ==========================================================================================
# §7.8 per-session cwd (§4.5)
# ==========================================================================================

async def test_writes_a_relative_path_into_the_session_cwd_not_config_cwd(make_ctx: Callable[..., Context], ws: str) -> None:
    """per-session cwd: writes a relative path into the SESSION cwd, not config.cwd"""
    os.mkdir(f"{ws}/config")
    os.mkdir(f"{ws}/session")
    ctx = make_ctx(profile="reference", cwd=f"{ws}/config")
    ok(await ctx.tools.execute("write", {"file_path": "rel.txt", "content": "s"}, session=Session(f"{ws}/session")),
       envelope(f"{ws}/session/rel.txt", "Created file"))
    ok(await ctx.tools.execute("write", {"file_path": "rel.txt", "content": "c"}, session=Session(None)),
       envelope(f"{ws}/config/rel.txt", "Created file"))  # no session cwd: the provider's default
    ok(await ctx.tools.execute("write", {"file_path": "nos.txt", "content": "c"}))  # no session at all
    assert (get(f"{ws}/session/rel.txt"), get(f"{ws}/config/rel.txt"), get(f"{ws}/config/nos.txt")) == (b"s", b"c", b"c")


async def test_read_and_edit_both_resolve_against_the_session_cwd(make_ctx: Callable[..., Context], ws: str) -> None:
    """per-session cwd: read + edit both resolve against the session cwd (end-to-end)"""
    put(f"{ws}/session/a.txt", "session copy\n")
    put(f"{ws}/a.txt", "config copy\n")
    ctx = make_ctx(profile="reference")
    session = Session(f"{ws}/session")
    assert "1: session copy" in ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session)).text
    ok(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "session", "new_string": "edited"},
                               session=session), f"The file {ws}/session/a.txt has been updated successfully.")
    assert (get(f"{ws}/session/a.txt"), get(f"{ws}/a.txt")) == (b"edited copy\n", b"config copy\n")
    ok(await ctx.tools.execute("read", {"file_path": f"{ws}/a.txt"}, session=session))  # absolute ignores the cwd


# ==========================================================================================
# §7.8 signal, concurrency, and the fs/observed contract
# ==========================================================================================

@pytest.mark.parametrize("profile", ["reference", "default"])
async def test_a_pre_aborted_signal_makes_read_write_edit_return_fs_aborted(make_ctx: Callable[..., Context], ws: str,
                                                                           profile: str) -> None:
    """signal, concurrency, and the fs/observed contract: a pre-aborted signal makes read/write/edit return isError FS_ABORTED"""
    ctx = make_ctx(profile=profile, policy=False)
    session = Session(ws)
    put(f"{ws}/a.txt", "keep")
    aborted = AbortSignal.aborted_signal()
    for tool, args in (("read", {"file_path": "a.txt"}), ("write", {"file_path": "new.txt", "content": "x"}),
                       ("edit", {"file_path": "a.txt", "old_string": "keep", "new_string": "lost"})):
        failed(await ctx.tools.execute(tool, args, session=session, signal=aborted), "FS_ABORTED", "Error: resolve aborted")
    assert os.listdir(ws) == ["a.txt"] and get(f"{ws}/a.txt") == b"keep"


async def test_two_concurrent_edits_of_the_same_file_same_session_one_wins(disk: tuple[Context, Session, str]) -> None:
    """signal, concurrency, and the fs/observed contract: two concurrent edits of the same file, same session: one wins, one FS_STALE_VERSION"""
    ctx, session, ws = disk
    put(f"{ws}/a.txt", "left right\n")
    ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session))
    results: list[ToolResult] = []

    async def edit(old: str, new: str) -> None:
        results.append(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": old, "new_string": new},
                                               session=session))

    async with anyio.create_task_group() as tg:
        tg.start_soon(edit, "left", "L")
        tg.start_soon(edit, "right", "R")
    assert sorted(r.is_error for r in results) == [False, True]
    assert next(r for r in results if r.is_error).error == ErrorInfo(FS_ERROR, "FS_STALE_VERSION")
    assert get(f"{ws}/a.txt") in (b"L right\n", b"left R\n")


async def test_a_stale_observed_version_from_an_older_read_fails_closed(disk: tuple[Context, Session, str]) -> None:
    """signal, concurrency, and the fs/observed contract: a stale observed version from an older read fails closed at edit CAS"""
    ctx, session, ws = disk
    put(f"{ws}/a.txt", "v1\n")
    seen: list[tuple[Any, Any]] = []
    ctx.on(FS_OBSERVED, lambda target, version, actor: seen.append((target, version)))
    ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session))
    older_target, older_version = seen[-1]
    rewrite_in_place(f"{ws}/a.txt", b"v2\n")
    ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session))
    ctx.emit(FS_OBSERVED, older_target, older_version, ToolExecution(session=session))  # the older recorder lands last
    failed(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "v2", "new_string": "v3"},
                                   session=session), "FS_STALE_VERSION")
    assert get(f"{ws}/a.txt") == b"v2\n"


async def test_a_throwing_fs_observed_listener_surfaces_as_is_error_but_the_mutation_hit_disk(
        disk: tuple[Context, Session, str]) -> None:
    """signal, concurrency, and the fs/observed contract: a throwing fs/observed listener surfaces as isError, but the mutation already hit disk"""
    ctx, session, ws = disk

    def explode(*args: Any) -> None:
        raise RuntimeError("recorder exploded")

    ctx.on(FS_OBSERVED, explode)
    failed(await ctx.tools.execute("write", {"file_path": "n.txt", "content": "landed"}, session=session), None,
           "Error: recorder exploded")
    assert get(f"{ws}/n.txt") == b"landed"


# ==========================================================================================
# §4.10 where fs/observed is emitted; §3.4 end-to-end policy cases
# ==========================================================================================

async def test_fs_observed_is_emitted_once_per_success_with_the_resulting_version(disk: tuple[Context, Session, str]) -> None:
    """§4.10: read → the pre-read stat's version, write/edit → the post-write version"""
    ctx, session, ws = disk
    put(f"{ws}/a.txt", "one\n")
    seen: list[tuple[str, Any]] = []
    ctx.on(FS_OBSERVED, lambda target, version, actor: seen.append((target.key, version)))
    ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session))
    target = await ctx.fs.resolve("a.txt")
    assert seen == [(f"{ws}/a.txt", (await ctx.fs.stat(target)).version)]
    ok(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"}, session=session))
    ok(await ctx.tools.execute("write", {"file_path": "a.txt", "content": "three\n"}, session=session))
    assert len(seen) == 3 and seen[-1][1] == (await ctx.fs.stat(target)).version and seen[1][1] != seen[2][1]


async def test_fs_observed_is_never_emitted_on_a_failure_in_the_reference_profile(disk: tuple[Context, Session, str]) -> None:
    """§4.10: never emitted on any failure (read of a missing file, out-of-range read, failed write/edit)"""
    ctx, session, ws = disk
    put(f"{ws}/a.txt", "x\n")
    seen: list[Any] = []
    ctx.on(FS_OBSERVED, lambda *args: seen.append(args))
    for tool, args in (("read", {"file_path": "missing.txt"}), ("read", {"file_path": "a.txt", "offset": 5}),
                       ("write", {"file_path": "a.txt", "content": "y"}),
                       ("edit", {"file_path": "a.txt", "old_string": "x", "new_string": "y"})):
        assert (await ctx.tools.execute(tool, args, session=session)).is_error
    assert seen == [], "fs/observed was emitted for a failed call (REFERENCE-SPEC §4.10)"


async def test_a_caller_without_a_session_can_read_and_create_but_never_overwrite_or_edit(
        disk: tuple[Context, Session, str]) -> None:
    """§3.4: a non-agent caller can read and create new files but never overwrite or edit an existing one"""
    ctx, _, ws = disk
    put(f"{ws}/a.txt", "x\n")
    ok(await ctx.tools.execute("read", {"file_path": f"{ws}/a.txt"}))
    failed(await ctx.tools.execute("write", {"file_path": f"{ws}/a.txt", "content": "y"}), "FS_NOT_OBSERVED")
    failed(await ctx.tools.execute("edit", {"file_path": f"{ws}/a.txt", "old_string": "x", "new_string": "y"}),
           "FS_NOT_OBSERVED")
    ok(await ctx.tools.execute("write", {"file_path": f"{ws}/new.txt", "content": "n"}))
    failed(await ctx.tools.execute("edit", {"file_path": f"{ws}/new.txt", "old_string": "n", "new_string": "m"}),
           "FS_NOT_OBSERVED")
    assert get(f"{ws}/a.txt") == b"x\n" and get(f"{ws}/new.txt") == b"n"


async def test_owner_isolation_end_to_end(disk: tuple[Context, Session, str]) -> None:
    """§3.4: session A's observation never authorizes session B"""
    ctx, a, ws = disk
    b = Session(ws)
    put(f"{ws}/a.txt", "x\n")
    ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=a))
    failed(await ctx.tools.execute("write", {"file_path": "a.txt", "content": "b"}, session=b), "FS_NOT_OBSERVED")
    failed(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "x", "new_string": "b"}, session=b),
           "FS_NOT_OBSERVED")
    ok(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "x", "new_string": "a"}, session=a))
    assert get(f"{ws}/a.txt") == b"a\n"


async def test_appendix_a_sequence(make_ctx: Callable[..., Context], ws: str) -> None:
    """Appendix A: the default deployment's end-to-end sequence, byte for byte (reference profile)"""
    ctx = make_ctx(profile="reference")
    s = Session(ws)
    put(f"{ws}/a.txt", "hello world")
    failed(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "world", "new_string": "there"}, session=s),
           "FS_NOT_OBSERVED", f'Error: edit requires reading "{ws}/a.txt" first')
    failed(await ctx.tools.execute("write", {"file_path": "a.txt", "content": "x"}, session=s),
           "FS_NOT_OBSERVED", f'Error: cannot overwrite existing "{ws}/a.txt" without reading it first')
    ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=s),
       envelope(f"{ws}/a.txt", "1: hello world\n\n(End of file - total 1 lines)"))
    rewrite_in_place(f"{ws}/a.txt", b"hello world")
    os.utime(f"{ws}/a.txt", ns=(1, 1))  # an external process touched it
    failed(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "world", "new_string": "there"}, session=s),
           "FS_STALE_VERSION", f'Error: cannot edit "{ws}/a.txt": file changed since it was read')
    ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=s))
    edit = ok(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "world", "new_string": "there"},
                                      session=s), f"The file {ws}/a.txt has been updated successfully.")
    assert edit.meta == {"diffs": [{"path": "a.txt", "oldText": "hello world", "newText": "hello there"}]}
    ok(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "there", "new_string": "you"}, session=s))
    write = ok(await ctx.tools.execute("write", {"file_path": "new.txt", "content": "fresh\n"}, session=s),
               f"<path>{ws}/new.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>")
    assert write.meta is None and stat_mod.S_IMODE(os.stat(f"{ws}/new.txt").st_mode) == 0o600
    ok(await ctx.tools.execute("edit", {"file_path": "new.txt", "old_string": "fresh", "new_string": "stale"}, session=s))
    assert (get(f"{ws}/a.txt"), get(f"{ws}/new.txt")) == (b"hello you", b"stale\n")


# ==========================================================================================
# Deviations, at the tool level, in both profiles
# ==========================================================================================

@pytest.mark.parametrize("profile", ["reference", "default"])
async def test_A1_read_line_cap_never_leaves_a_lone_surrogate(make_ctx: Callable[..., Context], ws: str, profile: str) -> None:
    """A1: the read result is always valid Unicode; a cut never splits a character"""
    put(f"{ws}/e.txt", "😀😀😀😀\n😀😀😀\n")
    ctx = make_ctx(profile=profile, read_max_line_length=3)
    text = ok(await ctx.tools.execute("read", {"file_path": "e.txt"}, session=Session(ws))).text
    assert "\n1: 😀😀😀... (line truncated to 3 chars)\n2: 😀😀😀\n" in text
    text.encode("utf-8")


async def _edit_bare(ctx: Context, ws: str, args: dict[str, Any]) -> ToolResult:
    return await ctx.tools.execute("edit", args, session=Session(ws))


@pytest.mark.parametrize("profile,expected", [("default", b"\xef\xbb\xbfbye\n"), ("reference", b"bye\n")])
async def test_D1_edit_keeps_the_bom(make_ctx: Callable[..., Context], ws: str, profile: str, expected: bytes) -> None:
    """D1: an edit keeps a leading BOM (default); the reference drops it. Read never shows it."""
    put(f"{ws}/b.txt", b"\xef\xbb\xbfhello\n")
    ctx = make_ctx(profile=profile)
    s = Session(ws)
    assert ok(await ctx.tools.execute("read", {"file_path": "b.txt"}, session=s)).text == envelope(
        f"{ws}/b.txt", "1: hello\n\n(End of file - total 1 lines)")
    ok(await ctx.tools.execute("edit", {"file_path": "b.txt", "old_string": "hello", "new_string": "bye"}, session=s))
    assert get(f"{ws}/b.txt") == expected


@pytest.mark.parametrize(
    "raw,old,new,default,reference",
    [
        (b"a\r\nb\nc\r\nd", "b", "B", b"a\r\nB\nc\r\nd", b"a\r\nB\r\nc\r\nd"),
        (b"x\r\ny\r\nz\n", "z", "Z", b"x\r\ny\r\nZ\n", b"x\r\ny\r\nZ\r\n"),
        (b"a\r\nb\nc", "c", "C", b"a\r\nb\nC", b"a\nb\nC"),
        (b"a\nb\r\nc\r\nd\r\ne\n", "a\nb", "A\nB", b"A\r\nB\r\nc\r\nd\r\ne\n", b"A\r\nB\r\nc\r\nd\r\ne\r\n"),
        (b"a\nb\r\nc\r\nd\n", "a\nb", "A\r\nB", b"A\nB\r\nc\r\nd\n", b"A\nB\nc\nd\n"),  # 2:2 tie → LF
        (b"a\rb\r\nc\n", "c", "C", b"a\rb\r\nC\n", b"a\rb\nC\n"),
    ],
)
async def test_D2_mixed_line_endings_untouched(make_ctx: Callable[..., Context], ws: str, raw: bytes, old: str, new: str,
                                               default: bytes, reference: bytes) -> None:
    """D2: only matched spans change (default); the reference rewrites the whole file in its dominant style"""
    for profile, expected in (("default", default), ("reference", reference)):
        put(f"{ws}/m.txt", raw)
        ctx = make_ctx(profile=profile, policy=False)
        ok(await _edit_bare(ctx, ws, {"file_path": "m.txt", "old_string": old, "new_string": new}))
        assert get(f"{ws}/m.txt") == expected, profile


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_D3_new_file_mode_and_kept_owner(make_ctx: Callable[..., Context], ws: str, profile: str) -> None:
    """D3: new files get 0o666 & ~umask (default; the umask when the file is made, as creat)
    vs 0o600; existing files keep mode (and, default, owner/group)"""
    ctx = make_ctx(profile=profile, policy=False)
    s = Session(ws)
    previous = os.umask(0o027)
    try:
        ok(await ctx.tools.execute("write", {"file_path": "new.txt", "content": "n\n"}, session=s))
    finally:
        os.umask(previous)
    assert stat_mod.S_IMODE(os.stat(f"{ws}/new.txt").st_mode) == (0o640 if profile == "default" else 0o600)
    put(f"{ws}/run.sh", "#!/bin/sh\necho hi\n", mode=0o755)
    os.chmod(f"{ws}/run.sh", 0o4755)  # setuid is dropped, the permission bits are kept
    ok(await ctx.tools.execute("edit", {"file_path": "run.sh", "old_string": "hi", "new_string": "bye"}, session=s))
    assert stat_mod.S_IMODE(os.stat(f"{ws}/run.sh").st_mode) == 0o755
    if os.geteuid() != 0:
        pytest.skip("the owner/group part needs root (giving a file to another owner); modes were checked")
    os.chown(f"{ws}/run.sh", 4242, 4343)
    ok(await ctx.tools.execute("write", {"file_path": "run.sh", "content": "#!/bin/sh\n"}, session=s))
    st = os.stat(f"{ws}/run.sh")
    assert (st.st_uid, st.st_gid) == ((4242, 4343) if profile == "default" else (0, 0))


@pytest.mark.parametrize(
    "old,content,default",
    [
        (b"\xef\xbb\xbfa\r\nb\r\n", "x\ny\n", b"\xef\xbb\xbfx\r\ny\r\n"),
        (b"\xef\xbb\xbfa\n", "\ufeffz\n", b"\xef\xbb\xbfz\n"),
        (b"a\r\nb\r\n", "p\r\nq\n", b"p\r\nq\n"),
        (b"a\nb\n", "x\ny\n", b"x\ny\n"),
        (b"a\r\nb\r\nc\n", "one line", b"one line"),
        (b"\xef\xbb\xbfonly\n", "", b"\xef\xbb\xbf"),
    ],
)
async def test_D4_write_keeps_crlf_and_bom_of_the_replaced_file(make_ctx: Callable[..., Context], ws: str, old: bytes,
                                                                content: str, default: bytes) -> None:
    """D4: replacing a CRLF/BOM file keeps CRLF (for bare-LF content) and the BOM (default); the reference is verbatim"""
    for profile, expected in (("default", default), ("reference", content.encode())):
        put(f"{ws}/w.txt", old)
        ctx = make_ctx(profile=profile, policy=False)
        ok(await ctx.tools.execute("write", {"file_path": "w.txt", "content": content}, session=Session(ws)),
           envelope(f"{ws}/w.txt", "Updated file"))
        assert get(f"{ws}/w.txt") == expected, profile
        os.unlink(f"{ws}/w.txt")
        ok(await ctx.tools.execute("write", {"file_path": "w.txt", "content": "\ufeffnew\n"}, session=Session(ws)))
        assert get(f"{ws}/w.txt") == "\ufeffnew\n".encode()  # new files: verbatim in both


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_D5_not_found_hint(make_ctx: Callable[..., Context], ws: str, profile: str) -> None:
    """D5: ``old_string was not found`` gains one ``Hint: …`` line when a near match exists (default only)"""
    put(f"{ws}/f.go", "func f() {\n\treturn 1\n}\n")
    ctx = make_ctx(profile=profile)
    s = Session(ws)
    ok(await ctx.tools.execute("read", {"file_path": "f.go"}, session=s))
    result = await ctx.tools.execute("edit", {"file_path": "f.go", "old_string": "    return 1", "new_string": "    return 2"},
                                     session=s)
    first = f'Error: old_string was not found in "{ws}/f.go"'
    failed(result, "FS_EDIT_NOT_FOUND")
    if profile == "reference":
        assert result.text == first
    else:
        head, hint = result.text.split("\n")
        assert head == first and hint.startswith("Hint: ") and "line 2" in hint
    missing = await ctx.tools.execute("edit", {"file_path": "f.go", "old_string": "zzzz qqqq", "new_string": "x"}, session=s)
    assert missing.text == first  # no near match: no hint
    assert get(f"{ws}/f.go") == b"func f() {\n\treturn 1\n}\n"


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_D18_an_edit_retried_after_it_succeeded_looks_applied(make_ctx: Callable[..., Context], ws: str,
                                                                      profile: str) -> None:
    """D18: the second of two identical edits says new_string is there already (default only)."""
    put(f"{ws}/a.py", "x = compute(1)\ny = 2\n")
    ctx = make_ctx(profile=profile, policy=False)
    args = {"file_path": "a.py", "old_string": "x = compute(1)", "new_string": "x = compute(2)"}
    ok(await ctx.tools.execute("edit", args, session=Session(ws)))
    again = await ctx.tools.execute("edit", args, session=Session(ws))
    first = f'Error: old_string was not found in "{ws}/a.py"'
    failed(again, "FS_EDIT_NOT_FOUND")
    assert again.text == first if profile == "reference" else again.text == (
        first + "\nHint: new_string is already in the file at line 1: the edit looks already applied; read the file "
        "before changing it again.")
    assert get(f"{ws}/a.py") == b"x = compute(2)\ny = 2\n"


async def test_D18_two_differences_through_the_tool(fake: Callable[..., Context], session: Session) -> None:
    """D18 on the recording fake: line numbers copied from read output and tabs typed as spaces."""
    ctx = fake(files={"f.go": "func f() {\n\treturn 1\n}\n"}, profile="default", policy=False)
    result = await ctx.tools.execute(
        "edit", {"file_path": "f.go", "old_string": "2:     return 1", "new_string": "\treturn 2"}, session=session)
    failed(result, "FS_EDIT_NOT_FOUND", 'Error: old_string was not found in "/abs/f.go"\nHint: old_string has the '
           'line-number prefixes copied from read output (like "2: "), which are not part of the file; without them, '
           "line 2 matches if indentation is ignored: the file indents with tabs, old_string with spaces.")


LOOKALIKES = {"my\u00a0notes.txt": "my notes.txt", "Cafe\u0301.md": "Caf\u00e9.md", "README.md": "readme.md",
              "John\u2019s.txt": "John's.txt"}


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_D19_a_read_of_a_lookalike_name_names_the_file(fake: Callable[..., Context], session: Session,
                                                             profile: str) -> None:
    """D19: the not-found error of ``read`` names a file whose name differs only by lookalike
    characters, listing the directory through the seam and never stat-ing more (§4.11)."""
    ctx = fake(files={name: "x\n" for name in LOOKALIKES}, dirs=("My\u00a0Docs",), profile=profile)
    wanted = {
        "my notes.txt": '"/abs/my\\u00a0notes.txt" exists: its name has a no-break space (U+00A0) where the path '
                        "has a space",
        "Caf\u00e9.md": '"/abs/Cafe\u0301.md" exists: its name writes "\u00e9" as U+0065 U+0301 (decomposed), the '
                        "path as U+00E9 (composed)",
        "readme.md": '"/abs/README.md" exists: only letter case differs',
        "John's.txt": '"/abs/John\u2019s.txt" exists: its name has a right single quotation mark (\u2019, U+2019) '
                      "where the path has a straight quote (')",
        "My Docs/a.txt": '"/abs/My\\u00a0Docs" exists: its name has a no-break space (U+00A0) where the path has a space',
    }
    for path, hint in wanted.items():
        before = ctx.fs.count("stat")
        result = await ctx.tools.execute("read", {"file_path": path}, session=session)
        first = f'Error: cannot read "/abs/{path}": not found'
        failed(result, "FS_NOT_FOUND", first if profile == "reference" else f"{first}\nHint: {hint}.")
        assert ctx.fs.count("stat") - before == 1
    result = await ctx.tools.execute("read", {"file_path": "unrelated.txt"}, session=session)
    assert result.text == 'Error: cannot read "/abs/unrelated.txt": not found'


async def test_D19_the_lookup_is_bounded(fake: Callable[..., Context], session: Session) -> None:
    """A directory too long to list within the bound gives no hint (and is not listed to the end)."""
    from dsh_fs.tool_fs import lookup

    names = {f"f{i:05d}.txt": "" for i in range(2 * lookup._MAX_ENTRIES + 50)}  # over the checkpoint bound
    ctx = fake(files={**names, "zz\u00a0last.txt": ""}, profile="default")
    result = await ctx.tools.execute("read", {"file_path": "zz last.txt"}, session=session)
    assert result.text == 'Error: cannot read "/abs/zz last.txt": not found'
    ctx = fake(files={**dict(list(names.items())[:10]), "zz\u00a0last.txt": ""}, profile="default")
    result = await ctx.tools.execute("read", {"file_path": "zz last.txt"}, session=session)
    assert result.text.endswith('"/abs/zz\\u00a0last.txt" exists: its name has a no-break space (U+00A0) where the '
                                "path has a space.")


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_D6_non_text_errors_say_where_and_why(make_ctx: Callable[..., Context], ws: str, profile: str) -> None:
    """D6: ``invalid UTF-8 text (byte 0x99 at offset 11, line 2)``; UTF-16 named; same for edit (default)"""
    put(f"{ws}/w.txt", b"line1\nBrand\x99\nline3\n")
    put(f"{ws}/u16.txt", b"\xff\xfeh\x00i\x00\n\x00")
    put(f"{ws}/late.txt", b"a" * 9000 + b"\n\x00")
    ctx = make_ctx(profile=profile, policy=False)
    s = Session(ws)
    detailed = profile == "default"
    read = await ctx.tools.execute("read", {"file_path": "w.txt"}, session=s)
    failed(read, "FS_NOT_TEXT", f'Error: cannot read "{ws}/w.txt": invalid UTF-8 text'
           + (" (byte 0x99 at offset 11, line 2)" if detailed else ""))
    u16 = await ctx.tools.execute("read", {"file_path": "u16.txt"}, session=s)
    failed(u16, "FS_NOT_TEXT", f'Error: cannot read "{ws}/u16.txt": binary file'
           + (" (UTF-16LE byte-order mark; only UTF-8 is supported)" if detailed else ""))
    edit = await ctx.tools.execute("edit", {"file_path": "w.txt", "old_string": "line1", "new_string": "x"}, session=s)
    failed(edit, "FS_NOT_TEXT", f'Error: cannot edit "{ws}/w.txt": invalid UTF-8 text'
           + (" (byte 0x99 at offset 11, line 2)" if detailed else ""))
    ok(await ctx.tools.execute("read", {"file_path": "late.txt", "limit": 1}, session=s))  # a late NUL reads fine
    late = await ctx.tools.execute("edit", {"file_path": "late.txt", "old_string": "aaa", "new_string": "b",
                                            "replace_all": True}, session=s)
    prefix = f'Error: cannot edit "{ws}/late.txt": binary file'
    failed(late, "FS_NOT_TEXT")
    assert late.text == prefix if not detailed else (late.text.startswith(prefix + " (") and late.text.endswith(")"))
    assert get(f"{ws}/w.txt") == b"line1\nBrand\x99\nline3\n"


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_D7_crlf_only_difference_is_refused(make_ctx: Callable[..., Context], ws: str, profile: str) -> None:
    """D7: strings that differ only by CRLF vs LF fail ``must differ`` (default); the reference reports a no-op success"""
    put(f"{ws}/n.txt", b"a\r\nb")
    inode = os.stat(f"{ws}/n.txt").st_ino
    ctx = make_ctx(profile=profile)
    s = Session(ws)
    ok(await ctx.tools.execute("read", {"file_path": "n.txt"}, session=s))
    result = await ctx.tools.execute("edit", {"file_path": "n.txt", "old_string": "a\r\nb", "new_string": "a\nb"}, session=s)
    if profile == "default":
        failed(result, None, "Error: old_string and new_string must differ")
        assert os.stat(f"{ws}/n.txt").st_ino == inode
    else:
        ok(result, f"The file {ws}/n.txt has been updated successfully.")
        assert result.meta == {"diffs": []}
        assert os.stat(f"{ws}/n.txt").st_ino != inode  # rewritten, though byte-identical
    assert get(f"{ws}/n.txt") == b"a\r\nb"


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_D8_recreate_after_delete(make_ctx: Callable[..., Context], ws: str, profile: str) -> None:
    """D8: a read that finds no file records absence, so the session can recreate it (default); reference stays blocked"""
    put(f"{ws}/a.txt", "one\n")
    ctx = make_ctx(profile=profile)
    s = Session(ws)
    ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=s))
    os.unlink(f"{ws}/a.txt")
    remedy = " — re-read the file, then retry" if profile == "default" else ""
    failed(await ctx.tools.execute("write", {"file_path": "a.txt", "content": "two\n"}, session=s), "FS_STALE_VERSION",
           f'Error: cannot write "{ws}/a.txt": file no longer exists{remedy}')
    failed(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=s), "FS_NOT_FOUND",
           f'Error: cannot read "{ws}/a.txt": not found')
    edit = await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "x"}, session=s)
    write = await ctx.tools.execute("write", {"file_path": "a.txt", "content": "two\n"}, session=s)
    if profile == "default":
        failed(edit, "FS_NOT_FOUND", f'Error: cannot edit "{ws}/a.txt": not found')
        ok(write, envelope(f"{ws}/a.txt", "Created file"))
        ok(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "two", "new_string": "three"}, session=s))
        assert get(f"{ws}/a.txt") == b"three\n"
    else:
        failed(edit, "FS_STALE_VERSION", f'Error: cannot edit "{ws}/a.txt": file changed since it was read')
        failed(write, "FS_STALE_VERSION", f'Error: cannot write "{ws}/a.txt": file no longer exists')
        assert not os.path.exists(f"{ws}/a.txt")


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_D9_guarded_mutation_errors_carry_a_remedy(make_ctx: Callable[..., Context], ws: str, profile: str) -> None:
    """D9: ``FS_STALE_VERSION`` ends with `` — re-read the file, then retry``, ``FS_NOT_OBSERVED`` with `` — read the file, then retry``"""
    put(f"{ws}/a.txt", "v1\n")
    ctx = make_ctx(profile=profile)
    s = Session(ws)
    stale, unread = (" — re-read the file, then retry", " — read the file, then retry") if profile == "default" else ("", "")
    failed(await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "v1", "new_string": "v2"}, session=s),
           "FS_NOT_OBSERVED", f'Error: edit requires reading "{ws}/a.txt" first{unread}')
    failed(await ctx.tools.execute("write", {"file_path": "a.txt", "content": "x\n"}, session=s),
           "FS_NOT_OBSERVED", f'Error: cannot overwrite existing "{ws}/a.txt" without reading it first{unread}')
    ok(await ctx.tools.execute("read", {"file_path": "a.txt"}, session=s))
    rewrite_in_place(f"{ws}/a.txt", b"v9\n")
    edited = await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "v9", "new_string": "v10"}, session=s)
    failed(edited, "FS_STALE_VERSION")  # the default profile goes on with what changed (D30)
    assert edited.text.split("\n")[0] == f'Error: cannot edit "{ws}/a.txt": file changed since it was read{stale}'
    rewrite_in_place(f"{ws}/a.txt", b"v8\n")
    wrote = await ctx.tools.execute("write", {"file_path": "a.txt", "content": "x\n"}, session=s)
    failed(wrote, "FS_STALE_VERSION")
    assert wrote.text.split("\n")[0] == f'Error: cannot write "{ws}/a.txt": file changed since it was read{stale}'
    assert get(f"{ws}/a.txt") == b"v8\n"


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_D10_a_read_always_makes_progress(make_ctx: Callable[..., Context], ws: str, profile: str) -> None:
    """D10: a first line over ``readMaxBytes`` is returned cut to fit (default) instead of zero lines forever"""
    put(f"{ws}/w.txt", "y" * 45 + "\nshort\n")
    ctx = make_ctx(profile=profile, read_max_line_length=50, read_max_bytes=40)
    text = ok(await ctx.tools.execute("read", {"file_path": "w.txt"}, session=Session(ws))).text
    if profile == "reference":
        assert text == envelope(f"{ws}/w.txt", "(Output capped. Showing lines 1-0. Use offset=1 to continue.)")
    else:
        assert text.startswith(f"<path>{ws}/w.txt</path>\n<type>file</type>\n<content>\n1: yyy")
        assert text.endswith(" chars)\n\n(Output capped. Showing lines 1-1. Use offset=2 to continue.)\n</content>")


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_D11_lone_surrogates_are_rejected(make_ctx: Callable[..., Context], ws: str, profile: str) -> None:
    """D11: a lone surrogate in content/new_string is refused, nothing written (default); the reference writes U+FFFD"""
    put(f"{ws}/a.txt", "keep\n")
    ctx = make_ctx(profile=profile, policy=False)
    s = Session(ws)
    write = await ctx.tools.execute("write", {"file_path": "s.txt", "content": "ok \ud83d end\n"}, session=s)
    edit = await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "keep", "new_string": "x\udc00"}, session=s)
    if profile == "default":
        failed(write, None, "Error: content must be valid Unicode text (lone surrogate U+D83D at index 3)")
        failed(edit, None, "Error: new_string must be valid Unicode text (lone surrogate U+DC00 at index 1)")
        assert not os.path.exists(f"{ws}/s.txt") and get(f"{ws}/a.txt") == b"keep\n"
    else:
        ok(write)
        ok(edit)
        assert get(f"{ws}/s.txt") == b"ok \xef\xbf\xbd end\n" and get(f"{ws}/a.txt") == b"x\xef\xbf\xbd\n"


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_D12_writing_through_a_dangling_symlink(make_ctx: Callable[..., Context], ws: str, profile: str) -> None:
    """D12: the dangling link is kept and its target created (default); the reference replaces the link"""
    os.symlink("target.txt", f"{ws}/link")
    ctx = make_ctx(profile=profile, root=None)  # the reference's own setting: no containment root
    ok(await ctx.tools.execute("write", {"file_path": "link", "content": "via link\n"}, session=Session(ws)),
       envelope(f"{ws}/link", "Created file"))
    if profile == "default":
        assert os.path.islink(f"{ws}/link") and os.readlink(f"{ws}/link") == "target.txt"
        assert get(f"{ws}/target.txt") == b"via link\n"
    else:
        assert not os.path.islink(f"{ws}/link") and get(f"{ws}/link") == b"via link\n"
        assert not os.path.exists(f"{ws}/target.txt")


async def test_dsh_fs_exports_the_documented_surface() -> None:
    assert {"create_context", "Session", "Context", "ToolResult", "FsError"} <= set(dsh_fs.__all__)
    assert isinstance(dsh_fs.create_context(policy=False), Context)
