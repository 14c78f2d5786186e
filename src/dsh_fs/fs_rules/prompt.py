"""The ``tool:path-rules`` system-prompt section (DEVIATIONS P6): the model is told that path
rules exist and what a refusal by them means, so it neither retries a denied path another way
nor takes a refusal for a fault. The patterns themselves are listed only when the operator
asks (``PathRules.show``): a list of denied patterns is a map of what is worth hiding.

A ``tool:`` section, so a tool server's instructions (``dsh-fs mcp``, the framework toolsets:
``render(only="tool:")``) carry it as well as the full prompt.
"""

from __future__ import annotations

from typing import ClassVar

from ..core.context import Scope
from ..fs.path_rules import PathRules, prompt_text

__all__ = ("PATH_RULES_ORDER", "PathRulesPrompt")

PATH_RULES_ORDER = 105
"""after the tools' own sections (99–103), before ``sandbox:policy`` (110)"""


class PathRulesPrompt:
    """``ctx.plugin(PathRulesPrompt, rules=rules)``: adds ``tool:path-rules`` (nothing for empty
    rules)."""

    name: ClassVar[str] = "path-rules-prompt"
    inject: ClassVar[tuple[str, ...]] = ("system_prompt",)

    @classmethod
    def apply(cls, scope: Scope, /, rules: PathRules) -> None:
        text = prompt_text(rules)
        if text:
            scope.effect(scope.system_prompt.add("tool:path-rules", text, order=PATH_RULES_ORDER))
