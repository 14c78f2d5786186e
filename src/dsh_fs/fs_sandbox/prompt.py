"""The ``sandbox:policy`` system-prompt section (the reference's ``sandbox-policy`` context,
order 110; docs/design/SANDBOX.md §1.6): the standing mode in one sentence, so a model neither
refuses a change up front nor retries blindly.

The reference renders it per turn for a call with a session (its workspace: the session's cwd);
our prompt is rendered per deployment, so the workspace is the provider's
(``FileSystem.workspace_roots``, else its ``cwd``). Not a ``tool:`` section: a tool server's
instructions (``render(only="tool:")``) leave it out, as they leave out the identity.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..core.context import Scope
from ..tool_common.sandbox_texts import policy_context
from ..tool_common.switches import ToolSwitches

__all__ = ("SANDBOX_POLICY_ORDER", "SandboxPolicyPrompt")

SANDBOX_POLICY_ORDER = 110
"""the reference's order of ``sandbox:policy`` (after the tools' sections, 99–103)"""


class SandboxPolicyPrompt:
    """``ctx.plugin(SandboxPolicyPrompt)``: adds ``sandbox:policy`` when ``ctx.fs`` confines
    (nothing otherwise); the text follows the provider's mode when rendered. X3 (default
    profile): every workspace root is named."""

    name: ClassVar[str] = "sandbox-policy-prompt"
    inject: ClassVar[tuple[str, ...]] = ("fs", "system_prompt")

    @classmethod
    def apply(cls, scope: Scope, /) -> None:
        fs: Any = scope.fs
        if getattr(fs, "sandbox_mode", None) is None:
            return
        every_root = ToolSwitches.of(scope.profile).policy_names_every_root

        def text() -> str:
            roots = fs.workspace_roots() or tuple(r for r in [getattr(fs, "cwd", None)] if r)
            return policy_context(fs.sandbox_mode, roots, every_root=every_root)

        scope.effect(scope.system_prompt.add("sandbox:policy", text, order=SANDBOX_POLICY_ORDER))
