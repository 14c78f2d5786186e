"""``dsh_fs.fs.path_rules`` (pure) and the refusal texts (``fs.errors.path_denied`` /
``path_read_only``): gitignore semantics, the parent rule, caseless and normalization-blind
matching (P2, P3), bases, several sources, rules files, the prompt text (P6). The wrapper and
the tools: tests/integration/fs_rules/."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, strategies as st

from dsh_fs.fs.errors import FsErrorCode, by_path_rules, path_denied, path_read_only, permission_denied, read_only
from dsh_fs.fs.path_rules import (
    BoundRules,
    PathRules,
    RuleSource,
    RuleView,
    folded,
    parse_rules_file,
    prompt_text,
    relative_to,
)

RULES = PathRules.of(deny=[".env", ".env.*", "secrets/", "*.pem", "!keep.pem", "/build/**", "a/**/z"],
                     read_only=["vendor/**", "README.md", "*.lock"])


@pytest.mark.parametrize("rel, verdict", [
    (".env", "deny"), ("sub/.env", "deny"), (".env.local", "deny"), (".envrc", None),
    ("secrets", "deny"), ("secrets/x", "deny"), ("x/secrets/y/z", "deny"), ("secretsx/y", None),
    ("k.pem", "deny"), ("d/k.pem", "deny"), ("keep.pem", None), ("d/keep.pem", None),
    ("secrets/keep.pem", "deny"),  # git: nothing below an excluded directory is re-included
    ("build/a", "deny"), ("build", "deny"), ("x/build/a", None),
    ("a/z", "deny"), ("a/b/c/z", "deny"), ("b/a/z", None),
    ("vendor/lib.py", "read-only"), ("vendor", "read-only"), ("README.md", "read-only"),
    ("docs/README.md", "read-only"), ("Cargo.lock", "read-only"), ("vendor/.env", "deny"),
    ("src/main.py", None), ("", None), ("/", None),
])
def test_verdicts_p2(rel: str, verdict: str | None) -> None:
    assert RULES.verdict(rel) == verdict


@pytest.mark.parametrize("rel", [".ENV", ".Env", "SUB/.eNv", "SECRETS/A", "Key.PEM", "BUILD/x", "/.env", ".env/"])
def test_case_and_slashes_do_not_matter_p3(rel: str) -> None:
    assert RULES.verdict(rel) == "deny"


def test_unicode_spellings_are_one_name_p3() -> None:
    nfc, nfd = unicodedata.normalize("NFC", "Café/ß.txt"), unicodedata.normalize("NFD", "Café/ß.txt")
    assert nfc != nfd
    for pattern in (nfc, nfd):
        rules = PathRules.of(deny=[pattern])
        for rel in (nfc, nfd, nfc.upper(), nfd.lower(), "CAFÉ/SS.TXT"):
            assert rules.verdict(rel) == "deny", (pattern, rel)
    assert folded("ABC") == "abc" and folded(nfd) == folded(nfc) == "café/ss.txt"


@given(st.text(min_size=1, max_size=12))
def test_folding_is_idempotent_and_normalization_blind(text: str) -> None:
    assert folded(folded(text)) == folded(text)
    assert folded(unicodedata.normalize("NFC", text)) == folded(unicodedata.normalize("NFD", text))
    assert folded(text.lower()) == folded(text) or not text.isascii()


def test_a_trailing_slash_pattern_also_fences_a_file_of_that_name_p2() -> None:
    assert PathRules.of(deny=["data/"]).verdict("data") == "deny"


def test_sources_only_add_p2() -> None:
    """A ``!`` line re-includes within its own list only: another source's deny holds."""
    rules = PathRules.of(deny=["*.pem"], files=[RuleSource(deny=["!keep.pem", "other"], origin="f")])
    assert rules.verdict("keep.pem") == "deny"
    assert rules.verdict("other") == "deny"
    assert PathRules.of(deny=["*.pem", "!keep.pem"]).verdict("keep.pem") is None
    assert PathRules.of(read_only=["x"], files=[RuleSource(deny=["x"], origin="f")]).verdict("x") == "deny"


def test_emptiness_and_kinds() -> None:
    assert not PathRules.of()
    assert not PathRules.of(files=[RuleSource(origin="empty")])
    assert PathRules.of(deny=["a"]).denies and not PathRules.of(deny=["a"]).protects
    assert PathRules.of(read_only=["a"]).protects and not PathRules.of(read_only=["a"]).denies
    assert PathRules.of(read_only=["a"]).verdict("b") is None
    assert len(PathRules.of(deny=["a"], files=[RuleSource(read_only=["b"], origin="f")]).sources) == 2


@pytest.mark.parametrize("bad", ["", "   ", "#comment", "!", "a\nb", "a\0b", 5, None])
def test_a_pattern_that_matches_nothing_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="is not a path pattern"):
        PathRules.of(deny=[bad])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="the deployment: read-only:"):
        PathRules.of(read_only=[bad])  # type: ignore[list-item]


def test_relative_to_bases() -> None:
    assert relative_to("/w/a/b", ["/w"]) == ["a/b"]
    assert relative_to("/w", ["/w"]) == [""]
    assert relative_to("/w", ["/w/"]) == [""]
    assert relative_to("/w/a", ["/w/"]) == ["a"]
    assert relative_to("/wx/a", ["/w"]) == ["wx/a"]
    assert relative_to("/w/v/a", ["/w", "/w/v"]) == ["v/a", "a"]
    assert relative_to("/etc/x", ["/w"]) == ["etc/x"]
    assert relative_to("/a", ["/"]) == ["a"]
    assert relative_to("/", ["/"]) == [""]


def test_bound_rules_and_views() -> None:
    bound = PathRules.of(deny=["/top.txt"], read_only=["ro"]).bound(["/w", "/v"])
    assert isinstance(bound, BoundRules)
    assert bound.verdict("/w/top.txt") == "deny" and bound.verdict("/v/top.txt") == "deny"
    assert bound.verdict("/w/sub/top.txt") is None and bound.verdict("/elsewhere/top.txt") is None
    assert bound.verdict("/top.txt") == "deny"  # outside every base: relative to /
    assert bound.verdict("/w/ro") == "read-only" and bound.verdict("/w") is None
    both = PathRules.of(deny=["d"], read_only=["r"]).bound(["/w", "/w/d"])
    assert both.verdict("/w/d/r") == "deny"  # the strictest of the bases holding it
    assert PathRules.of(read_only=["r"]).bound(["/w", "/w/x"]).verdict("/w/x/r") == "read-only"
    rules = PathRules.of(deny=["/secret"], read_only=["/ro"])
    view = RuleView(rules.bound(["/link"]), rules.bound(["/real"]))
    assert view.rules is rules
    assert view.verdict("/link/secret") == "deny"
    assert view.verdict("/link/innocent", "/real/secret") == "deny"  # a symlink: judged where it leads
    assert view.verdict("/link/innocent", "/real/ro") == "read-only"
    assert view.verdict("/link/ro", "/real/secret") == "deny"
    assert view.verdict("/link/ro", "/real/fine") == "read-only"
    assert view.verdict("/link/fine", "/real/fine") is None
    assert view.verdict("/link/fine") is None and view.verdict("/link/ro") == "read-only"


def test_rules_files() -> None:
    source = parse_rules_file('deny = [".env", "keys/"]\nread_only = ["vendor/**"]\n', "r.toml")
    assert (source.deny, source.read_only, source.origin) == ((".env", "keys/"), ("vendor/**",), "r.toml")
    assert parse_rules_file("", "e.toml").deny == ()
    assert parse_rules_file('read_only = ["a"]', "e.toml").deny == ()
    for text, message in [
        ("deny = [", "r.toml: not a rules file"),
        ("deny = [1]", "r.toml: deny: 1 is not a path pattern"),
        ('deny = ".env"', "r.toml: deny must be an array of patterns"),
        ('read_only = "x"', "r.toml: read_only must be an array of patterns"),
        ('allow = ["x"]', "r.toml: unknown key 'allow' (a rules file has deny and read_only)"),
        ('read_only = [""]', "r.toml: read-only: '' is not a path pattern"),
    ]:
        with pytest.raises(ValueError) as info:
            parse_rules_file(text, "r.toml")
        assert str(info.value).startswith(message), (text, str(info.value))


def test_prompt_texts_p6() -> None:
    assert prompt_text(PathRules.of()) == ""
    deny = prompt_text(PathRules.of(deny=[".env"]))
    assert deny == ("Path rules: Some paths are denied by the deployment's path rules: no tool may read, list,"
                    " search or change them, and they are left out of every listing and search result. A refusal"
                    " by the path rules is final: do not try to reach such a path another way.")
    ro = prompt_text(PathRules.of(read_only=["v/**"]))
    assert ro.startswith("Path rules: Some paths are read-only by the deployment's path rules: they can be read,")
    both = prompt_text(PathRules.of(deny=["a"], read_only=["b"]))
    assert "Others are read-only" in both and ".env" not in both
    shown = prompt_text(PathRules.of(deny=[".env", "keys/"], read_only=["v/**"],
                                     files=[RuleSource(deny=["*.pem"], origin="f")], show=True))
    assert shown.endswith("\nDenied (gitignore patterns, relative to each workspace root): .env, keys/, *.pem"
                          "\nRead-only (gitignore patterns, relative to each workspace root): v/**")
    assert "\nRead-only" not in prompt_text(PathRules.of(deny=["a"], show=True))
    assert "\nDenied" not in prompt_text(PathRules.of(read_only=["a"], show=True))


def test_refusal_texts_p1() -> None:
    denied = path_denied("read", "/w/.env")
    assert str(denied) == 'cannot read "/w/.env": permission denied — the path rules deny access to it'
    assert denied.code == FsErrorCode.PERMISSION_DENIED.value
    ro = path_read_only("rename", "/w/v/a")
    assert str(ro) == 'cannot rename "/w/v/a": permission denied — the path rules make it read-only'
    assert ro.code == FsErrorCode.PERMISSION_DENIED.value
    assert by_path_rules(denied) and by_path_rules(ro)
    assert not by_path_rules(permission_denied("write", "/w/a")) and not by_path_rules(read_only("write", "/w/a"))


def test_the_values_are_frozen_keyword_only_and_compared_by_their_patterns() -> None:
    import dataclasses

    source = RuleSource(deny=["a"], origin="o")
    with pytest.raises(dataclasses.FrozenInstanceError):
        source.deny = ("b",)  # type: ignore[misc]
    with pytest.raises(TypeError):
        RuleSource(("a",))  # type: ignore[misc]
    assert source == RuleSource(deny=["a"], origin="o")  # the compiled specs are not compared
    assert "_deny" not in repr(source) and "_read_only" not in repr(source)
    assert not hasattr(source, "__dict__")
    rules = PathRules.of(deny=["a"])
    assert PathRules().show is False and rules.show is False and PathRules.of(deny=["a"], show=True).show
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.show = True  # type: ignore[misc]
    bound = rules.bound(["/w"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        bound.bases = ()  # type: ignore[misc]
    view = RuleView(bound, bound)
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.real = bound  # type: ignore[misc]
    assert not hasattr(rules, "__dict__") and not hasattr(bound, "__dict__") and not hasattr(view, "__dict__")
