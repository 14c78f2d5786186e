"""Real commits rebuilt by the patch engine and by the tools (issue 11 "Proof on real input").

A small git repository is built in a temp dir — LF, CRLF, BOM and BOM+CRLF files, a file
without a final line break, repeated blocks that force wider context, adds, deletes, renames
with and without edits, final line breaks added and removed, a binary file, a line-break style
change — and each commit is turned into a Codex patch, Responses operations and text-editor
calls (``dsh_fs.testing.commits``) whose application to the parent must give the child byte
for byte. Skips are asserted too: a form that cannot carry a change must say so. Each form runs
twice: on the pure engine, and through the tools — the ``apply_patch`` registry tool, the OpenAI
Responses adapter's ``apply_patch_call`` items and the Anthropic adapter's text-editor
``tool_use`` blocks, after ``read``/``view`` calls, with the observation policy on, on the local
disk and on the in-memory provider (``dsh_fs.testing.commit_tools``).

Not covered here: the history of a large checkout (``python -m dsh_fs.testing.commit_replay
CHECKOUT [--through tools]``).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from dsh_fs.testing.commit_replay import Report, replay_commit
from dsh_fs.testing.commit_tools import local_provider, memory_provider
from dsh_fs.testing.commits import apply_codex, apply_editor, apply_responses, codex_patch, commit_deltas
from dsh_fs.testing.commits import editor_calls, expected_tree, parent_tree, responses_operations

BOM = b"\xef\xbb\xbf"
BLOCK = "def handler(event):\n    if event is None:\n        return None\n    return process(event)\n\n"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def commit(repo: Path, files: dict[str, bytes | None], message: str, *, renames: dict[str, str] | None = None) -> str:
    for old, new in (renames or {}).items():
        (repo / new).parent.mkdir(parents=True, exist_ok=True)
        git(repo, "mv", old, new)
    for name, data in files.items():
        path = repo / name
        if data is None:
            git(repo, "rm", "-q", name)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[str]]]:
    repo = tmp_path_factory.mktemp("history")
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    git(repo, "config", "core.autocrlf", "false")
    lines = "".join(f"line {i}\n" for i in range(1, 41))
    commits = [
        commit(
            repo,
            {
                "src/app.py": lines.encode(),
                "win.txt": b"alpha\r\nbeta\r\ngamma\r\ndelta\r\n",
                "bom.txt": BOM + b"first\nsecond\nthird\n",
                "bomcrlf.ini": BOM + b"[a]\r\nx=1\r\n[b]\r\ny=2\r\n",
                "noeol.txt": b"one\ntwo\nthree",
                "dup.py": (BLOCK * 4).encode(),
                "old/name.txt": b"keep me\nand me\n",
                "same.txt": b"unchanged content\n",
                "empty.txt": b"",
                "gone.txt": b"bye\n",
            },
            "root",
        ),
        commit(
            repo,
            {
                "src/app.py": lines.replace("line 3\n", "line three\n")
                .replace("line 20\n", "line 20\ninserted a\ninserted b\n")
                .replace("line 39\n", "")
                .encode(),
                "win.txt": b"alpha\r\nBETA\r\nnew\r\ngamma\r\ndelta\r\n",
                "bom.txt": BOM + b"first\n2nd\nthird\nfourth\n",
                "bomcrlf.ini": BOM + b"[a]\r\nx=10\r\n[b]\r\ny=2\r\nz=3\r\n",
                "noeol.txt": b"one\ntwo\nTHREE",
                "dup.py": (BLOCK * 2 + BLOCK.replace("process(event)", "handle(event)") + BLOCK).encode(),
                "new/added.txt": b"fresh\nfile\n",
                "empty.txt": b"now has text\n",
                "gone.txt": None,
            },
            "edits, adds, deletes",
            renames={"old/name.txt": "renamed/name.txt"},
        ),
        commit(
            repo,
            {
                "renamed/name.txt": b"keep me\nand me\nplus one\n",
                "noeol.txt": b"one\ntwo\nTHREE\n",  # final line break added
                "bom.txt": BOM + b"first\n2nd\nthird\nfourth",  # final line break removed
                "crlf-new.txt": b"made\r\non\r\nwindows\r\n",
                "tail.txt": b"no final newline",
                "win.txt": b"",  # emptied
            },
            "line breaks, CRLF add, rename with edit",
            renames={"same.txt": "moved/same.txt"},
        ),
        commit(
            repo,
            {
                "image.bin": b"\x89PNG\r\n\x1a\n\x00\x00",
                "src/app.py": lines.replace("line 3\n", "line three\n").replace("\n", "\r\n").encode(),
                "dup.py": (BLOCK * 2 + BLOCK.replace("process(event)", "handle(event)") + BLOCK).encode()
                + b"# end\n",
            },
            "binary, style change",
        ),
    ]
    yield repo, commits


@pytest.mark.parametrize(
    ("through", "provider"),
    [("engine", None), ("tools", local_provider), ("tools", memory_provider)],
    ids=["engine", "tools-local", "tools-memory"],
)
def test_every_commit_is_rebuilt_byte_for_byte_in_every_form(history: tuple[Path, list[str]], through: str,
                                                              provider: object) -> None:
    repo, commits = history
    report = Report()
    for sha in commits:
        replay_commit(repo, sha, report, through=through, provider=provider)  # type: ignore[arg-type]
    assert report.failures == []
    assert report.commits == 4
    assert dict(report.checked) == {"codex": 26, "responses": 28, "editor": 25}  # 30 files; skips below
    assert report.skipped == {
        "codex: added file without a final line break (Codex envelope)": 2,
        "codex: not UTF-8 text": 1,
        "codex: line break style changed": 1,
        "responses: not UTF-8 text": 1,
        "responses: line break style changed": 1,
        "editor: not UTF-8 text": 1,
        "editor: line break style changed": 1,
        "editor: the text editor cannot delete or rename": 3,
    }


def test_the_edit_commit_in_each_form(history: tuple[Path, list[str]]) -> None:
    repo, commits = history
    deltas = commit_deltas(repo, commits[1])
    assert sorted((d.status, d.path, d.new_path) for d in deltas) == sorted(
        [
            ("M", "src/app.py", None),
            ("M", "win.txt", None),
            ("M", "bom.txt", None),
            ("M", "bomcrlf.ini", None),
            ("M", "noeol.txt", None),
            ("M", "dup.py", None),
            ("A", "new/added.txt", None),
            ("M", "empty.txt", None),
            ("D", "gone.txt", None),
            ("R", "old/name.txt", "renamed/name.txt"),
        ]
    )
    tree = parent_tree(deltas)
    patch, skipped = codex_patch(deltas)
    assert skipped == [] and patch is not None
    assert "*** Move to: renamed/name.txt" in patch and "*** Delete File: gone.txt" in patch
    assert apply_codex(tree, patch) == expected_tree(deltas, [])
    operations, skipped = responses_operations(deltas)
    assert skipped == []
    assert {"type": "delete_file", "path": "old/name.txt"} in operations
    assert apply_responses(tree, operations) == expected_tree(deltas, [])
    calls, skipped = editor_calls(deltas)
    assert sorted(path for path, _ in skipped) == ["gone.txt", "old/name.txt"]
    assert {call["command"] for call in calls} == {"create", "str_replace", "insert"}
    assert apply_editor(tree, calls) == expected_tree(deltas, skipped)


def test_the_repeated_block_needs_wider_context_and_gets_it(history: tuple[Path, list[str]]) -> None:
    repo, commits = history
    (dup,) = [d for d in commit_deltas(repo, commits[1]) if d.path == "dup.py"]
    patch, _ = codex_patch([dup])
    assert patch is not None
    hunk = patch.split("@@\n", 1)[1]
    assert hunk.count("\n") > 7  # 3 lines of context each side would fit all four blocks
    assert apply_codex(parent_tree([dup]), patch) == expected_tree([dup], [])


@pytest.mark.parametrize("through", ["engine", "tools"])
def test_the_cli_replays_a_checkout(history: tuple[Path, list[str]], through: str) -> None:
    repo, _ = history
    run = subprocess.run([sys.executable, "-m", "dsh_fs.testing.commit_replay", str(repo), "--through", through],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "commits: 4" in run.stdout and "FAILED" not in run.stdout
    assert "rebuilt byte for byte (codex): 26 files" in run.stdout
