"""``fs_rules.files`` (reading a rules file the operator named) and ``fs_rules.prompt`` (the
``tool:path-rules`` section): every refusal of a file that cannot be used, and the section
present exactly when there are rules. The rules' semantics: test_path_rules_pure.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_fs.core.context import Context
from dsh_fs.fs.path_rules import PathRules
from dsh_fs.fs_rules import files
from dsh_fs.fs_rules.files import MAX_RULES_FILE_BYTES, load_rules, read_rules_file
from dsh_fs.fs_rules.prompt import PATH_RULES_ORDER, PathRulesPrompt


def test_read_rules_file(tmp_path: Path) -> None:
    good = tmp_path / "rules.toml"
    good.write_text('deny = [".env"]\nread_only = ["v/**"]\n')
    source = read_rules_file(good)
    assert (source.deny, source.read_only, source.origin) == ((".env",), ("v/**",), str(good))
    rules = load_rules(deny=["a"], read_only=["b"], files=[good], show=True)
    assert [s.origin for s in rules.sources] == ["the deployment", str(good)] and rules.show
    assert not load_rules()
    assert load_rules(deny=["a"]).show is False
    assert load_rules(files=[good]).verdict(".env") == "deny"


def test_a_file_that_cannot_be_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "missing.toml"
    with pytest.raises(ValueError) as info:
        read_rules_file(missing)
    assert str(info.value) == f"{missing}: cannot read the rules file (No such file or directory)"
    with pytest.raises(ValueError, match="cannot read the rules file"):
        read_rules_file(tmp_path)  # a directory
    binary = tmp_path / "b.toml"
    binary.write_bytes(b"deny = ['\xff']\n")
    with pytest.raises(ValueError) as info:
        read_rules_file(binary)
    assert str(info.value) == f"{binary}: a rules file is UTF-8 text"
    big = tmp_path / "big.toml"
    monkeypatch.setattr(files, "MAX_RULES_FILE_BYTES", 16)
    big.write_text("# " + "x" * 15 + "\n")
    with pytest.raises(ValueError) as info:
        read_rules_file(big)
    assert str(info.value) == f"{big}: a rules file holds at most 16 bytes"
    big.write_text("#" * 15 + "\n")  # exactly the limit: read
    assert read_rules_file(big).deny == ()
    assert MAX_RULES_FILE_BYTES == 1 << 20


def test_the_prompt_section() -> None:
    ctx = Context()
    ctx.plugin(PathRulesPrompt, rules=PathRules.of())
    assert "tool:path-rules" not in ctx.system_prompt.names()
    ctx = Context()
    ctx.plugin(PathRulesPrompt, rules=PathRules.of(deny=["a"]))
    (section,) = [s for s in ctx.system_prompt.sections() if s.name == "tool:path-rules"]
    assert section.order == PATH_RULES_ORDER == 105
    assert section.render().startswith("Path rules: Some paths are denied")
    assert PathRulesPrompt.name == "path-rules-prompt"


def test_a_deployment_without_rules_never_imports_pathspec(tmp_path: Path) -> None:
    """The rules' library is loaded with the first rules only (a deployment without them, and an
    environment installed before the dependency was added, never need it)."""
    import subprocess
    import sys

    code = ("import sys, dsh_fs; dsh_fs.create_context(cwd=sys.argv[1], faces=['apply_patch']); "
            "import dsh_fs.tool_fs_search.search_core; print('pathspec' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
