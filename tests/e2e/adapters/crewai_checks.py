"""Checks of ``DshFsToolkit``'s tools outside a crew, as a program for the CrewAI environment
(run by ``test_crewai.py::test_toolkit_checks``; no tests here). Prints ``ok`` when every
check holds; an ``AssertionError`` otherwise.

``python crewai_checks.py BASE`` checks, in workspaces under ``BASE``:

* ``run`` (sync, on the toolkit's loop) and ``arun`` (async, on the caller's) give the same
  text; a ``null`` optional argument is "not given";
* bad arguments get the registry's own text (CrewAI validates nothing);
* a failure is a ``ToolFailure`` with the exact text and the error's name/code; with
  ``errors="text"`` it is the plain text;
* one ``Session`` per toolkit: a read through one does not authorize an edit through another;
* no result is ever cached (a repeated read after a change shows the change);
* unknown names and ``errors`` modes are refused;
* the module's ``__all__`` is a sorted tuple of names it has (``test_public_api``'s check,
  which the dev environment cannot import this module for).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # tests/: frameworkkit

from crewai.tools.tool_failure import ToolFailure  # noqa: E402

import dsh_fs  # noqa: E402
import dsh_fs.adapters.crewai  # noqa: E402
from dsh_fs.adapters.crewai import DshFsToolkit  # noqa: E402
from frameworkkit import make_workspace  # noqa: E402


def direct(ctx: dsh_fs.Context, name: str, arguments: object) -> str:
    return asyncio.run(ctx.tools.execute(name, arguments, session=dsh_fs.Session())).text


def main(base: str) -> None:
    ws = make_workspace(os.path.join(base, "one"))
    path = os.path.join(ws, "a.txt")
    ctx = dsh_fs.create_context(root=ws)
    first, second = DshFsToolkit(ctx), DshFsToolkit(ctx, errors="text")
    read = {t.name: t for t in first.get_tools()}["read"]
    edit_first = {t.name: t for t in first.get_tools()}["edit"]
    edit_second = {t.name: t for t in second.get_tools()}["edit"]
    try:
        seen = read.run(file_path=path, offset=None, limit=None)
        assert seen == asyncio.run(read.arun(file_path=path)) == direct(ctx, "read", {"file_path": path})
        bad = read.run(file_path=7)
        assert isinstance(bad, ToolFailure) and bad.message == direct(ctx, "read", {"file_path": 7})
        assert bad.as_agent_message() == bad.message  # no code suffix: the model sees our text
        refused = edit_second.run(file_path=path, old_string="teh", new_string="the")
        assert isinstance(refused, str) and refused.startswith("Error: ") and "edit requires reading" in refused
        assert Path(path).read_text() == "hello teh world\n"
        changed = "hello teh world, changed\n"
        Path(path).write_text(changed)
        assert "changed" in read.run(file_path=path)  # never cached
        after_reread = edit_first.run(file_path=path, old_string="teh", new_string="the")
        assert after_reread == f"The file {path} has been updated successfully.", after_reread
        missing = edit_first.run(file_path=os.path.join(ws, "nope.txt"), old_string="a", new_string="b")
        assert isinstance(missing, ToolFailure) and missing.details["code"].startswith("FS_"), missing
        for wrong in ({"names": ["read", "bogus"]}, {"errors": "raise"}):
            try:
                DshFsToolkit(ctx, **wrong)  # type: ignore[arg-type]
            except ValueError:
                pass
            else:
                raise AssertionError(f"accepted {wrong}")
        assert first.instructions() != "" and first.instructions() in dsh_fs.create_context().system_prompt.render()
    finally:
        first.close()
        second.close()
    exported = dsh_fs.adapters.crewai.__all__
    assert isinstance(exported, tuple) and list(exported) == sorted(set(exported))
    assert all(hasattr(dsh_fs.adapters.crewai, item) for item in exported)
    print("ok")


if __name__ == "__main__":
    main(sys.argv[1])
