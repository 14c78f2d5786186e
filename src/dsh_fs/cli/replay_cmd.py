"""``dsh-fs replay [--provider local|s3] [--endpoint-url URL] SCENARIO.json``."""

from __future__ import annotations

import json
import sys

import anyio
import click

from .options import OnceCommand, endpoint_url_option, require_s3_credentials, require_s3_extra

__all__ = ("replay",)


@click.command(cls=OnceCommand)
@click.option(
    "--provider",
    type=click.Choice(["local", "s3"]),
    default="local",
    show_default=True,
    help="Where the workspace lives: a temporary directory, or a fresh S3 bucket (standard AWS credential"
    " chain).",
)
@endpoint_url_option
@click.argument("scenario", type=click.Path(exists=True, dir_okay=False))
def replay(scenario: str, provider: str, endpoint_url: str | None) -> None:
    """Run one conformance SCENARIO (a JSON file) and print its output JSON.

    The workspace is a fresh temporary directory (umask 022); files, calls, actors and
    external steps are as shared/conformance/README.md describes. Also a way to reproduce
    a recorded sequence of tool calls.

    With --provider s3 the files are uploaded to a fresh versioned bucket (prefix ws/), the
    calls run through the S3 provider with <ws> standing for its display root, and "files"
    lists the final objects. Symlinks and FIFOs cannot be replayed there.
    """
    from ..core.jsonvalue import parse_json
    from .inputs import utf8_bytes
    from .replay import ScenarioError, replay_scenario

    if provider == "s3":
        require_s3_extra()
    elif endpoint_url is not None:
        raise click.UsageError("--endpoint-url is only used with --provider s3")
    try:
        with open(scenario, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise click.BadParameter(f"cannot read the scenario: {exc}", param_hint="SCENARIO") from None
    try:  # the file as JSON.parse reads it: -0 and huge integers replay as the reference sees them
        data = parse_json(utf8_bytes(scenario, raw))
    except ValueError as exc:
        message = str(exc) if str(exc).startswith(scenario) else f"{scenario}: not JSON ({exc})"
        raise click.UsageError(message) from None
    except RecursionError:
        raise click.UsageError(f"{scenario}: not JSON (nested too deep)") from None

    async def run() -> object:
        if provider == "s3":
            await require_s3_credentials("--provider s3")
        return await replay_scenario(data, provider=provider, endpoint_url=endpoint_url)

    try:
        output = anyio.run(run)
    except ScenarioError as err:
        raise click.ClickException(str(err)) from err
    except (ValueError, TypeError, AttributeError, KeyError, OSError) as err:
        # a malformed scenario (a list for "files", a NUL in a name, a bad mode or config value,
        # an external step on a missing file): its own message, never a traceback
        raise click.ClickException(f"{scenario}: cannot replay it: {type(err).__name__}: {err}") from err
    json.dump(output, sys.stdout, indent=1)
    sys.stdout.write("\n")
