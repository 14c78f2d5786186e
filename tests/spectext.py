"""The spec's model-facing texts the tests compare against, verbatim (REFERENCE-SPEC §4.3
schemas and tool descriptions, §4.2 system prompt), shared by the test modules (imported
as ``spectext``; no tests here).
"""

from __future__ import annotations

from typing import Any

# §4.2: the default deployment's system prompt
PROMPT = (
    "You are an AI agent powered by the DeepSeek Harness SDK.\n\n"
    "Use the read tool — not shell commands like cat — to inspect text files. Results include line numbers. "
    "Use offset and limit to continue reading large files.\n\n"
    "Use the write tool to create files or completely replace file contents. Existing files are overwritten, so "
    "read an existing file first (the default fs-policy requires it) and prefer edit for targeted changes.\n\n"
    "Use the edit tool for targeted changes to existing UTF-8 text files. It replaces literal old_string with "
    "new_string; by default old_string must appear exactly once. If old_string appears multiple times, provide a "
    "more specific old_string or set replace_all to true. Read the file first (the default fs-policy requires it), "
    "unless you just created or edited it in this session."
)

# the tools' own sections of §4.2 (no harness:identity): what ``dsh-fs mcp`` sends as instructions
TOOL_GUIDANCE = PROMPT.split("\n\n", 1)[1]
# DEVIATIONS D14 (default profile, no policy loaded): the same guidance without claiming that
# anything requires reading first
TOOL_GUIDANCE_UNGUARDED = TOOL_GUIDANCE.replace(" (the default fs-policy requires it)", "")

# §4.3, verbatim
READ_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string", "description": "Path to read, resolved by the filesystem backend."},
        "offset": {"type": "number", "description": "1-based first line to return. Defaults to 1."},
        "limit": {"type": "number", "description": "Maximum number of lines to return. Defaults to 2000."},
    },
    "required": ["file_path"],
}
# DEVIATIONS D35 (default profile): read takes a column, to read on in a line cut at the cap
READ_COLUMN: dict[str, Any] = {
    "type": "number",
    "description": '1-based first character of the first line to return. A line shown cut with "... (line '
                   'truncated to N chars)" goes on at column + N. Defaults to 1.',
}
READ_SCHEMA_DEFAULT: dict[str, Any] = {
    **READ_SCHEMA,
    "properties": {**READ_SCHEMA["properties"], "column": READ_COLUMN},
}
WRITE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string", "description": "Path to write, resolved by the filesystem backend."},
        "content": {"type": "string", "description": "Full UTF-8 text content to write."},
    },
    "required": ["file_path", "content"],
}
EDIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string", "description": "Path to edit, resolved by the filesystem backend."},
        "old_string": {"type": "string", "description": "Literal text to replace. Must match exactly."},
        "new_string": {
            "type": "string",
            "description": "Literal replacement text. Use an empty string to delete the match.",
        },
        "replace_all": {
            "type": "boolean",
            "description": "Replace all matches. Defaults to false; when false, old_string must appear exactly once.",
        },
    },
    "required": ["file_path", "old_string", "new_string"],
}
READ_DESCRIPTION = "Read a UTF-8 text file and return line-numbered content."
WRITE_DESCRIPTION = "Create or fully replace a UTF-8 text file."
EDIT_DESCRIPTION = "Edit an existing UTF-8 text file by replacing literal text."

# §6: the search tools (tool-fs-search), verbatim
GLOB_PROMPT = (
    "Use the glob tool — not shell find or ls — to discover files by path pattern. Results are sorted by "
    "modification time and include hidden and ignored files."
)
GREP_PROMPT = (
    "Use the grep tool — not shell grep or rg — to search file contents. Use read on a matched file when you need "
    "surrounding context."
)
GLOB_DESCRIPTION = (
    "Find files whose paths match a glob pattern. Returns matching paths sorted by modification time, including "
    "hidden and ignored files (VCS metadata directories are excluded). Returns the first 100 paths inline; a capped "
    "result reports where the complete list was saved."
)
GREP_DESCRIPTION = (
    "Search file contents with a ripgrep regular expression. Returns matching lines with line numbers, grouped by "
    "file. Returns the first 250 matches inline; a capped result reports where the complete match list was saved. "
    "Use read on a matched file for surrounding context."
)
GLOB_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": 'Glob pattern to match file paths against (e.g. "**/*.ts", "src/**/*.test.js").',
        },
        "path": {
            "type": "string",
            "description": "Directory to search in. Defaults to the session workspace; a relative path resolves against it.",
        },
    },
    "required": ["pattern"],
}
GREP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "Regular expression to search for (ripgrep syntax)."},
        "path": {
            "type": "string",
            "description": "File or directory to search. Defaults to the session workspace; a relative path resolves "
            "against it.",
        },
        "include": {
            "type": "string",
            "description": 'One glob filter for which files to search (e.g. "*.ts", "*.{js,jsx}"). Not a list; '
            "negation is not supported.",
        },
    },
    "required": ["pattern"],
}
# §4.2 + §6: the default deployment's system prompt (file tools 100–102, search tools 103–104)
FULL_PROMPT = PROMPT + "\n\n" + GLOB_PROMPT + "\n\n" + GREP_PROMPT
# what ``dsh-fs mcp`` sends as instructions in the default deployment (§4.2 + §6 tool sections)
FULL_TOOL_GUIDANCE = FULL_PROMPT.split("\n\n", 1)[1]
FULL_TOOL_GUIDANCE_UNGUARDED = TOOL_GUIDANCE_UNGUARDED + "\n\n" + GLOB_PROMPT + "\n\n" + GREP_PROMPT
