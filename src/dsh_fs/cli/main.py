"""The ``dsh-fs`` command line (click)."""

from __future__ import annotations

import json
import sys

import anyio
import click

__all__ = ("main",)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dsh-fs")
def main() -> None:
    """dsh-fs: read, write and edit files safely, for LLM agents and the people running them."""


@main.command()
@click.argument("scenario", type=click.Path(exists=True, dir_okay=False))
def replay(scenario: str) -> None:
    """Run one conformance SCENARIO (a JSON file) and print its output JSON.

    The workspace is a fresh temporary directory (umask 022); see
    shared/conformance/README.md for the scenario and output formats.
    """
    from .replay import replay_scenario

    with open(scenario, encoding="utf-8") as handle:
        data = json.load(handle)
    output = anyio.run(replay_scenario, data)
    json.dump(output, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":  # pragma: no cover
    main()
