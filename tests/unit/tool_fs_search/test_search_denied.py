"""``tool_fs_search.denied`` (DEVIATIONS P4): the walk that finds denied entries before
ripgrep runs, the globs that keep ripgrep out of them (checked against ripgrep itself for
every way it prints a path), the filter of printed paths, and ripgrep's "no files searched"
notice. The searches end to end: tests/integration/fs_rules/test_path_rules_paths.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from dsh_fs.fs.path_rules import PathRules, RuleView
from dsh_fs.tool_fs_search import denied
from dsh_fs.tool_fs_search.denied import MAX_DENY_GLOBS, HostRules, deny_globs, denied_below, nothing_searched
from dsh_fs.tool_fs_search.engine import find_ripgrep


def rules_for(root: Path, *deny: str) -> HostRules:
    rules = PathRules.of(deny=deny)
    view = RuleView(rules.bound([str(root)]), rules.bound([os.path.realpath(root)]))
    return HostRules(view, str(root))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for rel in ("a/.env", "a/ok.txt", "keys/k.txt", "keys/deep/d.txt", "ok.txt", ".git/.env", "b[1]/.env", "c/x.txt"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    os.symlink(".env", root / "a" / "link.txt")  # dangling-free: a/.env exists
    os.symlink("../keys", root / "a" / "k")
    os.symlink("../a", root / "keys" / "up")  # never walked: below a denied directory
    os.symlink("a", root / "loop")
    os.symlink("../ok.txt", root / "c" / ".env")  # a link whose own name is denied
    os.symlink(".", root / "a" / "here")  # a link to the directory it is in: walked once
    return root


def test_denied_below_finds_files_dirs_and_links(tree: Path) -> None:
    rules = rules_for(tree, ".env", "keys/")
    found = denied_below(str(tree), rules, follow=True)
    assert sorted(os.path.relpath(p, tree) for p in found) == sorted([
        "a/.env", "a/link.txt", "a/k", "keys", "b[1]/.env", "loop/.env", "loop/link.txt", "loop/k", "c/.env"])
    assert len(found) == len(set(found))  # each once (VCS metadata never walked)
    plain = denied_below(str(tree), rules, follow=False)
    assert sorted(os.path.relpath(p, tree) for p in plain) == ["a/.env", "b[1]/.env", "keys"]


def test_denied_below_stays_inside_a_root_and_stops(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".env").write_text("x")
    os.symlink(str(outside), tree / "out")
    rules = rules_for(tree, ".env")
    inside = denied_below(str(tree), rules, follow=True, root=str(tree))
    assert not [p for p in inside if "/out/" in p]
    anywhere = denied_below(str(tree), rules, follow=True)
    assert str(tree / "out" / ".env") in anywhere
    assert denied_below(str(tree), rules, follow=True, stopped=lambda: True) == []
    assert denied_below(str(tree / "missing"), rules, follow=True) == []


def test_host_rules_admit(tree: Path) -> None:
    rules = rules_for(tree, ".env", "keys/")
    assert rules.admit("ok.txt") and rules.admit("ok.txt")  # the second from the one-entry cache
    assert not rules.admit("a/.env")
    assert not rules.admit("a/link.txt")  # a link to a denied file
    assert not rules.admit("a/k/k.txt")  # below a link to a denied directory
    assert not rules.admit(str(tree / "a" / ".ENV"))
    assert rules.admit("gone.txt")  # a name no longer there: judged by its name
    assert rules.admit_many(["ok.txt", "a/.env", "a/ok.txt", "loop/ok.txt"]) == ["ok.txt", "a/ok.txt", "loop/ok.txt"]
    small = rules_for(tree, ".env")
    denied._REAL_DIRS_KEPT, kept = 1, denied._REAL_DIRS_KEPT
    try:
        assert small.admit("a/ok.txt") and small.admit("ok.txt") and not small.admit("a/.env")
    finally:
        denied._REAL_DIRS_KEPT = kept


def test_nothing_searched() -> None:
    notice = ("rg: No files were searched, which means ripgrep probably applied a filter you didn't expect.\n"
              "Running with --debug will show why files are being skipped.\n")
    assert nothing_searched(notice) and nothing_searched("\n" + notice + "\n")
    assert not nothing_searched("") and not nothing_searched(notice + "rg: other\n")
    assert not nothing_searched(notice.splitlines()[0])


def test_deny_globs_forms() -> None:
    assert deny_globs(["/w/a/.env", "/w/b[1]/x*"], "/w", None) == ["--glob=!/a/.env", "--glob=!/b\\[1\\]/x\\*"]
    assert deny_globs(["/w/sub/k"], "/w", "sub") == ["--glob=!/sub/k", "--glob=!sub/k"]
    assert deny_globs(["/w/k"], "/w/sub", "..") == ["--glob=!../k"]
    assert deny_globs(["/w/k"], "/w/sub", "../") == ["--glob=!../k"]
    assert deny_globs(["/v/k"], "/w", "/v") == ["--glob=!**/v/k"]
    assert deny_globs(["/w/k"], "/w", "/w") == ["--glob=!/k", "--glob=!**/w/k"]
    assert deny_globs(["/k"], "/w", "/") == ["--glob=!**/k"]
    assert deny_globs(["/x/k"], "/w", "sub") == []  # neither below cwd nor the searched path
    assert deny_globs(["/w/a"] * (MAX_DENY_GLOBS + 5), "/w", None) == ["--glob=!/a"] * MAX_DENY_GLOBS


@pytest.mark.parametrize("cwd, path_arg", [(".", None), (".", "."), (".", "sub"), (".", "./sub"), ("sub", ".."),
                                           ("sub", "../"), ("sub", "{root}"), (".", "{root}/sub"), ("sub", "../sub")])
def test_ripgrep_is_kept_out_of_every_denied_entry_p4(tmp_path: Path, cwd: str, path_arg: str | None) -> None:
    """The globs, as ripgrep itself applies them, for every form a printed path takes."""
    root = tmp_path / "ws"
    for rel in ("sub/.env", "sub/ok.txt", "sub/keys/k.txt", ".env", "top.txt", "sub/we ird*/.env"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    here = root / cwd
    arg = path_arg.replace("{root}", str(root)) if path_arg is not None else None
    rules = rules_for(root, ".env", "keys/")
    top = os.path.normpath(os.path.join(here, arg)) if arg is not None else str(here)
    globs = deny_globs(denied_below(top, rules, follow=True), os.path.normpath(here), arg)
    argv = [find_ripgrep(), "--no-config", "--files", "--no-ignore", "--hidden", *globs, *(["--", arg] if arg else [])]
    listed = subprocess.run(argv, cwd=here, capture_output=True, text=True, check=False).stdout.splitlines()
    assert listed, argv
    assert not [p for p in listed if ".env" in p or "keys" in p], (globs, listed)


def test_printed_paths_become_normal_host_paths() -> None:
    rules = HostRules(RuleView(PathRules.of(deny=["x"]).bound(["/w"]), PathRules.of(deny=["x"]).bound(["/w"])), "/w/")
    for printed, host in [("a/b", "/w/a/b"), ("a//b", "/w/a/b"), ("a/./b", "/w/a/b"), ("a/../b", "/w/b"),
                          ("./a", "/w/a"), ("../a", "/a"), ("a/.", "/w/a"), ("a/..", "/w"), (".", "/w"), ("..", "/"),
                          ("/v/a", "/v/a"), ("/w/a", "/w/a"), (".a", "/w/.a"), ("..a", "/w/..a")]:
        assert rules._host(printed) == host, printed


def test_the_real_path_is_judged_against_the_real_bases(tmp_path: Path) -> None:
    """A root spelled through a symlink: a path printed by its real spelling is judged against
    the root's real path (the display bases alone would not hold it)."""
    real = tmp_path / "real"
    (real / "keys").mkdir(parents=True)
    (real / "keys" / "k.txt").write_text("x")
    os.symlink(real, tmp_path / "link")
    rules = PathRules.of(deny=["/keys/"])
    host = HostRules(RuleView(rules.bound([str(tmp_path / "link")]), rules.bound([str(real)])), str(tmp_path / "link"))
    assert not host.same_bases
    assert host.denied(str(real / "keys" / "k.txt"))
    assert host.denied(str(tmp_path / "link" / "keys" / "k.txt"))
    same = HostRules(RuleView(rules.bound([str(real)]), rules.bound([str(real)])), str(real))
    assert same.same_bases


def test_an_anchored_rule_holds_for_an_absolute_printed_path(tree: Path) -> None:
    rules = rules_for(tree, "/keys/")
    assert not rules.admit(str(tree / "keys" / "k.txt"))
    assert rules.admit(str(tree / "a" / "ok.txt"))


def test_the_kept_real_directories_are_bounded(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert (MAX_DENY_GLOBS, denied._REAL_DIRS_KEPT) == (10_000, 1 << 16)
    monkeypatch.setattr(denied, "_REAL_DIRS_KEPT", 1)
    rules = rules_for(tree, ".env")
    for printed in ("a/ok.txt", "ok.txt", "keys/k.txt", "keys/deep/d.txt"):
        rules.admit(printed)
        assert len(rules._real_dirs) <= 1
