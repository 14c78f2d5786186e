"""Reading the rules a deployment opts into (docs/PATH-RULES.md): ``load_rules``.

A rules file is read only when the operator names it (``create_context(rules_files=[…])``,
``--rules-file PATH``): a repository's own file never fences anything by being there, and
never widens anything either (rules only add; ``fs.path_rules``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from ..fs.path_rules import PathRules, RuleSource, parse_rules_file

__all__ = ("load_rules", "read_rules_file")

MAX_RULES_FILE_BYTES = 1 << 20
"""a rules file larger than this (bytes) is refused: it is a list of patterns"""


def read_rules_file(path: str | os.PathLike[str]) -> RuleSource:
    """The rules of the TOML file at ``path`` (``fs.path_rules.parse_rules_file``).

    :raises ValueError: ``<path>: …`` the file cannot be read, is over
        ``MAX_RULES_FILE_BYTES``, is not UTF-8, or is not a rules file
    """
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            data = f.read(MAX_RULES_FILE_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"{name}: cannot read the rules file ({exc.strerror or exc})") from None
    if len(data) > MAX_RULES_FILE_BYTES:
        raise ValueError(f"{name}: a rules file holds at most {MAX_RULES_FILE_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{name}: a rules file is UTF-8 text") from None
    return parse_rules_file(text, name)


def load_rules(*, deny: Iterable[str] = (), read_only: Iterable[str] = (),
               files: Iterable[str | os.PathLike[str]] = (), show: bool = False) -> PathRules:
    """The deployment's rules: its own deny and read-only lists plus each rules file's
    (``PathRules.of``); empty rules when nothing is given.

    :raises ValueError: a pattern that is not one, a rules file that cannot be used
    """
    return PathRules.of(deny=deny, read_only=read_only, files=[read_rules_file(p) for p in files], show=show)
