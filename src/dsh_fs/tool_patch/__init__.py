"""The ``apply_patch`` face (docs/EDITING-FACES.md): OpenAI's patch tool on the safe core.

| module | owns |
|---|---|
| ``executor`` | ``apply_patch``: a parsed patch checked whole, then written through the seam and the policy events (shared by every face that applies patches) |
| ``plugin`` | ``ToolPatch``: the ``apply_patch`` registry tool (Codex envelope) |
| ``texts`` | the tool's name, description and parameter text (Codex's) |
| ``regions`` | the UI diffs of an applied patch, computed only around its hunks (one replacing edit's hunk built directly) |
| ``writes`` | the write phase of a checked plan: the first change alone, then in-place updates one at a time while the writes are quick, else side by side, beside the name changes in patch order; what a midway failure wrote |

The OpenAI Responses ``apply_patch_call`` items (``dsh_fs.adapters.openai_responses``), the
Agents SDK editor (``dsh_fs.adapters.openai_agents``) and ``dsh-fs apply-patch`` use the
executor too.
"""

from .executor import AppliedPatch as AppliedPatch, PatchInputError as PatchInputError, apply_patch as apply_patch
from .plugin import ToolPatch as ToolPatch

__all__ = ("AppliedPatch", "PatchInputError", "ToolPatch", "apply_patch")
