"""What ``dsh-fs demo`` tells a new user to do next.

Four ready-to-paste snippets for the directory the demo ran in: the MCP client configuration
that serves it (with the absolute path of this very ``dsh-fs``, so it works from any client,
and a ``--session`` that keeps what the client changes in a durable history), the command line
that lists that history, two command lines that share a ``--session``, and the library in five
lines. Every snippet is run by ``tests/e2e/cli/test_demo.py`` as printed.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys

__all__ = ("dsh_fs_command", "next_steps", "scratch_name")

SESSION = "my-agent"
"""the ``--session`` name the command lines share"""

CLIENT_SESSION = "my-client"
"""the ``--session`` of the printed MCP configuration: the history ``dsh-fs sessions history``
lists (docs/HISTORY.md "MCP")"""


def dsh_fs_command() -> list[str]:
    """The argv prefix that runs this installation of ``dsh-fs`` from any directory.

    The ``dsh-fs`` script that is running (``sys.argv[0]``, resolved on ``PATH`` when it is a
    bare name), else the one beside this Python (a virtual environment's ``bin``), else
    ``python -m dsh_fs.cli.main`` with this Python. Paths are absolute, not resolved through
    symlinks (a virtual environment's ``python`` is one).
    """
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == "dsh-fs":
        found = argv0 if os.sep in argv0 else shutil.which(argv0)
        if found and os.path.isfile(found):
            return [os.path.abspath(found)]
    beside = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "dsh-fs")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return [beside]
    return [os.path.abspath(sys.executable), "-m", "dsh_fs.cli.main"]


def scratch_name(directory: str) -> str:
    """A file name for the command-line example that does not exist in ``directory`` yet
    (``hello-dsh-fs.txt``, else ``hello-dsh-fs-2.txt``, …): its ``write`` creates it."""
    name, number = "hello-dsh-fs.txt", 1
    while os.path.lexists(os.path.join(directory, name)):
        number += 1
        name = f"hello-dsh-fs-{number}.txt"
    return name


def next_steps(directory: str, command: list[str], file_name: str) -> str:
    """The closing text of ``dsh-fs demo``.

    :param directory: the absolute directory the snippets serve and work in
    :param command: how to run ``dsh-fs`` (:func:`dsh_fs_command`); the command lines say
        plain ``dsh-fs`` when that is what ``PATH`` finds
    :param file_name: a name not taken in ``directory`` (:func:`scratch_name`)
    """
    server = json.dumps({"command": command[0], "args": [*command[1:], "mcp", "--root", directory,
                                                          "--session", CLIENT_SESSION]},
                        ensure_ascii=False)
    on_path = shutil.which("dsh-fs")
    if len(command) == 1 and on_path and os.path.realpath(on_path) == os.path.realpath(command[0]):
        shell = "dsh-fs"
    else:
        shell = shlex.join(command)
    quoted = shlex.quote(file_name)
    lines = [
        "1. Serve this directory to your MCP client: add this to its MCP configuration (Claude Desktop:",
        "   claude_desktop_config.json; Claude Code: .mcp.json; Cursor: .cursor/mcp.json):",
        "",
        _indent('{\n  "mcpServers": {\n    "dsh-fs": ' + server + "\n  }\n}"),
        "",
        f"   Every change the client makes is kept in session {CLIENT_SESSION}'s history: list it (and take",
        "   it back with 'dsh-fs sessions rewind', docs/HISTORY.md) from a shell:",
        "",
        _indent(f"{shell} sessions history {CLIENT_SESSION}"),
        "",
        "2. Use the tools from a shell in this directory. A --session keeps what one command saw for",
        "   the next, so a write (or a read) lets a later command edit the file:",
        "",
        _indent(f"{shell} write {quoted} --content 'Hello, world.' --session {SESSION}\n"
                f"{shell} edit {quoted} --old world --new agent --session {SESSION}"),
        "",
        "3. Use them from Python, confined to this directory (the adapters for Chat Completions,",
        "   Responses, Anthropic and pydantic-ai are in docs/FRAMEWORKS.md):",
        "",
        _indent(
            "import anyio, dsh_fs\n"
            f"ctx = dsh_fs.create_context(root={_string(directory)})  # the model's paths stay inside\n"
            "session = dsh_fs.Session()  # one agent: what it has read, it may change\n"
            f"result = anyio.run(lambda: ctx.tools.execute(\"read\", {{\"file_path\": {_string(file_name)}}}, session=session))\n"
            "print(result.text)"
        ),
    ]
    return "\n".join(lines)


def _string(text: str) -> str:
    """``text`` as a Python string literal in double quotes (a JSON string is one)."""
    return json.dumps(text, ensure_ascii=False)


def _indent(block: str) -> str:
    return "\n".join("    " + line for line in block.split("\n"))
