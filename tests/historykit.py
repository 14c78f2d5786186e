"""The history's stateful property (not a test module): a hypothesis state machine over one
workspace (local, memory or S3) whose agent makes random writes, edits, patches (add, update,
delete, move), editor calls and rewinds through the registry with ``history=True``, while
someone else writes and deletes files behind its back.

After every rewind to a step N: every file no one else touched since N is byte for byte as it was
right after step N (or absent as it was), every file whose last change was someone else's is not
changed by the rewind (a file someone else made and deleted again is absent as the agent left
it: nothing of theirs is there to keep), and a refused rewind changes nothing.

``run_history_machine(make_workspace, max_examples=…)`` runs it; ``make_workspace`` is an async
callable returning a fresh ``dsh_fs.testing.workspaces.Workspace``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio.from_thread
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

import dsh_fs
from dsh_fs import Session
from dsh_fs.testing.workspaces import Workspace

__all__ = ("run_history_machine",)

NAMES = ("a.txt", "b.txt", "d/c.txt", "e.txt")
names = st.sampled_from(NAMES)


def run_history_machine(make_workspace: Callable[[], Awaitable[Workspace]], *, max_examples: int,
                        steps: int = 20, store: Callable[[Workspace], Any] | None = None) -> None:
    """Run the machine ``max_examples`` times, ``steps`` rules each; ``store(workspace)`` makes
    the history store (default: in memory)."""

    class Machine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.portal_cm = anyio.from_thread.start_blocking_portal()
            self.portal = self.portal_cm.__enter__()
            self.ws: Workspace = self.portal.call(make_workspace)
            provider = self.portal.call(lambda: self.ws.provider())
            self.ctx = dsh_fs.create_context(provider=provider, policy=False,
                                             history=True if store is None else store(self.ws),
                                             faces=["apply_patch", "str_replace_editor"])
            self.session = Session(cwd=self.ws.root)
            self.counter = 0
            self.trees: list[dict[str, bytes]] = [self.files()]
            self.touched_after: list[set[str]] = [set()]
            self.last_foreign: set[str] = set()
            self.owner_left: dict[str, bytes | None] = {}

        def teardown(self) -> None:
            try:
                self.portal.call(self.ctx.aclose)
                self.portal.call(self.ws.aclose)
            finally:
                self.portal_cm.__exit__(None, None, None)

        # -- helpers ------------------------------------------------------------------------
        def files(self) -> dict[str, bytes]:
            return self.portal.call(self.ws.files)

        def path(self, name: str) -> str:
            return self.ws.path(name)

        def text(self, name: str) -> str:
            self.counter += 1
            return f"{name} #{self.counter}\nbody {self.counter % 3}\n"

        def call(self, tool: str, args: dict[str, Any]) -> None:
            before = self.files()

            async def run() -> Any:
                return await self.ctx.tools.execute(tool, args, session=self.session)

            result = self.portal.call(run)
            after = self.files()
            changed = {n for n in set(before) | set(after) if before.get(n) != after.get(n)}
            if result.is_error:
                assert not changed, (tool, args, result.text)
                return
            self.step_done(after, changed)

        def step_done(self, after: dict[str, bytes], changed: set[str]) -> None:
            self.trees.append(after)
            self.touched_after.append(set())
            self.last_foreign -= changed
            for name in changed:
                self.owner_left[name] = after.get(name)

        def exists(self, name: str) -> bool:
            return name in self.files()

        # -- the agent ----------------------------------------------------------------------
        @rule(name=names)
        def write(self, name: str) -> None:
            self.call("write", {"file_path": self.path(name), "content": self.text(name)})

        @rule(name=names)
        def edit(self, name: str) -> None:
            data = self.files().get(name)
            if data is None:
                return
            first = data.decode().split("\n", 1)[0]
            self.call("edit", {"file_path": self.path(name), "old_string": first, "new_string": first + " edited"})

        @rule(name=names, dest=names, kind=st.sampled_from(["add", "update", "delete", "move"]))
        def patch(self, name: str, dest: str, kind: str) -> None:
            files = self.files()
            p = self.path(name)
            if kind == "add":
                if name in files:
                    return
                body = f"*** Add File: {p}\n+{name} added {self.counter}\n"
                self.counter += 1
            elif name not in files:
                return
            elif kind == "delete":
                body = f"*** Delete File: {p}\n"
            else:
                first = files[name].decode().split("\n", 1)[0]
                move = ""
                if kind == "move":
                    if dest in files:
                        return
                    move = f"*** Move to: {self.path(dest)}\n"
                body = f"*** Update File: {p}\n{move}@@\n-{first}\n+{first} patched\n"
            self.call("apply_patch", {"input": f"*** Begin Patch\n{body}*** End Patch"})

        @rule(name=names, command=st.sampled_from(["create", "str_replace", "insert"]))
        def editor(self, name: str, command: str) -> None:
            data = self.files().get(name)
            p = self.path(name)
            if command == "create":
                if data is not None:
                    return
                args: dict[str, Any] = {"command": "create", "path": p, "file_text": self.text(name)}
            elif data is None:
                return
            elif command == "str_replace":
                first = data.decode().split("\n", 1)[0]
                args = {"command": "str_replace", "path": p, "old_str": first, "new_str": first + " replaced"}
            else:
                args = {"command": "insert", "path": p, "insert_line": 1, "new_str": "inserted"}
            self.call("str_replace_editor", args)

        # -- someone else ---------------------------------------------------------------------
        @rule(name=names, delete=st.booleans())
        def outside(self, name: str, delete: bool) -> None:
            if delete:
                if not self.exists(name):
                    return
                self.portal.call(self.ws.delete, name)
            else:
                self.counter += 1
                self.portal.call(self.ws.put, name, f"{name} theirs {self.counter}\n".encode())
            for touched in self.touched_after:
                touched.add(name)
            self.last_foreign.add(name)
            if delete and name in self.owner_left and self.owner_left[name] is None:
                self.last_foreign.discard(name)  # absent again, as the agent left it: nothing of theirs to keep

        # -- the rewind ------------------------------------------------------------------------
        @precondition(lambda self: len(self.trees) > 1)
        @rule(data=st.data(), skip=st.booleans())
        def rewind(self, data: st.DataObject, skip: bool) -> None:
            point = data.draw(st.integers(min_value=0, max_value=len(self.trees) - 1))
            before = self.files()

            async def run() -> Any:
                return await self.ctx.rewind(self.session, to=point, skip_changed=skip)

            result = self.portal.call(run)
            after = self.files()
            assert result.error is None, result
            for name in self.last_foreign:
                assert after.get(name) == before.get(name), ("someone else's change was overwritten", name)
            if result.refused:
                assert after == before
                return
            for name in set(self.trees[point]) | set(after) | set(before):
                if name not in self.touched_after[point]:
                    assert after.get(name) == self.trees[point].get(name), (name, point, result)
            changed = {n for n in set(before) | set(after) if before.get(n) != after.get(n)}
            if result.step is not None:
                self.step_done(after, changed)
            else:
                assert not changed

        @invariant()
        def history_has_one_step_per_change(self) -> None:
            async def count() -> int:
                return len(await self.ctx.history(self.session))

            assert self.portal.call(count) == len(self.trees) - 1

    run_state_machine_as_test(Machine, settings=settings(
        max_examples=max_examples, stateful_step_count=steps, deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]))
