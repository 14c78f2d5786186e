"""System prompt sections (REFERENCE-SPEC §4.2).

Sections sort by ascending ``order`` (ties by registration order), empty texts are dropped
and the rest are joined by a blank line. ``harness:identity`` (order −100) and
``deployment:persona`` (order 0) always exist.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ("IDENTITY_TEXT", "PromptSection", "SystemPrompt", "TOOL_SECTIONS")

IDENTITY_TEXT = "You are an AI agent powered by the DeepSeek Harness SDK."
TOOL_SECTIONS = "tool:"
"""the name prefix of the tools' own sections (``tool:read`` …): their guidance, without the
agent's identity and persona (``render(only=TOOL_SECTIONS)``)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptSection:
    """One named piece of the system prompt."""

    name: str
    """stable name, e.g. ``tool:read``"""
    order: int
    """sort key; lower comes first"""
    text: str | Callable[[], str]
    """the text, or a function computing it at render time"""
    seq: int = field(default=0, compare=False)
    """registration sequence (tie-breaker)"""

    def render(self) -> str:
        return self.text() if callable(self.text) else self.text


class SystemPrompt:
    """The ``system_prompt`` service: named sections rendered into one prompt text."""

    def __init__(self, *, persona: str = "") -> None:
        self._seq = itertools.count()
        self._sections: dict[str, PromptSection] = {}
        self.add("harness:identity", IDENTITY_TEXT, order=-100)
        self.add("deployment:persona", persona, order=0)

    def add(self, name: str, text: str | Callable[[], str], *, order: int) -> Callable[[], None]:
        """Add (or replace) section ``name``; returns a function that removes it."""
        section = PromptSection(name=name, order=order, text=text, seq=next(self._seq))
        self._sections[name] = section

        def remove() -> None:
            if self._sections.get(name) is section:
                del self._sections[name]

        return remove

    def discard(self, name: str) -> None:
        """Remove section ``name`` if present."""
        self._sections.pop(name, None)

    def names(self) -> list[str]:
        """Section names, sorted alphabetically (as the reference's tests list them)."""
        return sorted(self._sections)

    def sections(self) -> list[PromptSection]:
        """Sections in render order."""
        return sorted(self._sections.values(), key=lambda s: (s.order, s.seq))

    def render(self, *, only: str = "") -> str:
        """The prompt text: non-empty sections in order, joined by ``"\\n\\n"``.

        :param only: keep only the sections whose name starts with this prefix, e.g.
            ``TOOL_SECTIONS`` for the tools' own guidance (what a tool server such as
            ``dsh-fs mcp`` or a toolset sends as its instructions)
        """
        texts = (s.render() for s in self.sections() if s.name.startswith(only))
        return "\n\n".join(t for t in texts if t)
