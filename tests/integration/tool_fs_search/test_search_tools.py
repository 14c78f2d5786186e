"""``glob``/``grep`` through the registry (REFERENCE-SPEC §6; the §7.10 list over a scripted
ripgrep — ``searchkit.FakeRg`` — and the §7.11 list over the real ripgrep on a real disk;
DEVIATIONS S1–S6). Every test names the spec line or deviation it checks.

Not here: pure parsing/formatting (tests/unit/tool_fs_search/test_search_pure.py), containment and hostile
trees (tests/robustness/tool_fs_search/test_search_containment.py), other providers (tests/contract).
"""

from __future__ import annotations

import os
import time
from typing import Any

import anyio
import pytest

from dsh_fs import AbortSignal, Context, Session
from dsh_fs.tool_fs_search import ToolFsSearch
from dsh_fs.tool_fs_search.limiter import RG_MEMORY_FLAGS
from filekit import get, put
from searchkit import FakeRg, call, gone, search_ctx
from spectext import FULL_PROMPT

pytestmark = pytest.mark.anyio


@pytest.fixture
def fake(tmp_path: Any) -> FakeRg:
    return FakeRg(tmp_path)


def _match(path: str, number: int, text: str) -> str:
    import json

    return json.dumps({"type": "match", "data": {"path": {"text": path}, "lines": {"text": text},
                                                 "line_number": number, "absolute_offset": 0, "submatches": []}})


# -- registration (§7.10) ------------------------------------------------------------------

def test_registers_glob_and_grep_with_their_prompt_sections(ws: str) -> None:
    """registers glob and grep with their prompt sections (orders 103, 104; verbatim)"""
    ctx = search_ctx(ws, list_tool=False)  # the reference's five tools (list: tests/integration/tool_fs/test_list_tool.py)
    assert ctx.tools.names() == ["edit", "glob", "grep", "read", "write"]
    assert ctx.system_prompt.render() == FULL_PROMPT
    orders = {s.name: s.order for s in ctx.system_prompt.sections()}
    assert (orders["tool:glob"], orders["tool:grep"]) == (103, 104)
    assert ToolFsSearch.inject == ("fs", "tools", "system_prompt")


def test_stays_pending_until_fs_exists_and_unregisters_on_disposal(ws: str) -> None:
    """stays pending until its services exist (inject); unregisters everything on disposal"""
    from dsh_fs.fs_local import LocalFileSystem

    ctx = Context()
    scope = ctx.plugin(ToolFsSearch)
    assert ctx.tools.names() == []
    ctx.plugin(LocalFileSystem, cwd=ws)
    assert ctx.tools.names() == ["glob", "grep"]
    scope.dispose()
    assert ctx.tools.names() == [] and "tool:glob" not in ctx.system_prompt.names()
    assert "tool:grep" not in ctx.system_prompt.names()


def test_timeout_budget_is_declared_on_both_tools(ws: str) -> None:
    """attaches the configured timeoutMs to both tool definitions; defaults to 30 seconds"""
    assert search_ctx(ws, timeout_ms=5000).tools.get("glob").timeout_ms == 5000
    default = search_ctx(ws)
    assert default.tools.get("glob").timeout_ms == default.tools.get("grep").timeout_ms == 30_000
    with pytest.raises(ValueError, match="^tool-fs-search: timeoutMs must be a positive integer$"):
        search_ctx(ws, timeout_ms=-100)


def test_read_only_tools_run_in_parallel(ws: str) -> None:
    tools = search_ctx(ws).tools
    assert tools.is_parallel("glob", {"pattern": "*"}) and tools.is_parallel("grep", {"pattern": "x"})


# -- working directory and the abort signal (§6.3; §7.10 workdir derivation) ----------------

async def test_ripgrep_runs_in_the_session_cwd_else_the_provider_cwd(ws: str, fake: FakeRg) -> None:
    """forwards the session cwd as the workdir; without one the provider's cwd applies"""
    os.mkdir(os.path.join(ws, "s1"))
    ctx = search_ctx(ws, rg_path=fake.path)
    fake.script(exit=1)
    assert (await call(ctx, "glob", {"pattern": "*"}, session=Session(os.path.join(ws, "s1")))).text == "No files found"
    assert fake.cwd == os.path.join(ws, "s1")
    assert (await call(ctx, "grep", {"pattern": "x"})).text == "No matches found"
    assert fake.cwd == ws
    assert fake.argv == [*RG_MEMORY_FLAGS, "--no-config", "--debug", "--json", "--follow", "--text", "--sort=path",
                         "--regexp=x"]  # S2, S8, S13, S14, D23


async def test_a_pre_aborted_signal_never_starts_ripgrep(ws: str, fake: FakeRg) -> None:
    """translates a pre-aborted signal into SEARCH_ABORTED"""
    ctx = search_ctx(ws, rg_path=fake.path)
    result = await call(ctx, "glob", {"pattern": "*"}, signal=AbortSignal.aborted_signal())
    assert result.is_error and result.error.code == "SEARCH_ABORTED" and result.error.name == "SearchError"
    assert result.text == "Error: glob was aborted before completion (tool timeout or caller cancellation)"
    assert not os.path.exists(os.path.join(fake.dir, "argv"))


async def test_an_abort_kills_the_process_group(ws: str, fake: FakeRg) -> None:
    """forwards exec.signal: the abort reaches the process (its children die too)"""
    fake.script(sleep=600)  # only the abort ends it (the call's own time budget would say "timed out")
    ctx = search_ctx(ws, rg_path=fake.path)
    signal = AbortSignal()

    async def abort_soon() -> None:
        while not os.path.exists(os.path.join(fake.dir, "child")):
            await anyio.sleep(0.01)
        signal.abort()

    async with anyio.create_task_group() as tg:
        tg.start_soon(abort_soon)
        result = await call(ctx, "grep", {"pattern": "x"}, signal=signal)
    assert result.error.code == "SEARCH_ABORTED" and "was aborted before completion" in result.text
    assert gone(fake.child, within=60)


async def test_an_abort_during_the_spawn_still_kills_the_process_group(ws: str, fake: FakeRg,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """an abort landing while the process is being started (the spawn's own await) reaches the
    group kill: asyncio alone would kill the direct child and leave its children running"""
    fake.script(sleep=600)  # only the kill ends it within the minute waited
    ctx = search_ctx(ws, rg_path=fake.path)
    signal = AbortSignal()
    spawn = anyio.open_process

    async def slow_spawn(*args: Any, **kwargs: Any) -> Any:
        process = await spawn(*args, **kwargs)
        while not os.path.exists(os.path.join(fake.dir, "child")):
            time.sleep(0.01)  # the program has started its child; the event loop is held here
        signal.abort()
        await anyio.sleep(0.05)  # the abort's cancellation lands on this await, inside the spawn
        return process

    monkeypatch.setattr(anyio, "open_process", slow_spawn)
    result = await call(ctx, "grep", {"pattern": "x"}, signal=signal)
    assert result.error.code == "SEARCH_ABORTED"
    assert gone(fake.child, within=60)


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_an_entry_removed_during_the_walk_is_no_failure(ws: str, fake: FakeRg, profile: str) -> None:
    """S15: ripgrep reporting entries it found gone (exit 2) keeps the rest of the result;
    the reference profile reports the exit (§6.3)"""
    ctx = search_ctx(ws, profile=profile, rg_path=fake.path)
    stderr = (b"rg: ./d2: No such file or directory (os error 2)\n"
              b"rg: ./d3/x: IO error for operation on ./d3/x: No such file or directory (os error 2)\n")
    listed = b"./d1/f.txt" + (b"\0" if profile == "default" else b"\n")  # (default: --null, names may hold \n)
    fake.script(stdout=listed, stderr=stderr, exit=2)
    result = await call(ctx, "glob", {"pattern": "**/*.txt"})
    if profile == "default":
        assert result.error is None and result.text.endswith("d1/f.txt") and "error" not in result.text
    else:
        assert result.text == ("Error: glob search failed (exit 2): rg: ./d2: No such file or directory (os error 2)\n"
                               "rg: ./d3/x: IO error for operation on ./d3/x: No such file or directory (os error 2)")
    fake.script(stdout=listed, stderr=stderr + b"rg: ./d4: Permission denied (os error 13)\n", exit=2)
    assert (await call(ctx, "glob", {"pattern": "**/*.txt"})).error.code == "SEARCH_FAILED"  # any other: a failure


@pytest.mark.parametrize(("profile", "text"), [
    ("default", "Error: grep timed out after 2000ms; narrow pattern, path, or include and retry"),
    ("reference", "Error: grep was aborted before completion (tool timeout or caller cancellation)"),
])
async def test_the_time_budget_ends_the_call(ws: str, fake: FakeRg, profile: str, text: str) -> None:
    """timeoutMs is enforced (reference: by aborting the signal; S3: its own text). The budget
    (2 s) leaves a busy machine the time to start the program and its child before it ends
    them; the child sleeps ten minutes, so only the kill ends it within the minute waited."""
    fake.script(sleep=600)
    ctx = search_ctx(ws, profile=profile, rg_path=fake.path, timeout_ms=2000)
    result = await call(ctx, "grep", {"pattern": "x"})
    assert (result.error.code, result.text) == ("SEARCH_ABORTED", text)
    assert gone(fake.child, within=60)


# -- exit semantics (§6.3; §7.10 exit semantics and failure classification) -----------------

@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_scripted_exits_are_classified(ws: str, fake: FakeRg, profile: str) -> None:
    ctx = search_ctx(ws, profile=profile, rg_path=fake.path)
    fake.script(exit=2, stderr=b"rg: regex parse error:\n    (\n")
    result = await call(ctx, "grep", {"pattern": "("})
    assert result.error.code == "SEARCH_INVALID_PATTERN" and "regex parse error" in result.text
    fake.script(exit=2, stderr=b"rg: error parsing glob '[': unclosed class\n")
    assert (await call(ctx, "glob", {"pattern": "["})).error.code == "SEARCH_INVALID_PATTERN"
    fake.script(exit=2, stderr=b"rg: ./x: IO error\n")
    assert (await call(ctx, "grep", {"pattern": "x"})).text == "Error: grep search failed (exit 2): rg: ./x: IO error"
    fake.script(exit=3)
    assert (await call(ctx, "grep", {"pattern": "x"})).text == "Error: grep search failed (exit 3)"
    debug = b"rg: DEBUG|ignore::walk|crates/ignore/src/walk.rs:1799: ignoring ./.env: Ignore(IgnoreMatch(Hidden))\n"
    fake.script(exit=2, stderr=debug + b"rg: ./x: IO error\n" + debug)  # S13's --debug: never in an excerpt
    assert (await call(ctx, "grep", {"pattern": "x"})).text == (
        "Error: grep search failed (exit 2): rg: ./x: IO error" if profile == "default" else
        "Error: grep search failed (exit 2): " + (debug + b"rg: ./x: IO error\n" + debug).decode().strip())
    fake.script(exit=2, stderr=b"x" * 70_000 + b" tail of diagnostics\n")
    failed = await call(ctx, "grep", {"pattern": "x"})
    assert failed.text.endswith("tail of diagnostics [stderr truncated]") and len(failed.text) < 64_100
    fake.script(kill_self=True)
    killed = await call(ctx, "glob", {"pattern": "*"})
    assert (killed.error.code, killed.text) == ("SEARCH_FAILED", "Error: glob search command was killed by signal SIGKILL")
    fake.script(stdout=b"{not json\n")
    assert (await call(ctx, "grep", {"pattern": "x"})).text == (
        "Error: grep received malformed ripgrep --json output (a line is not JSON)"
    )


@pytest.mark.parametrize(("profile", "text"), [
    ("default", "Error: glob requires ripgrep (rg): install the ripgrep wheel (pip install 'ripgrep==14.1.0') or put "
                "rg on PATH"),
    ("reference", "Error: glob requires ripgrep (rg) on the bash executor's PATH"),
])
async def test_a_missing_ripgrep_names_it(ws: str, profile: str, text: str) -> None:
    """a missing rg binary classifies as SEARCH_FAILED naming ripgrep; read/write/edit still work"""
    ctx = search_ctx(ws, profile=profile, rg_path="")
    result = await call(ctx, "glob", {"pattern": "*"})
    assert (result.error.code, result.text) == ("SEARCH_FAILED", text)
    put(os.path.join(ws, "a.txt"), "a\n")
    assert not (await call(ctx, "read", {"file_path": "a.txt"}, session=Session(ws))).is_error


async def test_exit_127_names_ripgrep(ws: str, fake: FakeRg) -> None:
    fake.script(exit=127)
    ctx = search_ctx(ws, profile="reference", rg_path=fake.path)
    assert (await call(ctx, "grep", {"pattern": "x"})).text == "Error: grep requires ripgrep (rg) on the bash executor's PATH"


# -- raw output (§6.3; §7.10 raw output acquisition; DEVIATIONS S4) --------------------------

async def test_raw_output_over_the_cap(ws: str, fake: FakeRg) -> None:
    """reference: SEARCH_RAW_OUTPUT_OVERFLOW; default (S4): the first page and why it stops"""
    lines = "".join(_match(f"f{i:03}.txt", 1, "hit\n") + "\n" for i in range(200)).encode()
    fake.script(stdout=lines)
    reference = search_ctx(ws, profile="reference", rg_path=fake.path, raw_output_max_bytes=4000, grep_max_matches=3)
    result = await call(reference, "grep", {"pattern": "hit"})
    assert (result.error.code, result.text) == ("SEARCH_RAW_OUTPUT_OVERFLOW", (
        "Error: grep produced more raw output than the bash executor retained within the 4000-byte cap; "
        "narrow pattern, path, or include and retry"))
    default = search_ctx(ws, rg_path=fake.path, raw_output_max_bytes=4000, grep_max_matches=3)
    page = await call(default, "grep", {"pattern": "hit"}, session=Session(ws))
    assert not page.is_error
    assert page.text.startswith("Found 3 of more than ") and "f000.txt\nLine 1: hit\n\nf001.txt" in page.text
    assert page.text.endswith("(The search stopped after 4000 bytes of ripgrep output and the complete result was "
                              "not saved; narrow pattern, path, or include to see more.)")
    fake.script(stdout=b'{"type":"match","data":{"path":{"text":"x"},"lines":{"text":"' + b"a" * 5000 + b'"}}}\n')
    nothing = await call(default, "grep", {"pattern": "a"})
    assert (nothing.error.code, nothing.text) == ("SEARCH_RAW_OUTPUT_OVERFLOW",
                                                  "Error: grep produced more than 4000 bytes of raw output; "
                                                  "narrow pattern, path, or include and retry")


# -- results, caps and the spill store (§6.1, §6.2; §7.10 glob/grep results) ---------------

async def test_glob_relativizes_and_caps_with_the_complete_list_saved(ws: str, fake: FakeRg) -> None:
    """lists workdir-relative paths; caps at globMaxResults and saves the FULL sorted list"""
    fake.script(stdout=f"{ws}/src/a.ts\0/elsewhere/b.ts\0rel/c.ts\0{ws}/d.ts\0".encode())  # --null (D22)
    ctx = search_ctx(ws, rg_path=fake.path, glob_max_results=2)
    session = Session(ws)
    os.mkdir(os.path.join(ws, "sub"))
    result = await call(ctx, "glob", {"pattern": "**/*.ts", "path": "sub"}, session=session)
    assert fake.argv[-2:] == ["--", "sub"]
    head, _, footer = result.text.partition("\n\n")
    assert head == "src/a.ts\n/elsewhere/b.ts"
    assert footer.startswith("(Showing 2 of 4 paths. Full sorted result stored at: /")
    assert footer.endswith("-glob-results.txt. Use read with offset/limit, or grep this path to search within it.)")
    locator = footer.split("stored at: ")[1].split(". Use read")[0]
    assert get(locator) == b"src/a.ts\n/elsewhere/b.ts\nrel/c.ts\nd.ts"
    assert oct(os.stat(locator).st_mode & 0o777) == "0o600"
    paged = await call(ctx, "read", {"file_path": locator, "offset": 3}, session=session)
    assert "3: rel/c.ts\n4: d.ts" in paged.text


async def test_no_spill_file_when_the_result_fits(ws: str, fake: FakeRg) -> None:
    """does not create a spill file when the result fits inline"""
    fake.script(stdout=b"a.ts\0b.ts\0")  # --null (D22)
    ctx = search_ctx(ws, rg_path=fake.path, glob_max_results=2)
    assert (await call(ctx, "glob", {"pattern": "*"}, session=Session(ws))).text == "a.ts\nb.ts"
    assert ctx.spill_store.root is None  # never even made its directory


@pytest.mark.parametrize("why", ["no spill backend", "no session owner", "save fails"])
async def test_an_unsaved_remainder_is_reported_not_an_error(ws: str, fake: FakeRg, tmp_path: Any, why: str) -> None:
    """keeps the inline page and reports the unsaved remainder when %s"""
    fake.script(stdout=b"a.ts\0b.ts\0")
    blocker = put(str(tmp_path / "blocker"), "a file")
    ctx = search_ctx(ws, rg_path=fake.path, glob_max_results=1, spill_root=os.path.join(blocker, "spill"))
    session: Session | None = Session(ws)
    if why == "no spill backend":
        next(s for s in ctx.scopes if s.name == "spill-local").dispose()
    elif why == "no session owner":
        session = None
    result = await call(ctx, "glob", {"pattern": "*"}, session=session)
    assert not result.is_error
    assert result.text == "a.ts\n\n(Showing 1 of 2 paths. The complete result could not be saved; narrow pattern or path to see more.)"


async def test_grep_groups_previews_and_caps(ws: str, fake: FakeRg) -> None:
    """groups by file with line numbers; relativizes; previews at grepMaxLineBytes; placeholder
    for non-UTF-8 lines; caps and spills the full formatted match list"""
    records = [
        _match("a.ts", 3, "const x = 1\n"), _match("a.ts", 9, "const y = 2\r\n"), _match(f"{ws}/deep/b.ts", 1, "aé" * 10),
        '{"type":"match","data":{"path":{"text":"c.bin"},"lines":{"bytes":"/w=="},"line_number":4}}',
        '{"type":"summary","data":{}}',
    ]
    fake.script(stdout=("\n".join(records) + "\n").encode())
    ctx = search_ctx(ws, rg_path=fake.path, grep_max_line_bytes=7)
    assert (await call(ctx, "grep", {"pattern": "x"})).text == (
        "Found 4 matches\n\na.ts\nLine 3: const x (line truncated)\nLine 9: const y (line truncated)\n\n"
        "deep/b.ts\nLine 1: aéaéa (line truncated)\n\nc.bin\nLine 4: (line i (line truncated)"
    )
    capped = search_ctx(ws, rg_path=fake.path, grep_max_matches=2)
    os.mkdir(os.path.join(ws, "-leading-dash"))
    owner = Session(ws)
    result = await call(capped, "grep", {"pattern": "x", "include": "*.ts", "path": "-leading-dash"}, session=owner)
    assert fake.argv[-4:] == ["--regexp=x", "--glob=*.ts", "--", "-leading-dash"]
    assert result.text.startswith("Found 2 of 4 matches\n\na.ts\nLine 3: const x = 1\nLine 9: const y = 2\n\n(Full grep "
                                  "result stored at: ")
    locator = result.text.split("stored at: ")[1].split(". Use read")[0]
    assert get(locator).decode() == (
        "Found 4 matches\n\na.ts\nLine 3: const x = 1\nLine 9: const y = 2\n\ndeep/b.ts\nLine 1: " + "aé" * 10
        + "\n\nc.bin\nLine 4: (line is not valid UTF-8)"
    )
    await call(capped, "grep", {"pattern": "deep", "path": locator}, session=owner)
    assert fake.cwd == os.path.dirname(locator) and fake.argv[-2:] == ["--", locator]  # the spill store's file


# -- the real ripgrep on a real disk (§7.11) -----------------------------------------------

def _tree(ws: str) -> None:
    for i, (rel, text) in enumerate([
        ("old.ts", "alpha\n"), ("src/mid.ts", "alpha beta\n"), (".hidden.ts", "alpha\n"), ("it's \"odd\".ts", "x\n"),
        (".git/config.ts", "alpha\n"), ("notes.md", "alpha appears here too\n"), ("src/new.ts", "gamma\n"),
    ]):
        put(os.path.join(ws, rel), text)
        stamp = 1_700_000_000 + i * 10
        os.utime(os.path.join(ws, rel), (stamp, stamp))


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_glob_sorts_by_modification_time(ws: str, profile: str) -> None:
    """discovers files by pattern, sorted by modification time (reference oldest first, S1
    newest first), hidden included, .git excluded, odd names kept"""
    _tree(ws)
    ctx = search_ctx(ws, profile=profile)
    result = await call(ctx, "glob", {"pattern": "*.ts"}, session=Session(ws))
    oldest_first = ["old.ts", "src/mid.ts", ".hidden.ts", "it's \"odd\".ts", "src/new.ts"]
    assert result.text.split("\n") == (oldest_first if profile == "reference" else oldest_first[::-1])
    assert (await call(ctx, "glob", {"pattern": "*", "path": "src"}, session=Session(ws))).text.split("\n") == (
        ["src/mid.ts", "src/new.ts"] if profile == "reference" else ["src/new.ts", "src/mid.ts"])
    assert (await call(ctx, "glob", {"pattern": "*.py"}, session=Session(ws))).text == "No files found"
    assert (await call(ctx, "glob", {"pattern": "*", "path": ".git"}, session=Session(ws))).text == "No files found"
    invalid = await call(ctx, "glob", {"pattern": "a/**/["}, session=Session(ws))
    assert invalid.error.code == "SEARCH_INVALID_PATTERN"
    assert invalid.text == "Error: glob pattern rejected by ripgrep: rg: error parsing glob 'a/**/[': unclosed character class; missing ']'"


async def test_grep_on_the_real_ripgrep(ws: str) -> None:
    """greps a tree (grouped, in path order: S2), a single FILE, with an include filter; a
    hostile pattern stays inert; a leading-dash pattern is a pattern; a regex error"""
    _tree(ws)
    os.remove(os.path.join(ws, ".hidden.ts"))  # (a hidden file adds S13's line; tests/contract/test_search_misses.py)
    put(os.path.join(ws, "-e.txt"), "-e here\n")
    ctx = search_ctx(ws)
    session = Session(ws)
    assert (await call(ctx, "grep", {"pattern": "alpha"}, session=session)).text == (
        "Found 3 matches\n\nnotes.md\nLine 1: alpha appears here too\n\nold.ts\nLine 1: alpha\n\n"
        "src/mid.ts\nLine 1: alpha beta"
    )
    assert (await call(ctx, "grep", {"pattern": "alpha", "path": "notes.md"}, session=session)).text == (
        "Found 1 match\n\nnotes.md\nLine 1: alpha appears here too"
    )
    assert (await call(ctx, "grep", {"pattern": "alpha", "include": "*.md"}, session=session)).text.startswith(
        "Found 1 match\n\nnotes.md")
    hostile = await call(ctx, "grep", {"pattern": "$(touch pwned)`touch pwned2`"}, session=session)
    assert hostile.text == "No matches found" and not os.path.exists(os.path.join(ws, "pwned"))
    assert (await call(ctx, "grep", {"pattern": "-e"}, session=session)).text == "Found 1 match\n\n-e.txt\nLine 1: -e here"
    assert (await call(ctx, "grep", {"pattern": "(unclosed"}, session=session)).error.code == "SEARCH_INVALID_PATTERN"


@pytest.mark.parametrize(("profile", "code", "text"), [
    ("reference", "SEARCH_FAILED",
     "Error: grep search failed (exit 2): rg: nope: IO error for operation on nope: No such file or directory (os error 2)"),
    ("default", "FS_NOT_FOUND", 'Error: cannot search "<ws>/nope": not found'),
])
async def test_a_missing_target(ws: str, profile: str, code: str, text: str) -> None:
    """classifies a missing target as SEARCH_FAILED (reference) / FS_NOT_FOUND (S5)"""
    result = await call(search_ctx(ws, profile=profile), "grep", {"pattern": "x", "path": "nope"}, session=Session(ws))
    assert (result.error.code, result.text) == (code, text.replace("<ws>", ws))


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_glob_of_a_file(ws: str, profile: str) -> None:
    """reference: ripgrep lists an explicit file whatever the pattern; S5: not a directory"""
    put(os.path.join(ws, "a.ts"), "x")
    result = await call(search_ctx(ws, profile=profile), "glob", {"pattern": "*.py", "path": "a.ts"}, session=Session(ws))
    if profile == "reference":
        assert result.text == "a.ts"
    else:
        assert (result.error.code, result.text) == ("FS_NOT_DIRECTORY", f'Error: cannot search "{ws}/a.ts": not a directory')


async def test_the_session_workspace_not_the_provider_cwd(ws: str) -> None:
    """resolves the search in the SESSION workspace, not the provider's cwd"""
    put(os.path.join(ws, "one/x.txt"), "needle\n")
    put(os.path.join(ws, "two/y.txt"), "needle\n")
    ctx = search_ctx(ws)
    assert (await call(ctx, "grep", {"pattern": "needle"}, session=Session(os.path.join(ws, "two")))).text == (
        "Found 1 match\n\ny.txt\nLine 1: needle"
    )


@pytest.mark.parametrize(("profile", "text"), [
    ("reference", "Error: glob could not start its search command (unusable working directory or missing shell)"),
    ("default", "Error: glob could not start ripgrep: No such file or directory (working directory \"<cwd>\")"),
])
async def test_an_unusable_session_cwd(ws: str, profile: str, text: str) -> None:
    """an unusable session cwd (spawn failure) is SEARCH_FAILED — could not start"""
    cwd = os.path.join(ws, "gone")
    result = await call(search_ctx(ws, profile=profile), "glob", {"pattern": "*"}, session=Session(cwd))
    assert (result.error.code, result.text) == ("SEARCH_FAILED", text.replace("<cwd>", cwd))


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_presenters(ws: str, profile: str) -> None:
    """glob/grep titles carry the pattern, root and include filter"""
    tools = search_ctx(ws, profile=profile).tools
    assert tools.get("glob").present_call({"pattern": "*.md", "path": "docs"}) == {
        "card": "generic", "title": "Glob *.md in docs", "kind": "search", "rawInput": "*.md"}
    assert tools.get("grep").present_call({"pattern": "todo", "path": "src", "include": "*.ts"})["title"] == (
        "Grep todo in src (*.ts)")
    assert tools.get("grep").present_call({"pattern": 3}) is None
