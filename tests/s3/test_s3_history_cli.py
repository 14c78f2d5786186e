"""``--history-s3``: a named session's history kept in a bucket (docs/HISTORY.md), shared by every
machine serving the name. Two "machines" (processes with their own state directories) record
into it through the tool commands and ``dsh-fs mcp``; a third lists, diffs, rewinds and forgets
it with ``dsh-fs sessions``, against the loopback S3 server. Bad uses of the option are in
tests/robustness/cli/test_bad_cli_values.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_fs.testing.workspaces import S3Workspace

pytestmark = pytest.mark.anyio

STEP = re.compile(r"^(\d+)  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  (\S+)  (.*)$")


def _machine(tmp_path: Path, name: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_FS_")}
    env.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1",
               DSH_FS_STATE_DIR=str(tmp_path / name / "state"), DSH_FS_LOCK_DIR=str(tmp_path / name / "locks"))
    return env


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=60, stdin=subprocess.DEVNULL)


async def test_two_machines_record_and_a_third_lists_diffs_rewinds_and_forgets(
        bucket: S3Workspace, s3_endpoint: str, tmp_path: Path) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    served = f"s3://{bucket.location.bucket}/{bucket.location.prefix}"
    kept = f"s3://{bucket.location.bucket}/histories"
    files = ["--s3", served, "--endpoint-url", s3_endpoint]
    history = ["--history-s3", kept, "--endpoint-url", s3_endpoint]
    await bucket.put("a.txt", b"one\n")
    one, two, three = (_machine(tmp_path, n) for n in ("one", "two", "three"))
    assert _cli(["read", "a.txt", "--session", "s1", *files, "--history-s3", kept], one).returncode == 0
    edited = _cli(["edit", "a.txt", "--old", "one", "--new", "ONE", "--session", "s1", *files, "--history-s3", kept],
                  one)
    assert edited.returncode == 0, edited.stdout + edited.stderr
    params = StdioServerParameters(command=sys.executable, env=two, args=[
        "-m", "dsh_fs.cli.main", "mcp", "--session", "s1", *files, "--history-s3", kept])
    async with stdio_client(params) as streams, ClientSession(*streams) as session:
        await session.initialize()
        made = await session.call_tool("write", {"file_path": "b.txt", "content": "bee\n"})
        assert not made.is_error, made.content
    assert await bucket.files() == {"a.txt": b"ONE\n", "b.txt": b"bee\n"}

    listed = _cli(["sessions", "history", "s1", *history], three)
    assert listed.returncode == 0, listed.stderr
    steps = [STEP.match(line).groups() for line in listed.stdout.splitlines()]  # type: ignore[union-attr]
    assert steps == [("1", "edit", "/a.txt"), ("2", "write", "/b.txt (created)")]
    assert not (tmp_path / "three" / "state" / "history.sqlite3").exists()  # nothing kept locally

    diff = _cli(["sessions", "diff", "s1", "--since", "0", *files, "--history-s3", kept], three)
    assert diff.returncode == 0, diff.stderr
    assert "-one\n+ONE\n" in diff.stdout and "+bee\n" in diff.stdout

    rewound = _cli(["sessions", "rewind", "s1", "--to", "0", *files, "--history-s3", kept], three)
    assert rewound.returncode == 0, rewound.stdout + rewound.stderr
    assert await bucket.files() == {"a.txt": b"one\n"}
    redo = _cli(["sessions", "rewind", "s1", "--last", "1", *files, "--history-s3", kept], three)
    assert redo.returncode == 0, redo.stdout + redo.stderr
    assert await bucket.files() == {"a.txt": b"ONE\n", "b.txt": b"bee\n"}

    forgot = _cli(["sessions", "forget", "s1", *history], three)
    assert forgot.returncode == 0, forgot.stderr
    assert forgot.stdout == "forgot session 's1' (0 observations, 4 history steps)\n"
    gone = _cli(["sessions", "history", "s1", *history], three)
    assert (gone.returncode, gone.stderr.splitlines()[-1]) == (2, "Error: session 's1' has no history")


async def test_an_unreachable_history_bucket_is_a_clear_failure(bucket: S3Workspace, s3_endpoint: str,
                                                                tmp_path: Path) -> None:
    env = _machine(tmp_path, "one")
    done = _cli(["sessions", "history", "s1", "--history-s3", "s3://no-such-bucket-here/h", "--endpoint-url",
                 s3_endpoint], env)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("Error: cannot use the history store s3://no-such-bucket-here/h: ")


async def test_the_page_s_lines_print_what_it_shows(bucket: S3Workspace, s3_endpoint: str, tmp_path: Path) -> None:
    from docskit import REPO, section

    text = section("### Several machines: the history in a bucket", REPO / "docs" / "HISTORY.md")
    lines, rest = text.split("```bash\n", 1)[1].split("```\n", 1)
    shown = rest.split("```text\n", 1)[1].split("```", 1)[0]
    team = S3Workspace(endpoint_url=s3_endpoint, bucket="team", prefix="app")
    await team.create()
    try:
        await team.put("app.py", b"version = 'v1'\n")
        env = _machine(tmp_path, "one")
        env.update(DSH_FS_S3_ENDPOINT=s3_endpoint,
                   PATH=os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""))
        done = subprocess.run(["/bin/sh", "-ec", lines], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        when = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
        assert when.sub("T", done.stdout) == when.sub("T", shown)
        assert await team.files() == {"app.py": b"version = 'v1'\n"}
    finally:
        await team.aclose()
