"""An agent process for ``test_many_processes`` (run as a child process; not a test module).

``python edit_worker.py WORKSPACE FILE`` loads the default deployment over WORKSPACE with
its own ``Session`` and answers JSON lines on stdin:

* ``{"op": "read"}`` → ``{"ok": bool, "code": str|null, "text": str}`` (a read of FILE);
* ``{"op": "edit", "token": T}`` → the same shape, for an edit that replaces the marker
  line with ``T`` followed by the marker (so every successful edit adds one line);
* ``{"op": "loop", "n": N, "prefix": P}`` → ``{"ok": [tokens...], "failed": [[token, code], ...]}``
  after N read-then-edit rounds with tokens ``P-0 … P-(N-1)``.
"""

from __future__ import annotations

import json
import sys

import anyio

import dsh_fs

MARKER = "<<<MARKER>>>\n"


def _answer(result: dsh_fs.ToolResult) -> dict:
    return {"ok": not result.is_error, "code": result.error.code if result.error else None, "text": result.text}


async def main(workspace: str, name: str) -> None:
    ctx = dsh_fs.create_context(cwd=workspace)
    session = dsh_fs.Session(cwd=workspace)

    async def read() -> dsh_fs.ToolResult:
        return await ctx.tools.execute("read", {"file_path": name, "limit": 1}, session=session)

    async def edit(token: str) -> dsh_fs.ToolResult:
        args = {"file_path": name, "old_string": MARKER, "new_string": f"{token}\n{MARKER}"}
        return await ctx.tools.execute("edit", args, session=session)

    while True:
        line = await anyio.to_thread.run_sync(sys.stdin.readline)
        if not line:
            return
        command = json.loads(line)
        if command["op"] == "read":
            reply = _answer(await read())
        elif command["op"] == "edit":
            reply = _answer(await edit(command["token"]))
        elif command["op"] == "loop":
            ok: list[str] = []
            failed: list[list[str | None]] = []
            for i in range(command["n"]):
                token = f"{command['prefix']}-{i}"
                seen = await read()
                if seen.is_error:
                    failed.append([token, "read: " + seen.text])
                    continue
                result = await edit(token)
                if result.is_error:
                    failed.append([token, result.error.code if result.error else result.text])
                else:
                    ok.append(token)
            reply = {"ok": ok, "failed": failed}
        else:
            reply = {"error": f"unknown op {command['op']!r}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
