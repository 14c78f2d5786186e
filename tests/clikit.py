"""What the ``dsh-fs`` command line says about itself (imported as ``clikit``; no tests here).

Everything comes from the real ``--help`` output of ``python -m dsh_fs.cli.main`` in a
subprocess, so a test built on it sees what a user sees:

* ``help_text(command, env)`` — one command's ``--help`` (``[]``: the top level);
* ``commands(env)`` — every leaf command (groups expanded), as argument lists;
* ``options(command, env)`` — ``(option, metavar)`` pairs (``FLAG`` for a flag, ``CHOICE`` for
  ``[a|b]``), for the bad-values table;
* ``option_entries(command, env)`` — every option in full (``OptionEntry``: metavar, help
  text, env var, default, required), for the consistency checks.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass

__all__ = ("PREFIX", "OptionEntry", "commands", "help_text", "option_entries", "options", "section")

PREFIX = [sys.executable, "-m", "dsh_fs.cli.main"]
"""the command line, as a subprocess argv prefix"""

_OPTION = re.compile(r"^  (?:-\w, )?(--[a-z0-9-]+)(?: (\S+))?(?:\s|$)")
_COMMAND = re.compile(r"^  ([a-z][a-z0-9-]*)\s")
_EXTRA = re.compile(r"\s*\[((?:env var|default|required)[^\[]*(?:\[[^\]]*\][^\[]*)*)\]$")


def help_text(command: list[str], env: dict[str, str]) -> str:
    """The ``--help`` output of ``dsh-fs <command>`` (it must exit 0)."""
    done = subprocess.run([*PREFIX, *command, "--help"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def section(text: str, title: str) -> list[str]:
    """The lines of a help section (``Options``, ``Commands``), without its title."""
    lines = text.splitlines()
    if f"{title}:" not in lines:
        return []
    out = []
    for line in lines[lines.index(f"{title}:") + 1:]:
        if line and not line.startswith(" "):
            break
        out.append(line)
    return out


def commands(env: dict[str, str], group: list[str] | None = None) -> list[list[str]]:
    """Every leaf command under ``group`` (``[]``: the top level), as argument lists."""
    group = group or []
    found = []
    for line in section(help_text(group, env), "Commands"):
        match = _COMMAND.match(line)
        if match:
            command = [*group, match.group(1)]
            text = help_text(command, env)
            found.extend(commands(env, command) if section(text, "Commands") else [command])
    return found


@dataclass(frozen=True, slots=True)
class OptionEntry:
    """One option as a command's ``--help`` shows it."""

    name: str
    """``--read-limit``"""
    metavar: str | None
    """``N``, ``[default|reference]``; ``None`` for a flag"""
    help: str
    """the help text, its lines joined (a word broken after a hyphen joined back)"""
    envvar: str | None
    """from ``[env var: …]``"""
    default: str | None
    """from ``[default: …]`` (``(the current directory)`` for a described default)"""
    required: bool
    """``[required]``"""


def _join(lines: list[str]) -> str:
    text = ""
    for line in (part.strip() for part in lines):
        if not text:
            text = line
        elif re.search(r"\w-$", text):  # textwrap broke a hyphenated word
            text += line
        else:
            text += " " + line
    return text


def option_entries(command: list[str], env: dict[str, str]) -> list[OptionEntry]:
    """Every option of ``dsh-fs <command>`` but ``--help``/``--version``, in the order shown."""
    raw: list[tuple[str, str | None, list[str]]] = []
    for line in section(help_text(command, env), "Options"):
        match = _OPTION.match(line)
        if match:
            rest = line[match.end():].strip()
            raw.append((match.group(1), match.group(2), [rest] if rest else []))
        elif raw and line.strip():
            raw[-1][2].append(line)
    entries = []
    for name, metavar, lines in raw:
        if name in ("--help", "--version"):
            continue
        text = _join(lines)
        extra = _EXTRA.search(text)
        fields: dict[str, str] = {}
        required = False
        if extra:
            text = text[:extra.start()]
            for part in extra.group(1).split("; "):
                key, _, value = part.partition(": ")
                if key == "required":
                    required = True
                else:
                    fields[key] = value
        entries.append(OptionEntry(name=name, metavar=metavar, help=text.strip(), envvar=fields.get("env var"),
                                   default=fields.get("default"), required=required))
    return entries


def options(command: list[str], env: dict[str, str]) -> list[tuple[str, str]]:
    """``(option, metavar)`` of a command (``FLAG`` for a flag, ``CHOICE`` for ``[a|b]``)."""
    out = []
    for entry in option_entries(command, env):
        metavar = entry.metavar or "FLAG"
        out.append((entry.name, "CHOICE" if metavar.startswith("[") else metavar))
    return out
