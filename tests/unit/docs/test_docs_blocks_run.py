"""Every fenced block of the documentation (README.md, CONTRIBUTING.md, ``docs/**/*.md``) is
either run as printed by a test or marked as no program.

A block's info string says which: ``text`` marks a block that is no program (a tool's output
as the model sees it, a signature sketch); every other block (``python``, ``sh``, ``bash``,
``json``, ``toml``, …) is a program, a command or a configuration, and ``RUN_BY`` names the
tests that run the blocks of each (page, heading, info string). A block without an info string
is refused: say what it is. An entry of ``RUN_BY`` that no block matches any more, or that
names a test function that does not exist or a file that does not read that page, fails too,
so the table follows the pages.

Not covered here: what each block does when run (the tests ``RUN_BY`` names).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from docskit import PAGES, REPO, Block, fenced_blocks

NOT_PROGRAMS = {"text": "no program: a tool's output as printed, a signature sketch"}
"""info strings that mark a block as no program, and what they mark"""

RUN_BY: dict[tuple[str, str, str], tuple[str, ...]] = {
    ("README.md", "# dsh-fs", "sh"): (
        "tests/e2e/cli/test_readme_commands.py::test_the_first_command_installs_and_runs_the_demo",
        "tests/unit/dsh_fs/test_entry_points.py::test_ci_runs_the_readme_test_command_verbatim_and_installs_once"),
    ("README.md", "## As a library", "python"): (
        "tests/unit/docs/test_docs_library.py::test_the_first_example_reads_and_prints",),
    ("CONTRIBUTING.md", "## Mutation testing", "bash"): (
        "tests/unit/scripts/test_mutate_script.py::test_the_contributing_command_runs_as_printed",),
    ("docs/CHANNELS.md", "## Serving a container, a pod or a machine", "sh"): (
        "tests/unit/docs/test_docs_channels.py::test_the_command_lines",),
    ("docs/CHANNELS.md", "## Serving a container, a pod or a machine", "python"): (
        "tests/unit/docs/test_docs_channels.py::test_the_open_provider_program",),
    ("docs/CHANNELS.md", "## A sandbox SDK or deepagents: an exec channel", "python"): (
        "tests/unit/docs/test_docs_channels.py::test_the_exec_channel_program",
        "tests/unit/docs/test_docs_channels.py::test_the_deepagents_program"),
    ("docs/EDITING-FACES.md", "## One example per vendor", "python"): (
        "tests/unit/docs/test_docs_editing_faces.py::test_the_responses_program_applies_the_recorded_patch",
        "tests/unit/docs/test_docs_editing_faces.py::test_the_agents_sdk_program_gives_the_agent_one_editor",
        "tests/unit/docs/test_docs_editing_faces.py::test_the_anthropic_program_answers_the_recorded_view",
        "tests/unit/docs/test_docs_editing_faces.py::test_the_str_replace_editor_program_creates_edits_and_views"),
    ("docs/FRAMEWORKS.md", "## One agent loop per API", "python"): (
        "tests/unit/docs/test_docs_agent_loops.py::test_chat_completions_example",
        "tests/unit/docs/test_docs_agent_loops.py::test_responses_example",
        "tests/unit/docs/test_docs_agent_loops.py::test_anthropic_example",
        "tests/unit/docs/test_docs_agent_loops.py::test_pydantic_ai_example"),
    ("docs/FRAMEWORKS.md", "### LangChain, LangGraph, deepagents and LlamaIndex", "python"): (
        "tests/unit/docs/test_docs_langchain.py::test_langchain_example",
        "tests/unit/docs/test_docs_langchain.py::test_deepagents_example",
        "tests/unit/docs/test_docs_langchain.py::test_llamaindex_example"),
    ("docs/FRAMEWORKS.md", "### smolagents, Google ADK and CrewAI", "python"): (
        "tests/unit/docs/test_docs_frameworks.py::test_smolagents_example",
        "tests/unit/docs/test_docs_frameworks.py::test_google_adk_example",
        "tests/unit/docs/test_docs_frameworks.py::test_crewai_example"),
    ("docs/HISTORY.md", "## Library", "python"): (
        "tests/unit/docs/test_docs_history.py::test_the_library_program_prints_what_the_page_shows",),
    ("docs/HISTORY.md", "## CLI", "bash"): (
        "tests/unit/docs/test_docs_history_surfaces.py::test_the_cli_lines_print_what_the_page_shows",),
    ("docs/HISTORY.md", "### Several machines: the history in a bucket", "bash"): (
        "tests/s3/test_s3_history_cli.py::test_the_page_s_lines_print_what_it_shows",),
    ("docs/HISTORY.md", "## Frameworks", "python"): (
        "tests/unit/docs/test_docs_history_surfaces.py::test_the_langgraph_program_prints_what_the_page_shows",),
    ("docs/IMAGES.md", "# Images: `read_image`", "python"): (
        "tests/unit/docs/test_docs_images.py::test_the_opening_line_serves_read_image",),
    ("docs/IMAGES.md", "# Images: `read_image`", "sh"): (
        "tests/unit/docs/test_docs_images.py::test_the_opening_command_serves_read_image",),
    ("docs/LIBRARY.md", "## Explicit composition", "python"): (
        "tests/unit/docs/test_docs_library.py::test_the_composition_example_serves_what_it_names",),
    ("docs/LIBRARY.md", "## Sandbox modes", "python"): (
        "tests/unit/docs/test_docs_library.py::test_the_sandbox_example_is_refused_then_approved",),
    ("docs/MCP.md", "## On your PATH, and a client's configuration", "json"): (
        "tests/e2e/mcp/test_mcp_docs_configs.py::test_the_stdio_configuration_starts_as_printed",),
    ("docs/MCP.md", "## Over HTTP", "sh"): (
        "tests/e2e/mcp/test_mcp_docs_configs.py::test_the_http_command_and_configuration_as_printed",),
    ("docs/MCP.md", "## Over HTTP", "json"): (
        "tests/e2e/mcp/test_mcp_docs_configs.py::test_the_http_command_and_configuration_as_printed",),
    ("docs/MCP.md", "## Over HTTP", "python"): (
        "tests/e2e/mcp/test_mcp_http_program.py::test_the_http_client_program_reads_through_the_server",),
    ("docs/MCP.md", "## Clients that start a server per call", "python"): (
        "tests/e2e/mcp/test_mcp_per_call_clients.py::test_the_printed_langchain_program_runs_as_printed",),
    ("docs/PATH-RULES.md", "## Turning them on", "python"): (
        "tests/unit/docs/test_docs_path_rules.py::test_the_python_snippet",),
    ("docs/PATH-RULES.md", "## Turning them on", "sh"): (
        "tests/unit/docs/test_docs_path_rules.py::test_the_command_lines_and_the_rules_file",),
    ("docs/PATH-RULES.md", "### A rules file", "toml"): (
        "tests/unit/docs/test_docs_path_rules.py::test_the_command_lines_and_the_rules_file",),
    ("docs/S3.md", "## Try it on your machine", "bash"): (
        "tests/unit/docs/test_docs_s3.py::test_the_local_quick_start_writes_to_a_local_bucket",),
    ("docs/S3.md", "## Setup", "bash"): (
        "tests/s3/test_s3_docs_setup.py::test_the_install_line_adds_aiobotocore",),
    ("docs/S3.md", "## Setup", "python"): (
        "tests/s3/test_s3_docs_setup.py::test_the_setup_program_reads_through_the_bucket",),
    ("docs/S3.md", "## Testing against the S3 wire protocol", "bash"): (
        "tests/s3/test_moto_server_cli.py::test_the_documented_commands_run_as_printed",),
    ("docs/design/EDITING-FACES-DESIGN.md",
     "### 6.1 Seam: `delete` and `rename` (`dsh_fs.fs`, every provider, the contract suite)", "python"): (
        "tests/unit/docs/test_docs_design_seam.py::test_the_printed_seam_signatures_are_the_code",),
}
"""``(page, heading line, info string)``: the tests (``path::function``) that run those blocks"""


def _blocks() -> list[Block]:
    return [block for page in PAGES for block in fenced_blocks(page)]


def _key(block: Block) -> tuple[str, str, str]:
    return str(block.doc.relative_to(REPO)), block.heading, block.lang


def test_every_block_says_what_it_is() -> None:
    bare = [block.where() for block in _blocks() if not block.lang]
    assert not bare, (f"blocks without an info string: {bare}; give each its language (python, sh, json, …), or "
                      f"`text` when it is {NOT_PROGRAMS['text']}")


def test_every_program_block_is_run_by_a_test() -> None:
    unrun = [f"{block.where()} {_key(block)}" for block in _blocks()
             if block.lang and block.lang not in NOT_PROGRAMS and _key(block) not in RUN_BY]
    assert not unrun, ("blocks no test runs (run each as printed in a test, tests/docskit.py, and name the test in "
                       f"RUN_BY; or mark it `text` if it is no program): {unrun}")


def test_every_entry_matches_blocks() -> None:
    keys = {_key(block) for block in _blocks()}
    stale = [key for key in RUN_BY if key not in keys]
    assert not stale, f"RUN_BY entries no block matches (a heading renamed, a block moved?): {stale}"


@pytest.mark.parametrize("key", sorted(RUN_BY), ids=lambda key: f"{key[0]}|{key[1]}|{key[2]}")
def test_each_named_test_exists_and_reads_its_page(key: tuple[str, str, str]) -> None:
    page, heading, _lang = key
    for named in RUN_BY[key]:
        path, function = named.split("::")
        source = (REPO / path).read_text(encoding="utf-8")
        defined = {node.name for node in ast.walk(ast.parse(source))
                   if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
        assert function in defined, f"{path} defines no {function}"
        assert Path(page).name in source, f"{path} does not read {page}"
        title = re.sub(r"^#+ ", "", heading)
        assert title in source or "fenced_blocks(" in source or "code_blocks(" in source, (
            f"{path} finds no block under {heading!r} of {page}")
