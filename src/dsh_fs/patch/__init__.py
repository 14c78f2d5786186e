"""The patch engine behind every editing face (docs/design/EDITING-FACES-DESIGN.md §2): one
parser for the Codex ``*** Begin Patch`` envelope and the Responses API's V4A operation diffs, a
hunk locator with whitespace tiers and ambiguity errors, and a planner that checks a whole patch
before anything is written. Pure: no I/O, no kernel imports; the faces (``tool_patch``, the OpenAI adapters,
the CLI) read and write through the provider seam.
"""

from .apply import LineEdit as LineEdit, apply_chunks as apply_chunks, apply_line_edits as apply_line_edits
from .format import format_operation_diff as format_operation_diff, format_patch as format_patch
from .messages import PatchError as PatchError, PatchRejected as PatchRejected, codex_summary as codex_summary
from .messages import operation_summary as operation_summary
from .model import AddFile as AddFile, Chunk as Chunk, DeleteFile as DeleteFile, FileOp as FileOp
from .model import Patch as Patch, UpdateFile as UpdateFile
from .parser import parse_operation as parse_operation, parse_patch as parse_patch
from .plan import FileChange as FileChange, FileState as FileState, plan_patch as plan_patch
from .plan import required_paths as required_paths

__all__ = (
    "AddFile",
    "Chunk",
    "DeleteFile",
    "FileChange",
    "FileOp",
    "FileState",
    "LineEdit",
    "Patch",
    "PatchError",
    "PatchRejected",
    "UpdateFile",
    "apply_chunks",
    "apply_line_edits",
    "codex_summary",
    "format_operation_diff",
    "format_patch",
    "operation_summary",
    "parse_operation",
    "parse_patch",
    "plan_patch",
    "required_paths",
)
