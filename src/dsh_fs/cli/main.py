"""The ``dsh-fs`` command line (click). Each command lives in its own module; heavy
dependencies (the MCP SDK) are imported only when their command runs."""

from __future__ import annotations

import click

from .replay_cmd import replay

__all__ = ("main",)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dsh-fs")
def main() -> None:
    """dsh-fs: read, write and edit files safely, for LLM agents and the people running them."""


main.add_command(replay)


if __name__ == "__main__":  # pragma: no cover
    main()
