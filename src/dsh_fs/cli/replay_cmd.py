"""``dsh-fs replay SCENARIO.json``."""

from __future__ import annotations

import json
import sys

import anyio
import click

__all__ = ("replay",)


@click.command()
@click.argument("scenario", type=click.Path(exists=True, dir_okay=False))
def replay(scenario: str) -> None:
    """Run one conformance SCENARIO (a JSON file) and print its output JSON.

    The workspace is a fresh temporary directory (umask 022); files, calls, actors and
    external steps are as shared/conformance/README.md describes. Also a way to reproduce
    a recorded sequence of tool calls.
    """
    from .replay import replay_scenario

    with open(scenario, encoding="utf-8") as handle:
        data = json.load(handle)
    output = anyio.run(replay_scenario, data)
    json.dump(output, sys.stdout, indent=1)
    sys.stdout.write("\n")
