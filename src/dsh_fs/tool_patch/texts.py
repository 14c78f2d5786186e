"""Model-facing texts of the ``apply_patch`` face (docs/design/EDITING-FACES-DESIGN.md §1.6, §6.3). Constants.

Source: ``openai/codex`` ``codex-rs/core/src/tool_apply_patch.rs`` at 381c3b7ccb,
``create_apply_patch_json_tool`` (the function-tool form of Codex's ``apply_patch``): the tool
name, its description (the instructions models are trained on, verbatim, including its
non-ASCII punctuation) and the one ``input`` parameter. The result and error texts are the
patch engine's (``dsh_fs.patch.messages``).
"""

from __future__ import annotations

__all__ = (
    "APPLY_PATCH_DESCRIPTION",
    "BAD_MOVE_TO",
    "INPUT_DESCRIPTION",
    "MISSING_DIFF",
    "MISSING_OPERATION",
    "MISSING_PATH",
    "NO_OPERATIONS",
    "TOOL_NAME",
    "TOO_BIG_TO_UPDATE",
    "UNKNOWN_OPERATION",
)

TOOL_NAME = "apply_patch"

INPUT_DESCRIPTION = "The entire contents of the apply_patch command"

APPLY_PATCH_DESCRIPTION = r"""Use the `apply_patch` tool to edit files.
Your patch language is a stripped‑down, file‑oriented diff format designed to be easy to parse and safe to apply. You can think of it as a high‑level envelope:

*** Begin Patch
[ one or more file sections ]
*** End Patch

Within that envelope, you get a sequence of file operations.
You MUST include a header to specify the action you are taking.
Each operation starts with one of three headers:

*** Add File: <path> - create a new file. Every following line is a + line (the initial contents).
*** Delete File: <path> - remove an existing file. Nothing follows.
*** Update File: <path> - patch an existing file in place (optionally with a rename).

May be immediately followed by *** Move to: <new path> if you want to rename the file.
Then one or more “hunks”, each introduced by @@ (optionally followed by a hunk header).
Within a hunk each line starts with:

For instructions on [context_before] and [context_after]:
- By default, show 3 lines of code immediately above and 3 lines immediately below each change. If a change is within 3 lines of a previous change, do NOT duplicate the first change’s [context_after] lines in the second change’s [context_before] lines.
- If 3 lines of context is insufficient to uniquely identify the snippet of code within the file, use the @@ operator to indicate the class or function to which the snippet belongs. For instance, we might have:
@@ class BaseClass
[3 lines of pre-context]
- [old_code]
+ [new_code]
[3 lines of post-context]

- If a code block is repeated so many times in a class or function such that even a single `@@` statement and 3 lines of context cannot uniquely identify the snippet of code, you can use multiple `@@` statements to jump to the right context. For instance:

@@ class BaseClass
@@ 	 def method():
[3 lines of pre-context]
- [old_code]
+ [new_code]
[3 lines of post-context]

The full grammar definition is below:
Patch := Begin { FileOp } End
Begin := "*** Begin Patch" NEWLINE
End := "*** End Patch" NEWLINE
FileOp := AddFile | DeleteFile | UpdateFile
AddFile := "*** Add File: " path NEWLINE { "+" line NEWLINE }
DeleteFile := "*** Delete File: " path NEWLINE
UpdateFile := "*** Update File: " path NEWLINE [ MoveTo ] { Hunk }
MoveTo := "*** Move to: " newPath NEWLINE
Hunk := "@@" [ header ] NEWLINE { HunkLine } [ "*** End of File" NEWLINE ]
HunkLine := (" " | "-" | "+") text NEWLINE

A full patch can combine several operations:

*** Begin Patch
*** Add File: hello.txt
+Hello world
*** Update File: src/app.py
*** Move to: src/main.py
@@ def greet():
-print("Hi")
+print("Hello, world!")
*** Delete File: obsolete.txt
*** End Patch

It is important to remember:

- You must include a header with your intended action (Add/Delete/Update)
- You must prefix new lines with `+` even when creating a new file
- File references can only be relative, NEVER ABSOLUTE.
"""
"""the tool description (Codex ``create_apply_patch_json_tool``, verbatim; the line
``@@ <TAB> def method():`` holds a tab character, as the source does)"""

# -- Responses API operations (OpenAI Agents SDK ``run_internal/tool_execution.py``
# ``coerce_apply_patch_operations``, openai-agents 0.24.0: the texts its runner reports) -------

MISSING_OPERATION = "Apply patch call is missing an operation payload."
NO_OPERATIONS = "Apply patch call includes no operations."
UNKNOWN_OPERATION = "Unknown apply_patch operation: {type}"
MISSING_PATH = "Apply patch operation is missing a valid path."
MISSING_DIFF = "Apply patch operation {type} is missing the required diff payload."
BAD_MOVE_TO = "Apply patch operation move_to must be a non-empty path."
TOO_BIG_TO_UPDATE = (  # Codex's "Failed to read file to update <path>: <reason>", dsh-fs's reason (E24)
    "Failed to read file to update {path}: the file is {size} bytes, more than the limit of {limit} bytes "
    "apply_patch updates; change it with edit"
)
