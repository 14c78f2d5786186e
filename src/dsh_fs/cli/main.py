"""The ``dsh-fs`` command line (click). Each command lives in its own module, imported only
when that command runs (or ``--help`` lists them all), so a command pays for no other's
imports: ``dsh-fs mcp`` answers its first request sooner (DEVIATIONS M2), and heavy
dependencies (the MCP SDK) are imported only when their command needs them."""

from __future__ import annotations

import gc
import importlib
from typing import Final

import click

__all__ = ("main", "run")

COMMANDS: Final = {
    "apply-patch": "tool_cmds:apply_patch",
    "client-config": "client_config_cmd:client_config",
    "demo": "demo_cmd:demo",
    "edit": "tool_cmds:edit",
    "glob": "tool_cmds:glob",
    "grep": "tool_cmds:grep",
    "list": "tool_cmds:list_",
    "mcp": "mcp_cmd:mcp",
    "prompt": "tool_cmds:prompt",
    "read": "tool_cmds:read",
    "replay": "replay_cmd:replay",
    "schema": "tool_cmds:schema",
    "sessions": "sessions_cmd:sessions",
    "write": "tool_cmds:write",
}
"""command name → ``module:attribute`` in ``dsh_fs.cli``"""


class _LazyGroup(click.Group):
    """A group whose commands are imported from :data:`COMMANDS` when first looked up."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attribute = COMMANDS[cmd_name].split(":")
            self.add_command(getattr(importlib.import_module(f"{__package__}.{module}"), attribute), cmd_name)
        return self.commands.get(cmd_name)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dsh-fs")
def main() -> None:
    """dsh-fs: find, read, write and edit files safely, for LLM agents and the people running them."""


def run() -> None:
    """The ``dsh-fs`` console script: :func:`main` (which exits with the command's status),
    with the heap frozen (``gc.freeze``) on the way out.

    An interpreter's exit ends with collections over every object still alive; with the MCP
    SDK and pydantic loaded that took about 0.25 s here, which a client that starts a server
    per tool call (and waits for it to exit) paid on every call. Frozen objects are left to
    the operating system; ``atexit`` handlers and ``weakref.finalize`` callbacks (the private
    spill directory) still run, and every command has closed what it opened before it returns.

    :raises SystemExit: always, with the command's exit status (click's standalone mode)
    """
    try:
        main()
    finally:
        gc.freeze()


if __name__ == "__main__":  # pragma: no cover
    run()
