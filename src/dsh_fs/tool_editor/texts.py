"""Model-facing texts of the two text-editor faces (docs/design/EDITING-FACES-DESIGN.md §3). Constants only.

The registry prefixes every error with ``Error: `` (REFERENCE-SPEC §5.2), so error texts here
start after that prefix.

``str_replace_based_edit_tool`` (Anthropic ``text_editor_20250728``). Sources:
  [doc] https://platform.claude.com/docs/en/agents-and-tools/tool-use/text-editor-tool
        ("Handle errors", the worked example; page fetched 2026-09-26);
  [mem] the ``anthropic`` SDK's memory tool, which implements the same commands
        (``anthropic/lib/tools/_beta_builtin_memory_tool.py``, anthropic 2.14.0);
  [cud] Anthropic's computer-use demo editor (``anthropic-quickstarts``
        ``computer-use-demo/computer_use_demo/tools/run.py``), the model's original editor;
  [oh]  the OpenHands ACI editor (``openhands_aci/editor/editor.py``), the demo editor's
        best-known descendant (texts of E19 and E22); its ``undo_edit`` (H10) at
        ``All-Hands-AI/openhands-aci`` 9d22d0d2df (``editor.py``, ``prompts.py``), the command's
        description and enum as OpenHands' ``str_replace_editor`` tool sends them
        (``All-Hands-AI/OpenHands`` 05c35b1877,
        ``openhands/agenthub/codeact_agent/tools/str_replace_editor.py``).

``str_replace_editor`` (the reference's ``tool-str-replace-editor``): every text is the
reference's, ``toninfo/deepseek-harness`` ``packages/fs/tool-str-replace-editor/src/index.ts``
at 611615650f.
"""

from __future__ import annotations

__all__ = (
    "ANTHROPIC_CREATED",
    "ANTHROPIC_DESCRIPTION",
    "ANTHROPIC_FILE_NOT_FOUND",
    "ANTHROPIC_INSERTED",
    "ANTHROPIC_INSERT_RANGE",
    "ANTHROPIC_MULTIPLE_MATCHES",
    "ANTHROPIC_NAME",
    "ANTHROPIC_NO_MATCH",
    "ANTHROPIC_PARAMETERS",
    "ANTHROPIC_PERMISSION_DENIED",
    "ANTHROPIC_REPLACED",
    "ANTHROPIC_TYPE",
    "CONTINUE_WITH_VIEW_RANGE",
    "DIRECTORY_ONLY_VIEW",
    "LISTING_HEADER",
    "NO_OP_REPLACE",
    "REF_ABSOLUTE_PATH",
    "REF_CREATED",
    "REF_DESCRIPTION",
    "REF_EDITED",
    "REF_EMPTY_PARAMETER",
    "REF_EXISTS",
    "REF_FILE_HEADER",
    "REF_INSERT_RANGE",
    "REF_MULTIPLE",
    "REF_NAME",
    "REF_NOT_FOUND",
    "REF_NOT_VIEWABLE",
    "REF_NO_MATCH",
    "REF_PARAMETERS",
    "REF_PATH_BLANK",
    "REF_REQUIRED_PARAMETER",
    "REF_VIEW_RANGE_ON_DIRECTORY",
    "TOO_BIG_TO_INSERT",
    "TRUNCATED_MESSAGE",
    "UNDO_CAT_N",
    "UNDO_COMMAND_DESCRIPTION",
    "UNDO_DESCRIPTION_LINE",
    "UNDO_DONE",
    "UNDO_NO_HISTORY",
    "UNDO_REFUSED",
    "UNDO_REMOVED",
    "UNDO_TRUNCATED",
    "VIEW_RANGE_CLAMPED",
    "VIEW_RANGE_FIRST",
    "VIEW_RANGE_ORDER",
    "VIEW_RANGE_SECOND",
    "VIEW_RANGE_SHAPE",
)

# -- str_replace_based_edit_tool ----------------------------------------------------------------

ANTHROPIC_NAME = "str_replace_based_edit_tool"  # [doc], [sdk-a]: the tool's fixed name
ANTHROPIC_TYPE = "text_editor_20250728"  # [doc], [sdk-a]: the built-in tool's type
ANTHROPIC_DESCRIPTION = "\n".join(  # dsh-fs (E12): the API defines no description; shown on other surfaces
    [
        "Anthropic's text editor (text_editor_20250728) for viewing, creating and editing text files",
        "* `view` shows a file with line numbers (`view_range` selects lines) or lists a directory 2 levels deep",
        "* `create` creates a file, or replaces the whole content of a file you have viewed",
        "* `str_replace` replaces `old_str`, which must occur exactly once, with `new_str`",
        "* `insert` inserts `insert_text` after line `insert_line` (0 for the beginning of the file)",
    ]
)
ANTHROPIC_PARAMETERS = {  # [doc] where it describes the parameter, else [ref]/[cud]'s text (E12)
    "command": "The commands to run. Allowed options are: `view`, `create`, `str_replace`, `insert`.",
    "path": "Path to the file or directory, resolved by the filesystem backend.",
    "file_text": "Required parameter of `create` command, with the content of the file to be created.",
    "old_str": "Required parameter of `str_replace` command containing the string in `path` to replace.",
    "new_str": "The new text to insert in place of the old text (`str_replace`).",
    "insert_line": "The line number after which to insert the text (0 for beginning of file).",
    "insert_text": "The text to insert (`insert`).",
    "view_range": (
        "An array of two integers specifying the start and end line numbers to view. Line numbers are "
        "1-indexed, and -1 for the end line means read to the end of the file. This parameter only applies "
        "when viewing files, not directories."
    ),
}

ANTHROPIC_FILE_NOT_FOUND = "File not found"  # [doc] "Error: File not found"
ANTHROPIC_MULTIPLE_MATCHES = (  # [doc] with {count}
    "Found {count} matches for replacement text. Please provide more context to make a unique match."
)
ANTHROPIC_NO_MATCH = "No match found for replacement. Please check your text and try again."  # [doc]
ANTHROPIC_PERMISSION_DENIED = "Permission denied. Cannot write to file."  # [doc]
ANTHROPIC_REPLACED = "Successfully replaced text at exactly one location."  # [doc]
ANTHROPIC_CREATED = "File created successfully at: {path}"  # [mem], [cud]
ANTHROPIC_INSERTED = "The file {path} has been edited."  # [mem]
ANTHROPIC_INSERT_RANGE = (  # [mem]
    "Invalid `insert_line` parameter: {line}. It should be within the range [0, {count}]."
)
TRUNCATED_MESSAGE = (  # [cud] appended to a view cut at max_characters (and by the reference)
    "<response clipped><NOTE>To save on context only part of this file has been shown to you. "
    "You should retry this tool after you have searched inside the file with `grep -n` in order "
    "to find the line numbers of what you are looking for.</NOTE>"
)

CONTINUE_WITH_VIEW_RANGE = (  # dsh-fs (E20): after the clipped note of a capped file view
    "Lines {first}-{last} of the file are shown; view the rest with view_range [{next}, -1]."
)

# -- shared by both faces (the reference's texts, which are [cud]'s) ----------------------------

TOO_BIG_TO_INSERT = (  # dsh-fs (E24), in the catalog's form ``cannot <verb> "<dp>": <reason>``
    'cannot insert into "{path}": the file is {size} bytes, more than the limit of {limit} bytes insert '
    "changes; change it with str_replace"
)
NO_OP_REPLACE = "No replacement was performed. `new_str` and `old_str` must be different."  # [oh] (E19)
VIEW_RANGE_CLAMPED = (  # [oh] (E22): the first line of a view whose range ended past the file
    "NOTE: We only show up to {count} since there're only {count} lines in this file."
)

VIEW_RANGE_SHAPE = "Invalid `view_range`. It should be a list of two integers."
VIEW_RANGE_FIRST = (
    "Invalid `view_range`: {range}. Its first element `{first}` should be within the range of lines "
    "of the file: [1, {count}]"
)
VIEW_RANGE_SECOND = (
    "Invalid `view_range`: {range}. Its second element `{second}` should be smaller than the number "
    "of lines in the file: `{count}`"
)
VIEW_RANGE_ORDER = (
    "Invalid `view_range`: {range}. Its second element `{second}` should be larger or equal than its "
    "first `{first}`"
)
DIRECTORY_ONLY_VIEW = (
    "The path {path} is a directory and only the `view` command can be used on directories"
)
LISTING_HEADER = (
    "Here're the files and directories up to 2 levels deep in {path}, excluding hidden items, "
    "node_modules, and Python cache directories:"
)

# -- str_replace_editor (reference) ---------------------------------------------------------------

REF_DESCRIPTION = "\n".join(
    [
        "Custom editing tool for viewing, creating and editing files",
        "* State is persistent across command calls and discussions with the user",
        "* If `path` is a file, `view` displays the result of applying `cat -n`. If `path` is a directory, "
        "`view` lists non-hidden files and directories up to 2 levels deep",
        "* The `create` command cannot be used if the specified `path` already exists as a file",
        "* If a `command` generates a long output, it will be truncated and marked with `<response clipped>`",
        "",
        "Notes for using the `str_replace` command:",
        "* The `old_str` parameter should match EXACTLY one or more consecutive lines from the original "
        "file. Be mindful of whitespaces!",
        "* If the `old_str` parameter is not unique in the file, the replacement will not be performed. "
        "Make sure to include enough context in `old_str` to make it unique",
        "* The `new_str` parameter should contain the edited lines that should replace the `old_str`",
    ]
)
REF_PARAMETERS = {
    "command": "The commands to run. Allowed options are: `view`, `create`, `str_replace`, `insert`.",
    "path": "Absolute path to file or directory, e.g. `/repo/file.py` or `/repo`.",
    "file_text": "Required parameter of `create` command, with the content of the file to be created.",
    "insert_line": (
        "Required parameter of `insert` command. The `new_str` will be inserted AFTER the line "
        "`insert_line` of `path`."
    ),
    "new_str": (
        "Optional parameter of `str_replace` command containing the new string (if not given, no string "
        "will be added). Required parameter of `insert` command containing the string to insert."
    ),
    "old_str": "Required parameter of `str_replace` command containing the string in `path` to replace.",
    "view_range": (
        "Optional parameter of `view` command when `path` points to a file. If none is given, the full "
        "file is shown. If provided, the file will be shown in the indicated line number range, e.g. "
        "[11, 12] will show lines 11 and 12. Indexing at 1 to start. Setting `[start_line, -1]` shows all "
        "lines from `start_line` to the end of the file."
    ),
}
REF_NAME = "str_replace_editor"
REF_PATH_BLANK = "path must be a non-empty string"
REF_NOT_VIEWABLE = 'cannot view "{path}": not a regular file or directory'
REF_FILE_HEADER = "Here's the content of {path} with line numbers (which has a total of {count} lines)"
REF_ABSOLUTE_PATH = "The path {path} is not an absolute path, it should start with `/`. Maybe you meant /{path}?"
REF_NOT_FOUND = "The path {path} does not exist. Please provide a valid path."
REF_EXISTS = "File already exists at: {path}. Cannot overwrite files using command `create`."
REF_CREATED = "New file created successfully at: {path}"
REF_EDITED = "The file {path} has been edited successfully."
REF_NO_MATCH = "No replacement was performed, old_str `{old}` did not appear verbatim in {path}."
REF_MULTIPLE = (
    "No replacement was performed. Multiple occurrences of old_str `{old}` in lines [{lines}]. "
    "Please ensure it is unique"
)
REF_INSERT_RANGE = (
    "Invalid `insert_line` parameter: {line}. It should be within the range of lines of the file: [0, {count}]"
)
REF_REQUIRED_PARAMETER = "Parameter `{name}` is required for command: {command}"
REF_EMPTY_PARAMETER = "Parameter `{name}` is empty for command: {command}"
REF_VIEW_RANGE_ON_DIRECTORY = "The `view_range` parameter is not allowed when `path` points to a directory."

# -- undo_edit of str_replace_editor (default profile, H10; [oh]) ---------------------------------

UNDO_COMMAND_DESCRIPTION = (  # [oh] OpenHands' ``command`` parameter (its enum adds ``undo_edit``)
    "The commands to run. Allowed options are: `view`, `create`, `str_replace`, `insert`, `undo_edit`."
)
UNDO_DESCRIPTION_LINE = (  # [oh] the line OpenHands' description has after the ``<response clipped>`` one
    "* The `undo_edit` command will revert the last edit made to the file at `path`"
)
UNDO_DONE = "Last edit to {path} undone successfully. {output}"  # [oh] ``undo_edit``'s answer
UNDO_CAT_N = "Here's the result of running `cat -n` on {path}:\n"  # [oh] ``_make_output``'s header
UNDO_TRUNCATED = (  # [oh] ``TEXT_FILE_CONTENT_TRUNCATED_NOTICE`` (``maybe_truncate`` appends it)
    "<response clipped><NOTE>Due to the max output limit, only part of this file has been shown to you. "
    "You should retry this tool after you have searched inside the file with `grep -n` in order to find "
    "the line numbers of what you are looking for.</NOTE>"
)
UNDO_NO_HISTORY = "No edit history found for {path}."  # [oh] no edit of the file to undo
UNDO_REMOVED = (  # dsh-fs (H10): the undone edit created the file (OpenHands keeps the created text)
    "The file did not exist before that edit, so it has been removed."
)
UNDO_REFUSED = (  # dsh-fs (H10), in the catalog's form ``cannot <verb> "<dp>": <reason>``
    'cannot undo the last edit to "{path}": {reason}; nothing was changed (view the file and edit it instead)'
)
