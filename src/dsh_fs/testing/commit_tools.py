"""Real commits applied through the TOOLS (docs/design/EDITING-FACES-DESIGN.md §5).

``dsh_fs.testing.commits`` turns a commit into the three forms and checks them on the pure
engine. Here the same forms go through every layer a model's calls go through, on a real
provider (the local disk by default) with the observation policy on:

* ``codex`` — ``read`` of every file the patch changes, then one ``apply_patch`` registry call;
* ``responses`` — ``read`` calls, then one ``apply_patch_call`` item per operation through the
  OpenAI Responses adapter (``run_responses_function_calls``);
* ``editor`` — Anthropic ``tool_use`` blocks through the Anthropic adapter
  (``run_anthropic_tool_uses``): ``view`` of every file, then the ``create`` /
  ``str_replace`` / ``insert`` calls of ``str_replace_based_edit_tool``.

Each form starts from a fresh workspace holding the commit's parent files; the result must
equal the child files byte for byte (CRLF and BOM files included). Command line:
``python -m dsh_fs.testing.commit_replay CHECKOUT --through tools``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio

from ..core.session import Session
from ..fs.filesystem import FileSystem
from .commits import Delta, Skipped, Tree, codex_patch, editor_calls, parent_tree, responses_operations

__all__ = ("ProviderFactory", "apply_forms_through_tools", "local_provider", "memory_provider")

ProviderFactory = Callable[[Tree], tuple[FileSystem, Callable[[], Tree], Callable[[], None]]]
"""builds a workspace holding ``tree``: ``(provider, snapshot, cleanup)``; ``snapshot`` gives
every file of the workspace, relative path → bytes"""


def local_provider(tree: Tree) -> tuple[FileSystem, Callable[[], Tree], Callable[[], None]]:
    """A temporary directory on the local disk, contained (``root=``), holding ``tree``."""
    from ..fs_local import LocalFileSystem

    root = os.path.realpath(tempfile.mkdtemp(prefix="dsh-fs-replay-"))
    for rel, data in tree.items():
        path = os.path.join(root, *rel.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)

    def snapshot() -> Tree:
        out: Tree = {}
        for base, _dirs, names in os.walk(root):
            for name in names:
                path = os.path.join(base, name)
                with open(path, "rb") as handle:
                    out[os.path.relpath(path, root).replace(os.sep, "/")] = handle.read()
        return out

    def cleanup() -> None:
        import shutil

        shutil.rmtree(root, ignore_errors=True)

    return LocalFileSystem(cwd=root, root=root), snapshot, cleanup


def memory_provider(tree: Tree) -> tuple[FileSystem, Callable[[], Tree], Callable[[], None]]:
    """A ``MemoryFileSystem`` holding ``tree``."""
    from ..fs_memory import MemoryFileSystem

    fs = MemoryFileSystem(dict(tree))
    return fs, fs.snapshot, lambda: None


def _touched(deltas: Sequence[Delta], skipped: Skipped) -> list[str]:
    """The parent's files a form changes (they must be observed first)."""
    skip = {path for path, _ in skipped}
    return [d.path for d in deltas if d.old is not None and d.path not in skip]


async def _codex(ctx: Any, session: Session, deltas: Sequence[Delta]) -> Skipped:
    patch, skipped = codex_patch(deltas)
    for path in _touched(deltas, skipped):
        await ctx.tools.execute("read", {"file_path": path}, session=session)
    if patch is not None:
        result = await ctx.tools.execute("apply_patch", {"input": patch}, session=session)
        if result.is_error:
            raise AssertionError(result.text)
    return skipped


async def _responses(ctx: Any, session: Session, deltas: Sequence[Delta]) -> Skipped:
    from ..adapters.openai_responses import run_responses_function_calls

    operations, skipped = responses_operations(deltas)
    reads = [{"type": "function_call", "call_id": f"r{i}", "name": "read", "arguments": _json({"file_path": path})}
             for i, path in enumerate(_touched(deltas, skipped))]
    patches = [{"type": "apply_patch_call", "call_id": f"p{i}", "status": "completed", "operation": op}
               for i, op in enumerate(operations)]
    for item in await run_responses_function_calls(ctx, {"output": reads + patches}, session=session):
        if item["type"] == "apply_patch_call_output" and item["status"] != "completed":
            raise AssertionError(item["output"])
    return skipped


async def _editor(ctx: Any, session: Session, deltas: Sequence[Delta]) -> Skipped:
    from ..adapters.anthropic_messages import run_anthropic_tool_uses

    calls, skipped = editor_calls(deltas)
    views = [{"command": "view", "path": path} for path in _touched(deltas, skipped)]
    blocks = [{"type": "tool_use", "id": f"t{i}", "name": "str_replace_based_edit_tool", "input": call}
              for i, call in enumerate(views + calls)]
    for block in await run_anthropic_tool_uses(ctx, {"content": blocks}, session=session):
        if block["is_error"]:
            raise AssertionError(block["content"])
    return skipped


def _json(value: Mapping[str, Any]) -> str:
    import json

    return json.dumps(value)


_FORMS = {"codex": _codex, "responses": _responses, "editor": _editor}


def apply_forms_through_tools(deltas: Sequence[Delta], *, provider: ProviderFactory = local_provider
                              ) -> dict[str, tuple[Tree | Exception, Skipped]]:
    """Apply each form of ``deltas`` through the tools, each to a fresh workspace holding the
    parent files.

    :return: form → (the workspace's files afterwards, or the failure; the form's skips)
    """
    from .. import create_context

    out: dict[str, tuple[Tree | Exception, Skipped]] = {}
    for form, run in _FORMS.items():
        fs, snapshot, cleanup = provider(parent_tree(deltas))
        try:
            ctx = create_context(provider=fs, search=False,
                                 faces=["str_replace_based_edit_tool"] if form == "editor" else ["apply_patch"])
            session = Session(cwd=getattr(fs, "cwd", None))

            async def go(ctx: Any = ctx, session: Session = session, run: Any = run) -> Skipped:
                async with ctx:
                    return await run(ctx, session, deltas)  # type: ignore[no-any-return]

            try:
                skipped = anyio.run(go)
                out[form] = (snapshot(), skipped)
            except Exception as exc:  # noqa: BLE001 - reported with the commit
                out[form] = (exc, [])
        finally:
            cleanup()
    return out
