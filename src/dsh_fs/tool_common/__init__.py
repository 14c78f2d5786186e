"""What every tool shares above the seam: the tools' profile switches, how a name is printed
and the sandbox escalation's texts.

| module | owns |
|---|---|
| ``switches`` | ``ToolSwitches``: the profile switches of the policy, the tools and the faces (one per deviation ID) |
| ``shown`` | how a name is printed in a tool's text (a name that could forge a line is quoted, D22) |
| ``sandbox_texts`` | the sandbox escalation the tools offer: the fields' texts, the markers, the approval texts, the ``sandbox:policy`` sentence (docs/SANDBOX.md) |

Import from the submodules: this package imports nothing.
"""

__all__: tuple[str, ...] = ()
