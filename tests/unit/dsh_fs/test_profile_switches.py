"""Every deviation ID is decided by exactly one named profile switch, or is structural.

The registers are the tables of ``docs/DEVIATIONS.md`` and ``../shared/spec/DEVIATIONS.md``;
the switches are the ``profile_switch`` fields of every ``ProfileSwitches`` class (providers'
``TextRules``/``LocalRules``, the tool layer's ``ToolSwitches``); the structural IDs (both
profiles, no switch) are listed in ``docs/DEVIATIONS.md`` ("Where each deviation is decided").
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys

import pytest

import dsh_fs.fs_local.rules  # noqa: F401  (defines LocalRules)
from dsh_fs.core.profile import PROFILE_SWITCH, Profile, ProfileSwitches
from dsh_fs.tool_common.switches import ToolSwitches

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")
SHARED = os.path.abspath(os.environ.get("DSH_FS_SHARED", os.path.join(ROOT, "..", "shared")))
OURS = os.path.join(ROOT, "docs", "DEVIATIONS.md")
FOUNDING = os.path.join(SHARED, "spec", "DEVIATIONS.md")

_ROW = re.compile(r"^\| ([A-Z]\d+) \|", re.MULTILINE)


def _registered() -> set[str]:
    ids: set[str] = set()
    for path in (OURS, FOUNDING):
        with open(path, encoding="utf-8") as f:
            ids |= set(_ROW.findall(f.read()))
    return ids


def _expand(listing: str) -> set[str]:
    """``"A1–A3, D16"`` → ``{"A1", "A2", "A3", "D16"}``."""
    out: set[str] = set()
    for part in re.split(r",\s*", listing.strip().rstrip(".")):
        m = re.fullmatch(r"([A-Z])(\d+)(?:[–-]\1?(\d+))?", part)
        assert m, f"cannot read {part!r} in the structural list"
        first, last = int(m.group(2)), int(m.group(3) or m.group(2))
        out |= {f"{m.group(1)}{n}" for n in range(first, last + 1)}
    return out


def _structural() -> set[str]:
    with open(OURS, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"they are\s+structural:\s*([^\n]+)", text)
    assert m, "docs/DEVIATIONS.md lists the structural IDs"
    return _expand(m.group(1))


def _switch_classes() -> list[type[ProfileSwitches]]:
    found, todo = [], list(ProfileSwitches.__subclasses__())
    while todo:
        cls = todo.pop()
        # ``slots=True`` replaces a dataclass: the class its module exports is the live one
        if getattr(sys.modules[cls.__module__], cls.__qualname__, None) is cls:
            found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def _deciders() -> dict[str, list[str]]:
    """Deviation ID → the switches (``Class.field``, each counted in the class declaring it)."""
    out: dict[str, list[str]] = {}
    for cls in _switch_classes():
        own = cls.__dict__.get("__annotations__", {})
        for name, ids in cls.deviations().items():
            if name in own:
                for dev in ids:
                    out.setdefault(dev, []).append(f"{cls.__name__}.{name}")
    return out


def test_the_switch_classes_are_found() -> None:
    names = {cls.__name__ for cls in _switch_classes()}
    assert {"TextRules", "LocalRules", "ToolSwitches"} <= names


def test_every_deviation_is_decided_by_exactly_one_switch_or_is_structural() -> None:
    registered, structural, deciders = _registered(), _structural(), _deciders()
    assert {"A1", "D1", "D21", "S6", "E18"} <= registered  # both registers were read
    assert structural <= registered, f"structural but not registered: {sorted(structural - registered)}"
    assert not set(deciders) - registered, f"switches name unregistered IDs: {sorted(set(deciders) - registered)}"
    both = sorted(structural & set(deciders))
    assert not both, f"listed as structural yet switched: {both}"
    several = {dev: where for dev, where in sorted(deciders.items()) if len(where) > 1}
    assert not several, f"decided by more than one switch: {several}"
    undecided = sorted(registered - structural - set(deciders))
    assert not undecided, f"neither switched nor structural: {undecided}"


def test_the_docs_name_the_switches_of_each_class() -> None:
    """The "Where each deviation is decided" list names each class's IDs (a new switch is
    documented where a reader looks first)."""
    with open(OURS, encoding="utf-8") as f:
        text = f.read()
    labels = {"TextRules": "`fs.provider_rules.TextRules`", "LocalRules": "`fs_local.rules.LocalRules`",
              "ToolSwitches": "`tool_common.switches.ToolSwitches`"}
    for cls in _switch_classes():
        label = labels[cls.__name__]  # a new switch class is named in the docs too
        m = re.search(re.escape(label) + r"\s*\(([^)]*)\)", text)
        assert m, label
        own = cls.__dict__.get("__annotations__", {})
        declared = {dev for name, ids in cls.deviations().items() if name in own for dev in ids}
        assert _expand(m.group(1)) == declared, label


@pytest.mark.parametrize("profile", list(Profile))
def test_tool_switches_follow_the_profile_and_are_built_once(profile: Profile) -> None:
    switches = ToolSwitches.of(profile)
    assert switches is ToolSwitches.of(profile.value)
    assert all(getattr(switches, name) is profile.is_default for name in ToolSwitches.switches())
    assert ToolSwitches.of(None) is ToolSwitches.of(Profile.DEFAULT)
    with pytest.raises(dataclasses.FrozenInstanceError):
        switches.remedies = not switches.remedies  # type: ignore[misc]


def test_every_tool_switch_is_a_profile_switch() -> None:
    """A plain ``bool = True`` field would be on in the reference profile."""
    flags = [f.name for f in dataclasses.fields(ToolSwitches) if f.type in (bool, "bool")]
    assert sorted(flags) == sorted(ToolSwitches.switches())
    assert all(PROFILE_SWITCH in f.metadata for f in dataclasses.fields(ToolSwitches))
    with pytest.raises(ValueError, match="profile must be"):
        ToolSwitches.of("better")
