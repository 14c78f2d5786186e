"""Real commits as editing-face calls: the proof that the patch engine rebuilds a commit's child
tree from its parent byte for byte (docs/design/EDITING-FACES-DESIGN.md §5).

A commit (first parent → commit) becomes

* ``codex_patch`` — one Codex ``*** Begin Patch`` envelope (adds, deletes, updates, renames as
  ``*** Move to:``);
* ``responses_operations`` — Responses API ``apply_patch_call`` operations (a rename is a
  ``delete_file`` plus a ``create_file``);
* ``editor_calls`` — text-editor ``create``/``str_replace``/``insert`` calls (the editor has
  no delete or rename: those files are reported as skipped).

Hunks are made with ``difflib`` and grown until their expected lines occur exactly once past the
previous hunk — checked here, independently of the engine's locator. ``apply_codex``,
``apply_responses`` and ``apply_editor`` run the pure engine on an in-memory tree;
``dsh_fs.testing.commit_tools`` runs the same calls through the tools, the adapters and a real
provider; ``dsh_fs.testing.commit_replay`` replays a checkout's history either way. A change the
forms cannot carry is skipped with a reason: non-UTF-8 or binary files, a BOM added or removed,
line breaks of mixed or changed style, and (Codex envelope only) an added file without a final
line break.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any, Literal

from ..fs.literal_edit import plan_edit
from ..fs.text import BOM, NotTextError, decode_text
from ..patch import AddFile, Chunk, DeleteFile, FileState, Patch, UpdateFile, format_operation_diff, format_patch
from ..patch import parse_operation, parse_patch, plan_patch, required_paths
from ..patch.apply import file_lines
from ..tool_editor.insert import content_line_count, insert_text

__all__ = (
    "Delta",
    "Tree",
    "apply_codex",
    "apply_editor",
    "apply_responses",
    "codex_patch",
    "commit_deltas",
    "editor_calls",
    "expected_tree",
    "git",
    "parent_tree",
    "responses_operations",
    "update_chunks",
)

Tree = dict[str, bytes]
"""path → file bytes (only the paths a commit touches)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class Delta:
    """One file changed by a commit."""

    status: Literal["A", "M", "D", "R"]
    path: str
    """the path in the parent (for ``A``: the new path)"""
    new_path: str | None = None
    """the path in the child for ``R``"""
    old: bytes | None = None
    new: bytes | None = None


# -- texts ------------------------------------------------------------------------------------


def _decode(data: bytes) -> str | None:
    try:
        return decode_text(data, nul_scan=None)
    except NotTextError:
        return None


def _style(text: str) -> Literal["LF", "CRLF", "mixed"]:
    """``LF`` (no CR at all), ``CRLF`` (every LF after a CR, no other CR) or ``mixed``."""
    if "\r" not in text:
        return "LF"
    crlf = text.count("\r\n")
    return "CRLF" if crlf == text.count("\n") == text.count("\r") else "mixed"


def _update_problem(old: bytes, new: bytes) -> str | None:
    """Why an update cannot be carried by a patch, or ``None`` (criteria independent of the engine)."""
    before, after = _decode(old), _decode(new)
    if before is None or after is None:
        return "not UTF-8 text"
    if old.startswith(BOM) != new.startswith(BOM):
        return "BOM added or removed"
    old_style, new_style = _style(before), _style(after)
    if "mixed" in (old_style, new_style):
        return "mixed line breaks"
    if "\n" in after and (old_style != new_style or (new_style == "CRLF" and "\r\n" not in before)):
        return "line break style changed"
    return None


def _add_problem(new: bytes, *, codex: bool) -> str | None:
    text = _decode(new)
    if text is None:
        return "not UTF-8 text"
    if codex and new and not new.endswith(b"\n"):
        return "added file without a final line break (Codex envelope)"
    return None


def _full_text(data: bytes) -> str:
    """An added file's whole text, BOM included (it is part of what the patch creates)."""
    return data.decode("utf-8")


# -- hunks ------------------------------------------------------------------------------------


def _starts(lines: Sequence[str], block: Sequence[str], cursor: int) -> list[int]:
    """Every index at or after ``cursor`` where ``block`` occurs (exact lines)."""
    size = len(block)
    first = block[0]
    return [
        i
        for i in range(cursor, len(lines) - size + 1)
        if lines[i] == first and list(lines[i : i + size]) == list(block)
    ]


def update_chunks(before: str, after: str, *, context: int = 3) -> tuple[Chunk, ...]:
    """Hunks turning ``before`` into ``after`` (LF-normalized line model of the engine), each
    starting with a bare ``@@`` and unique past the previous hunk; context starts at
    ``context`` lines and doubles until every hunk is unique. Equal texts give one hunk of
    context only (an update must have a hunk).

    :raises AssertionError: no unique hunks exist (cannot happen: one whole-file hunk is unique)
    """
    a, b = file_lines(before), file_lines(after)
    matcher = SequenceMatcher(None, a, b)
    opcodes = list(matcher.get_opcodes())
    n = max(context, 1)
    while True:
        matcher.opcodes = list(opcodes)  # get_grouped_opcodes trims the cached opcodes in place
        groups = list(matcher.get_grouped_opcodes(n)) if a != b else [[("equal", 0, min(n, len(a)), 0, min(n, len(a)))]]
        chunks: list[Chunk] = []
        cursor = 0
        for group in groups:
            ops: list[tuple[Any, str]] = []
            for tag, i1, i2, j1, j2 in group:
                if tag == "equal":
                    ops += [(" ", line) for line in a[i1:i2]]
                else:
                    ops += [("-", line) for line in a[i1:i2]] + [("+", line) for line in b[j1:j2]]
            block = [text for op, text in ops if op != "+"]
            start = group[0][1]
            if _starts(a, block, cursor) != [start]:
                break
            chunks.append(Chunk(anchors=("",), lines=tuple(ops)))
            cursor = start + len(block)
        else:
            return tuple(chunks)
        if n >= len(a):
            raise AssertionError("no unique hunks")  # pragma: no cover - a whole-file hunk is unique
        n *= 2


# -- the three forms ----------------------------------------------------------------------------


Skipped = list[tuple[str, str]]
"""(path, reason) of changes a form cannot carry"""


def codex_patch(deltas: Sequence[Delta]) -> tuple[str | None, Skipped]:
    """One Codex envelope for every change it can carry (``None`` if none)."""
    ops: list[Any] = []
    skipped: Skipped = []
    for d in deltas:
        if d.status == "D":
            ops.append(DeleteFile(path=d.path))
        elif d.status == "A":
            problem = _add_problem(d.new or b"", codex=True)
            if problem:
                skipped.append((d.path, problem))
                continue
            ops.append(AddFile(path=d.path, text=_full_text(d.new or b"")))
        else:
            problem = _update_problem(d.old or b"", d.new or b"")
            if problem:
                skipped.append((d.path, problem))
                continue
            chunks = update_chunks(_decode(d.old or b"") or "", _decode(d.new or b"") or "")
            ops.append(UpdateFile(path=d.path, move_to=d.new_path, chunks=chunks))
    return (format_patch(Patch(ops=tuple(ops))) if ops else None), skipped


def responses_operations(deltas: Sequence[Delta]) -> tuple[list[dict[str, str]], Skipped]:
    """Responses API ``operation`` objects (``{"type", "path"[, "diff"]}``) in order."""
    out: list[dict[str, str]] = []
    skipped: Skipped = []
    for d in deltas:
        if d.status == "M":
            problem = _update_problem(d.old or b"", d.new or b"")
            if problem:
                skipped.append((d.path, problem))
                continue
            chunks = update_chunks(_decode(d.old or b"") or "", _decode(d.new or b"") or "")
            diff = format_operation_diff(UpdateFile(path=d.path, chunks=chunks, dialect="v4a"))
            out.append({"type": "update_file", "path": d.path, "diff": diff})
            continue
        problem = None if d.status == "D" else _add_problem(d.new or b"", codex=False)
        if problem:
            skipped.append((d.path, problem))
            continue
        if d.status in ("D", "R"):
            out.append({"type": "delete_file", "path": d.path})
        if d.status in ("A", "R"):
            path = d.new_path or d.path
            diff = format_operation_diff(AddFile(path=path, text=_full_text(d.new or b"")))
            out.append({"type": "create_file", "path": path, "diff": diff})
    return out, skipped


def _occurs_once(text: str, needle: str) -> bool:
    """``needle`` occurs exactly once, overlapping occurrences included (``edit`` counts only
    non-overlapping ones and would take the first of two overlapping occurrences)."""
    first = text.find(needle)
    return first >= 0 and text.find(needle, first + 1) < 0


def _replace_call(cur: list[str], i1: int, i2: int, new: Sequence[str], path: str) -> dict[str, Any]:
    """A unique ``str_replace`` for replacing ``cur[i1:i2]`` by ``new`` (context grows)."""
    text = "\n".join(cur)
    reach = 1
    while True:
        lo, hi = max(0, i1 - reach), min(len(cur), i2 + reach)
        old = "\n".join(cur[lo:hi])
        if old and _occurs_once(text, old):
            return {"command": "str_replace", "path": path, "old_str": old, "new_str": "\n".join([*cur[lo:i1], *new, *cur[i2:hi]])}
        if lo == 0 and hi == len(cur):
            raise AssertionError("no unique old_str")  # pragma: no cover - the whole text is unique
        reach *= 2


def editor_calls(deltas: Sequence[Delta]) -> tuple[list[dict[str, Any]], Skipped]:
    """Text-editor calls (Anthropic face): ``create`` for added (or empty) files, then one
    ``insert`` or ``str_replace`` per changed region, last region first."""
    out: list[dict[str, Any]] = []
    skipped: Skipped = []
    for d in deltas:
        if d.status in ("D", "R"):
            skipped.append((d.path, "the text editor cannot delete or rename"))
            continue
        if d.status == "A":
            problem = _add_problem(d.new or b"", codex=False)
            if problem:
                skipped.append((d.path, problem))
                continue
            out.append({"command": "create", "path": d.path, "file_text": _full_text(d.new or b"")})
            continue
        problem = _update_problem(d.old or b"", d.new or b"")
        if problem:
            skipped.append((d.path, problem))
            continue
        before, after = _decode(d.old or b"") or "", _decode(d.new or b"") or ""
        if not before:
            out.append({"command": "create", "path": d.path, "file_text": after})
            continue
        cur, b = file_lines(before), file_lines(after)
        opcodes = [op for op in SequenceMatcher(None, cur, b).get_opcodes() if op[0] != "equal"]
        for tag, i1, i2, j1, j2 in reversed(opcodes):
            count = len(cur) - 1 if cur[-1] == "" else len(cur)
            if tag == "insert" and i1 <= count:
                text = "\n".join(b[j1:j2]) + "\n"
                out.append({"command": "insert", "path": d.path, "insert_line": i1, "insert_text": text})
            else:
                out.append(_replace_call(cur, i1, i2, b[j1:j2], d.path))
            cur[i1:i2] = b[j1:j2]
    return out, skipped


# -- pure appliers (the engine on an in-memory tree) ------------------------------------------


def _state(tree: Mapping[str, bytes], path: str) -> FileState:
    data = tree.get(path)
    return FileState(display=path, key=path, text=None if data is None else decode_text(data, nul_scan=None))


def _apply_patch(tree: Tree, patch: Patch) -> Tree:
    out = dict(tree)
    states = {path: _state(tree, path) for path in required_paths(patch)}
    for change in plan_patch(patch, states):
        if change.kind == "delete":
            del out[change.path]
        elif change.kind == "create":
            out[change.path] = (change.after or "").encode("utf-8")
        else:
            bom = BOM if tree[change.path].startswith(BOM) else b""
            data = bom + (change.after or "").encode("utf-8")
            if change.move_to is not None:
                del out[change.path]
                out[change.move_to] = data
            else:
                out[change.path] = data
    return out


def apply_codex(tree: Tree, patch_text: str) -> Tree:
    """``tree`` after a Codex patch (BOMs of updated files kept, as the default profile does)."""
    return _apply_patch(tree, parse_patch(patch_text))


def apply_responses(tree: Tree, operations: Sequence[Mapping[str, str]]) -> Tree:
    """``tree`` after Responses operations, each applied on its own (one call each)."""
    for operation in operations:
        op = parse_operation(operation["type"], operation["path"], operation.get("diff"))  # type: ignore[arg-type]
        tree = _apply_patch(tree, Patch(ops=(op,)))
    return tree


def apply_editor(tree: Tree, calls: Sequence[Mapping[str, Any]]) -> Tree:
    """``tree`` after text-editor calls: ``create`` overwrites (keeping a BOM, as D4 does),
    ``str_replace`` is ``edit`` with a unique match (D1/D2), ``insert`` takes whole lines."""
    out = dict(tree)
    for call in calls:
        path = call["path"]
        data = out.get(path)
        bom = BOM if data is not None and data.startswith(BOM) else b""
        if call["command"] == "create":
            out[path] = bom + call["file_text"].encode("utf-8")
            continue
        assert data is not None, f"{call['command']} of missing {path}"
        raw = decode_text(data, nul_scan=None)
        if call["command"] == "str_replace":
            text = plan_edit(raw, call["old_str"], call["new_str"], False, keep_bytes=True).text
        else:
            if not 0 <= call["insert_line"] <= content_line_count(raw):
                raise ValueError(f"insert_line {call['insert_line']} out of range in {path}")
            text = insert_text(raw, call["insert_line"], call["insert_text"], whole_lines=True, keep_bytes=True)
        out[path] = bom + text.encode("utf-8")
    return out


# -- git ---------------------------------------------------------------------------------------


def git(repo: Path, *args: str) -> bytes:
    """The standard output of ``git -C repo ARGS`` (raises ``CalledProcessError`` on failure)."""
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def _blob(repo: Path, commit: str, path: str) -> bytes:
    return git(repo, "cat-file", "blob", f"{commit}:{path}")


def commit_deltas(repo: Path, commit: str) -> list[Delta]:
    """The files ``commit`` changes against its first parent (a root commit against the empty
    tree), renames detected; submodules and symlinks are left out."""
    parents = git(repo, "rev-list", "--parents", "-n", "1", commit).split()[1:]
    base = parents[0].decode() if parents else git(repo, "hash-object", "-t", "tree", "/dev/null").decode().strip()
    raw = git(repo, "diff-tree", "-r", "-z", "-M", "--no-commit-id", base, commit).split(b"\0")
    deltas: list[Delta] = []
    i = 0
    while i < len(raw) - 1:
        meta = raw[i].decode().split()
        old_mode, new_mode, status = meta[0].lstrip(":"), meta[1], meta[4][0]
        paths = [raw[i + 1].decode("utf-8", "surrogateescape")]
        i += 2
        if status in "RC":
            paths.append(raw[i].decode("utf-8", "surrogateescape"))
            i += 1
        if {old_mode, new_mode} - {"100644", "100755", "000000"}:
            continue  # symlinks, submodules
        if status == "A":
            deltas.append(Delta(status="A", path=paths[0], new=_blob(repo, commit, paths[0])))
        elif status == "D":
            deltas.append(Delta(status="D", path=paths[0], old=_blob(repo, base, paths[0])))
        elif status == "R":
            old, new = _blob(repo, base, paths[0]), _blob(repo, commit, paths[1])
            deltas.append(Delta(status="R", path=paths[0], new_path=paths[1], old=old, new=new))
        elif status in "MT":
            deltas.append(Delta(status="M", path=paths[0], old=_blob(repo, base, paths[0]), new=_blob(repo, commit, paths[0])))
        elif status == "C":
            deltas.append(Delta(status="A", path=paths[1], new=_blob(repo, commit, paths[1])))
    return deltas


def parent_tree(deltas: Sequence[Delta]) -> Tree:
    """The touched files as they are in the parent."""
    return {d.path: d.old for d in deltas if d.old is not None}


def expected_tree(deltas: Sequence[Delta], skipped: Skipped) -> Tree:
    """The touched files as they are in the child, except the skipped ones (left as in the parent)."""
    skip = {path for path, _ in skipped}
    out = parent_tree(deltas)
    for d in deltas:
        if d.path in skip or (d.new_path is not None and d.new_path in skip):
            continue
        if d.status in ("D", "R"):
            out.pop(d.path, None)
        if d.status != "D":
            assert d.new is not None
            out[d.new_path or d.path] = d.new
    return out
