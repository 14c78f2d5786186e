"""Path rules: the deny and read-only patterns a deployment sets (docs/PATH-RULES.md). Pure.

A *rule source* is one list of deny patterns and one of read-only patterns, written as
gitignore lines (``pathspec``'s ``GitIgnoreSpec``: ``*``, ``**``, ``?``, ``[…]``, a leading
``/`` anchors to the base, a trailing ``/`` names a directory, ``!`` re-includes within the
same list). ``PathRules`` holds every source a deployment gave (the ``create_context``
arguments or command-line options, and each rules file): a path is denied when any source
denies it, read-only when any source makes it read-only and none denies it — so one source
can never take back what another fences off (a ``!`` line works inside its own list only).

How a path is judged (DEVIATIONS P2, P3):

* relative to the *base* that holds it (each workspace root of the provider; with none, the
  deployment's cwd); a path outside every base relative to ``/``, so an unanchored pattern
  (``.env``, ``*.pem``) still matches it;
* as git judges an ignored directory: a path below a matched directory is matched whatever a
  later ``!`` line says, and the last component is matched both as a file and as a directory
  (``secrets/`` also fences a file named ``secrets``: a rule errs on the side of fencing);
* caseless and normalization-blind: pattern and path are both compared as
  ``NFC(casefold(NFD(text)))``, so ``.ENV``, ``.Env`` and an NFD spelling of ``café.txt`` are
  the same name as ``.env`` and ``café.txt`` (a case-insensitive or normalizing file system
  opens them as one file).

Messages: ``fs.errors.path_denied`` / ``fs.errors.path_read_only``. The prompt section's text:
``prompt_text``. A rules file (``--rules-file``): ``parse_rules_file``.
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal


__all__ = (
    "BoundRules",
    "PathRules",
    "RuleSource",
    "RuleView",
    "Verdict",
    "folded",
    "parse_rules_file",
    "prompt_text",
    "relative_to",
)

Verdict = Literal["deny", "read-only"] | None
"""what the rules say of a path: ``"deny"`` (no tool may read, list, search or change it),
``"read-only"`` (readable, never changed), ``None`` (no rule)"""

RULES_FILE_KEYS = ("deny", "read_only")
"""the keys a rules file may hold (``parse_rules_file``)"""


def folded(text: str) -> str:
    """``text`` as rules compare it: ``NFC(casefold(NFD(text)))`` (caseless, canonically
    equivalent spellings equal; DEVIATIONS P3)."""
    if text.isascii():
        return text.lower()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", text).casefold())


_NAMED = re.compile(r"\(\?P<[^>]+>")
"""a named group of a pattern's regex (``ps_d``): unnamed in the combined regex, where names repeat"""


class _Spec:
    """One compiled pattern list: ``pathspec.GitIgnoreSpec`` plus one combined regex of its
    including patterns, which a path must match before the spec is asked (most paths match no
    pattern: one regex search each)."""

    __slots__ = ("any", "spec")

    def __init__(self, lines: Sequence[str]) -> None:
        import pathspec  # imported with the first rules: a deployment without rules never loads it
        from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

        spec = pathspec.GitIgnoreSpec.from_lines([folded(line) for line in lines])
        including = [p.regex.pattern for p in spec.patterns
                     if isinstance(p, GitIgnoreSpecPattern) and p.include and p.regex is not None]
        self.spec = spec
        joined = "|".join(f"(?:{_NAMED.sub('(?:', r)})" for r in including)
        self.any = re.compile(joined) if including else None

    def matches(self, rel: str) -> bool:
        """``rel`` (folded, ``/``-separated, non-empty) or a directory above it is matched."""
        if self.any is None or self.any.match(rel + "/") is None:
            return False
        parts = rel.split("/")
        spec = self.spec
        for end in range(1, len(parts)):
            if spec.match_file("/".join(parts[:end]) + "/"):
                return True
        return spec.match_file(rel) or spec.match_file(rel + "/")


def _checked(lines: Iterable[str], what: str) -> tuple[str, ...]:
    """The patterns of ``lines``; each must be a non-empty string that pathspec compiles to a
    pattern (a blank or ``#`` comment line would match nothing, silently).

    :raises ValueError: ``<what>: <pattern> is not a path pattern`` (with why)
    """
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

    out: list[str] = []
    for line in lines:
        if not isinstance(line, str):
            raise ValueError(f"{what}: {line!r} is not a path pattern (a string)")
        try:
            pattern = GitIgnoreSpecPattern(folded(line))
        except ValueError as exc:
            raise ValueError(f"{what}: {line!r} is not a path pattern ({exc})") from None
        if pattern.regex is None or "\n" in line or "\0" in line:
            raise ValueError(f"{what}: {line!r} is not a path pattern (a blank or comment line matches nothing)")
        out.append(line)
    return tuple(out)


@dataclass(frozen=True, slots=True, kw_only=True)
class RuleSource:
    """One source of rules (the deployment's own lists, or one rules file)."""

    deny: tuple[str, ...] = ()
    """gitignore lines; a match denies every access"""
    read_only: tuple[str, ...] = ()
    """gitignore lines; a match refuses every change"""
    origin: str = "the deployment"
    """where the lists came from, for messages (``the deployment``, a rules file's path)"""
    _deny: _Spec = field(init=False, repr=False, compare=False)
    _read_only: _Spec = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "deny", _checked(self.deny, f"{self.origin}: deny"))
        object.__setattr__(self, "read_only", _checked(self.read_only, f"{self.origin}: read-only"))
        object.__setattr__(self, "_deny", _Spec(self.deny))
        object.__setattr__(self, "_read_only", _Spec(self.read_only))


@dataclass(frozen=True, slots=True)
class PathRules:
    """Every source's rules, judged together (``verdict``).

    :param sources: the rule sources, in the order given (order does not change a verdict)
    :param show: the prompt section lists the patterns (the operator's opt-in; by default it
        says only that rules exist, so the patterns are no map of what is hidden)
    """

    sources: tuple[RuleSource, ...] = ()
    show: bool = False

    @classmethod
    def of(cls, *, deny: Iterable[str] = (), read_only: Iterable[str] = (),
           files: Iterable[RuleSource] = (), show: bool = False) -> "PathRules":
        """The rules of the deployment's own lists plus each rules file's source.

        :raises ValueError: a pattern that is not one (``RuleSource``)
        """
        own = RuleSource(deny=tuple(deny), read_only=tuple(read_only))
        sources = tuple(s for s in (own, *files) if s.deny or s.read_only)
        return cls(sources, show)

    def __bool__(self) -> bool:
        return bool(self.sources)

    @property
    def denies(self) -> bool:
        """Some source has a deny pattern."""
        return any(s.deny for s in self.sources)

    @property
    def protects(self) -> bool:
        """Some source has a read-only pattern."""
        return any(s.read_only for s in self.sources)

    def verdict(self, rel: str) -> Verdict:
        """What the rules say of ``rel``, a ``/``-separated path below a base (``""``: the base
        itself, which no rule names). Deny wins over read-only."""
        rel = folded(rel.strip("/"))
        if not rel:
            return None
        sources = self.sources
        for source in sources:
            if source._deny.matches(rel):
                return "deny"
        for source in sources:
            if source._read_only.matches(rel):
                return "read-only"
        return None

    def bound(self, bases: Sequence[str]) -> "BoundRules":
        """These rules judging absolute paths below ``bases`` (``BoundRules``)."""
        return BoundRules(self, tuple(bases))


def relative_to(path: str, bases: Sequence[str]) -> list[str]:
    """``path`` (absolute, ``/``-separated, normalized) relative to each of ``bases`` that holds
    it (``""`` for a base itself); relative to ``/`` when none does. Pure."""
    out: list[str] = []
    for base in bases:
        stem = base.rstrip("/")
        if path == stem or path == base:
            out.append("")
        elif path.startswith(stem + "/"):
            out.append(path[len(stem) + 1:])
    return out or [path.lstrip("/")]


@dataclass(frozen=True, slots=True)
class BoundRules:
    """``PathRules`` over absolute paths: each is judged relative to the bases that hold it
    (``relative_to``); the strictest verdict wins."""

    rules: PathRules
    bases: tuple[str, ...]
    """absolute paths (display paths, or real paths for a provider's real paths)"""

    def verdict(self, path: str) -> Verdict:
        """The verdict of the absolute path ``path``."""
        found: Verdict = None
        for rel in relative_to(path, self.bases):
            verdict = self.rules.verdict(rel)
            if verdict == "deny":
                return verdict
            found = found or verdict
        return found


@dataclass(frozen=True, slots=True)
class RuleView:
    """The rules as a provider applies them (``FileSystem.path_rules``): a target is judged by
    its display path against the display bases and by its key (local disk: its real path)
    against the same bases' keys, so a symlink or ``..`` into a fenced place is fenced too."""

    display: BoundRules
    """over display paths (the bases as the provider shows them)"""
    real: BoundRules
    """over keys / real paths (each base's key)"""

    @property
    def rules(self) -> PathRules:
        return self.display.rules

    def verdict(self, display: str, real: str | None = None) -> Verdict:
        """The strictest verdict of the display path ``display`` and the real path ``real``."""
        first = self.display.verdict(display)
        if first == "deny" or real is None:
            return first
        second = self.real.verdict(real)
        return second if second == "deny" or first is None else first


def parse_rules_file(text: str, origin: str) -> RuleSource:
    """A rules file's source (docs/PATH-RULES.md): TOML with two optional keys, each an array
    of gitignore lines, e.g. ``deny = [".env", "secrets/"]`` and ``read_only = ["vendor/**"]``.

    :param origin: the file's path, named in errors
    :raises ValueError: ``<origin>: …`` for TOML that does not parse, an unknown key, a value
        that is not an array of strings, or a string that is not a pattern
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{origin}: not a rules file ({exc})") from None
    unknown = sorted(set(data) - set(RULES_FILE_KEYS))
    if unknown:
        raise ValueError(f"{origin}: unknown key {unknown[0]!r} (a rules file has deny and read_only)")
    lists: dict[str, tuple[str, ...]] = {}
    for key in RULES_FILE_KEYS:
        value = data.get(key, [])
        if not isinstance(value, list):
            raise ValueError(f"{origin}: {key} must be an array of patterns")
        lists[key] = tuple(value)
    return RuleSource(deny=lists["deny"], read_only=lists["read_only"], origin=origin)


_SAYS = {
    (True, False): "Some paths are denied by the deployment's path rules: no tool may read, list, search"
                   " or change them, and they are left out of every listing and search result.",
    (False, True): "Some paths are read-only by the deployment's path rules: they can be read, but no tool"
                   " may change, move or delete them.",
    (True, True): "Some paths are denied by the deployment's path rules: no tool may read, list, search"
                  " or change them, and they are left out of every listing and search result. Others are"
                  " read-only: they can be read, but no tool may change, move or delete them.",
}


def prompt_text(rules: PathRules) -> str:
    """The ``tool:path-rules`` prompt section (DEVIATIONS P6): that rules exist and what each
    kind means, a refusal being final; with ``rules.show``, the patterns of each kind (as
    given, relative to each workspace root). ``""`` without rules."""
    if not rules:
        return ""
    text = "Path rules: " + _SAYS[(rules.denies, rules.protects)] + (
        " A refusal by the path rules is final: do not try to reach such a path another way.")
    if rules.show:
        for label, kind in (("Denied", "deny"), ("Read-only", "read_only")):
            patterns = [p for s in rules.sources for p in getattr(s, kind)]
            if patterns:
                text += f"\n{label} (gitignore patterns, relative to each workspace root): " + ", ".join(patterns)
    return text
