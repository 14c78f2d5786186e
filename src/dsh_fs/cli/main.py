"""The ``dsh-fs`` command line (click). Each command lives in its own module, imported only
when that command runs (or ``--help`` lists them all), so a command pays for no other's
imports: ``dsh-fs mcp`` answers its first request sooner (DEVIATIONS M2), and heavy
dependencies (the MCP SDK) are imported only when their command needs them."""

from __future__ import annotations

import atexit
import gc
import importlib
import os
import sys
import threading
from typing import Final, NoReturn

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


EXTRAS = {"mcp": "mcp", "uvicorn": "mcp", "starlette": "mcp", "sse_starlette": "mcp", "aiobotocore": "s3",
          "PIL": "images", "nbformat": "notebooks", "pypdfium2": "pdfs", "charset_normalizer": "encodings"}
"""the top-level module an optional feature imports → the extra that installs it"""


def missing_extra(exc: ModuleNotFoundError) -> str | None:
    """The line a command that needs an uninstalled extra ends with, ``dsh-fs: this command needs
    <module>, the <extra> extra: pip install '.[<extra>]' from the dsh-fs checkout``; ``None``
    for a module no extra installs."""
    module = (exc.name or "").partition(".")[0]
    extra = EXTRAS.get(module)
    if extra is None:
        return None
    return f"dsh-fs: this command needs {module}, the {extra} extra: pip install '.[{extra}]' from the dsh-fs checkout"


def run() -> None:
    """The ``dsh-fs`` console script: :func:`main` (which exits with the command's status),
    with the heap frozen (``gc.freeze``) on the way out.

    An interpreter's exit ends with collections over every object still alive; with the MCP
    SDK and pydantic loaded that took about 0.25 s here, which a client that starts a server
    per tool call (and waits for it to exit) paid on every call. Frozen objects are left to
    the operating system; ``atexit`` handlers and ``weakref.finalize`` callbacks (the private
    spill directory) still run, and every command has closed what it opened before it returns.
    While a daemon thread still runs (``dsh-fs mcp``'s background import of the SDK, when stdin
    ended first) the process leaves by ``_leave_now``.

    A command that needs an extra that is not installed (``dsh-fs mcp`` without ``[mcp]``) ends
    with :func:`missing_extra`'s line and exit status 2, not a traceback.

    :raises SystemExit: always, with the command's exit status (click's standalone mode)
    """
    try:
        main()
    except ModuleNotFoundError as exc:
        line = missing_extra(exc)
        if line is None:
            raise
        click.echo(line, err=True)
        sys.exit(2)
    except SystemExit as exc:
        code = 0 if exc.code is None else exc.code
        if type(code) is int and _daemons_running():
            _leave_now(code)
        raise
    finally:
        gc.freeze()


def _daemons_running() -> bool:
    """Another thread than the calling one is alive, and every such thread is a daemon (a
    non-daemon thread is waited for by the interpreter's own exit)."""
    others = [t for t in threading.enumerate() if t is not threading.current_thread()]
    return bool(others) and all(t.daemon for t in others)


def _leave_now(code: int) -> NoReturn:
    """End the process with ``code`` without finalizing the interpreter: the ``atexit``
    handlers run (``weakref.finalize`` callbacks, ``logging.shutdown``), stdout and stderr are
    flushed, then ``os._exit``.

    For a process whose daemon threads still run: CPython's finalization frees its runtime
    locks under them, and a daemon thread that reaches one then dies on a NULL lock
    (``sem_wait``, SIGSEGV, seen under load when stdin ended during the SDK's background
    import). The operating system reclaims the rest.

    :param code: the exit status (0–255)
    """
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):  # closed, broken or replaced by None
                pass
        os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    run()
