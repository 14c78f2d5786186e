"""The ``dsh-fs`` command line (click). Each command lives in its own module; heavy
dependencies (the MCP SDK) are imported only when their command runs."""

from __future__ import annotations

import click

from .demo_cmd import demo
from .mcp_cmd import mcp
from .replay_cmd import replay
from .sessions_cmd import sessions
from .tool_cmds import apply_patch, edit, glob, grep, list_, prompt, read, schema, write

__all__ = ("main",)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dsh-fs")
def main() -> None:
    """dsh-fs: find, read, write and edit files safely, for LLM agents and the people running them."""


main.add_command(replay)
main.add_command(mcp)
main.add_command(list_)
main.add_command(read)
main.add_command(write)
main.add_command(edit)
main.add_command(glob)
main.add_command(grep)
main.add_command(apply_patch)
main.add_command(schema)
main.add_command(prompt)
main.add_command(demo)
main.add_command(sessions)


if __name__ == "__main__":  # pragma: no cover
    main()
