"""How a far side is named and reached (``fs_channel.channels``, ``fs_channel.errors``,
``open_provider``'s channel schemes, the CLI's ``--root``/``--cwd`` values): the exact argument
vectors (no shell but ssh's, which gets the vector quoted), identities, roots, refusals, and the
texts of a failed channel (DEVIATIONS C2)."""

from __future__ import annotations

import shlex
from typing import Any

import click
import pytest

import dsh_fs
from dsh_fs.cli.options import _DirOrChannel, channel_url
from dsh_fs.fs.errors import FsError
from dsh_fs.fs_channel import errors
from dsh_fs.fs_channel.channels import (CommandChannel, SshChannel, channel_for_url, container_channel,
                                        kubectl_channel)

COMMAND = ["python3", "-I", "-S", "-c", "print('a b'); x = \"$HOME\""]


def test_container_runtimes_pass_the_vector_as_is() -> None:
    docker = container_channel("docker", "box")
    assert docker.argv(COMMAND) == ["docker", "exec", "-i", "box", *COMMAND]
    assert docker.identity == "docker://box"
    podman = container_channel("podman", "b", user="agent", exec_args=["--workdir", "/w"], program="/usr/bin/podman")
    assert podman.argv(["x"]) == ["/usr/bin/podman", "exec", "-i", "--user", "agent", "--workdir", "/w", "b", "x"]
    assert podman.identity == "podman://b"


def test_kubectl_passes_the_vector_after_its_double_dash() -> None:
    assert kubectl_channel("pod").argv(["x"]) == ["kubectl", "exec", "-i", "pod", "--", "x"]
    every = kubectl_channel("pod", namespace="ns", container="c", context="ctx", program="kc")
    assert every.argv(["x"]) == ["kc", "exec", "-i", "--context", "ctx", "-n", "ns", "-c", "c", "pod", "--", "x"]
    assert every.identity == "kubectl://ns/pod" and kubectl_channel("p").identity == "kubectl://p"


def test_ssh_sends_the_vector_quoted_for_the_remote_shell() -> None:
    ssh = SshChannel("me@host", port=2222, env={})
    argv = ssh.argv(COMMAND)
    assert argv[:5] == ["ssh", "-p", "2222", "me@host", "--"] and len(argv) == 6
    assert shlex.split(argv[5]) == COMMAND  # the remote shell splits it back into the same vector
    assert ssh.identity == "ssh://me@host:2222"
    assert SshChannel("host", env={}).identity == "ssh://host"
    assert SshChannel("::1", env={}).identity == "ssh://[::1]"


def test_the_ssh_program_comes_from_the_environment_or_the_caller() -> None:
    env = {"DSH_FS_SSH_COMMAND": "ssh -i '/keys/my key' -o BatchMode=yes"}
    assert SshChannel("h", env=env).prefix == ["ssh", "-i", "/keys/my key", "-o", "BatchMode=yes", "h", "--"]
    assert SshChannel("h", ssh_command=["/bin/myssh", "-v"], env=env).prefix == ["/bin/myssh", "-v", "h", "--"]
    assert SshChannel("h", ssh_command="tsh ssh", env={}).prefix == ["tsh", "ssh", "h", "--"]
    assert SshChannel("h", env={"DSH_FS_SSH_COMMAND": ""}).prefix == ["ssh", "h", "--"]
    with pytest.raises(ValueError, match="names no program"):
        SshChannel("h", ssh_command="   ", env={})


def test_a_command_channel_names_itself_by_its_prefix() -> None:
    assert CommandChannel([]).identity == "command://local"
    assert CommandChannel(["sb", "exec", "a b"]).identity == "command://sb exec 'a b'"
    assert CommandChannel(["x"], identity="mine://y").describe() == "mine://y"


@pytest.mark.parametrize(("url", "argv", "identity", "root"), [
    ("docker://box/work/dir", ["docker", "exec", "-i", "box"], "docker://box", "/work/dir"),
    ("docker://box", ["docker", "exec", "-i", "box"], "docker://box", "/"),
    ("podman://box/", ["podman", "exec", "-i", "box"], "podman://box", "/"),
    ("podman://my%20box/a%20b", ["podman", "exec", "-i", "my box"], "podman://my box", "/a b"),
    ("kubectl://pod/srv", ["kubectl", "exec", "-i", "pod", "--"], "kubectl://pod", "/srv"),
    ("ssh://me@host:2200/srv/p", ["ssh", "-p", "2200", "me@host", "--"], "ssh://me@host:2200", "/srv/p"),
    ("ssh://host/~/p", ["ssh", "host", "--"], "ssh://host", "~/p"),
    ("ssh://[::1]/p", ["ssh", "::1", "--"], "ssh://[::1]", "/p"),
])
def test_channel_urls(url: str, argv: list[str], identity: str, root: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DSH_FS_SSH_COMMAND", raising=False)
    scheme, location = url.split("://", 1)
    named = channel_for_url(scheme, location)
    assert isinstance(named.channel, CommandChannel)
    assert named.channel.prefix == argv
    assert (named.channel.identity, named.root) == (identity, root)


@pytest.mark.parametrize(("scheme", "location", "message"), [
    ("ftp", "x/y", "is not one of"), ("docker", "/work", "names no container"), ("kubectl", "", "names no pod"),
    ("ssh", "/p", "names no host"), ("ssh", "me@/p", "names no host"),
])
def test_channel_urls_that_name_no_far_side_are_refused(scheme: str, location: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        channel_for_url(scheme, location)


def test_open_provider_builds_a_channel_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DSH_FS_SSH_COMMAND", raising=False)
    fs: Any = dsh_fs.open_provider("docker://box/work", user="u", python="/opt/py3", write_max_size=10)
    assert (fs.identity, fs.root, fs.cwd, fs.python, fs.options) == ("docker://box", "/work", "/work", "/opt/py3",
                                                                      {"write_max_size": 10})
    assert fs.channel.prefix == ["docker", "exec", "-i", "--user", "u", "box"]
    assert fs.workspace_roots() == ("/work",)
    loose: Any = dsh_fs.open_provider("podman://b/w", root=None, cwd="/w/sub", profile="reference")
    assert (loose.root, loose.cwd, loose.workspace_roots(), loose.profile.value) == (None, "/w/sub", (), "reference")
    other: Any = dsh_fs.open_provider("ssh://h/a", root="/", ssh_command="myssh")
    assert (other.root, other.channel.prefix) == ("/", ["myssh", "h", "--"])
    several: Any = dsh_fs.open_provider("kubectl://p/a", roots=["/a", "kubectl://p/b"], namespace="n")
    assert (several.roots, several.root, several.cwd, several.identity) == (("/a", "/b"), "/a", "/a", "kubectl://n/p")
    with pytest.raises(ValueError, match="is not a path of"):
        dsh_fs.open_provider("kubectl://p/a", roots=["/a", "kubectl://q/b"])
    with pytest.raises(ValueError, match="is not a path of"):
        dsh_fs.open_provider("docker://p/a", roots=["/a", "podman://p/b"])
    with pytest.raises(ValueError, match="give root= or roots="):
        dsh_fs.open_provider("docker://p/a", roots=["/a"], root="/a")
    with pytest.raises(TypeError, match="unknown options"):
        dsh_fs.open_provider("docker://p/a", bogus=1)
    with pytest.raises(ValueError, match="is not an absolute far-side path"):
        dsh_fs.open_provider("docker://p/a", cwd="rel")


def test_the_cli_takes_a_far_directory_where_it_takes_a_directory(tmp_path: Any) -> None:
    local = _DirOrChannel(resolve_path=True)
    assert local.convert("docker://box/w", None, None) == "docker://box/w"
    assert local.convert(str(tmp_path), None, None) == str(tmp_path)
    with pytest.raises(click.BadParameter, match="names no container"):
        local.convert("docker:///w", None, None)
    with pytest.raises(click.BadParameter, match="does not exist"):
        local.convert(str(tmp_path / "missing"), None, None)
    with pytest.raises(click.BadParameter, match="does not exist"):
        local.convert("s3://b/p", None, None)  # another scheme is not a far side: a (missing) directory
    assert channel_url("ssh://h/p") and channel_url("podman://b") and not channel_url("/x")
    assert not channel_url(None) and not channel_url("s3://b") and not channel_url("docker:/x")


def test_the_channel_failure_texts() -> None:
    assert str(errors.could_not_start("docker://b", "exit status 1: no such container")) == \
        "the dsh-fs helper could not start over docker://b: exit status 1: no such container"
    assert str(errors.no_python("ssh://h", "python3")) == (
        "there is no python3 on ssh://h (the dsh-fs helper needs Python 3.11 or later there): install it there, "
        "or name an interpreter with python=")
    assert str(errors.python_too_old("ssh://h", "python3", "3.9.2")) == (
        "python3 on ssh://h is Python 3.9.2; the dsh-fs helper needs 3.11 or later: install Python 3.11 or later "
        "there, or name it with python=")
    assert str(errors.lost("docker://b", "exit status 137")) == \
        "the channel to docker://b closed before the answer (exit status 137)"
    assert str(errors.no_answer_after_abort("docker://b", 5.0)) == (
        "aborted, and docker://b did not answer within 5 s; the file is unchanged or completely written (read it to "
        "see which)")
    assert str(errors.garbled("docker://b", "x")) == "the dsh-fs helper on docker://b answered outside the protocol (x)"
    assert all(e.before_sent for e in (errors.could_not_start("a", "b"), errors.no_python("a", "b"),
                                       errors.python_too_old("a", "b", "c")))
    assert not any(e.before_sent for e in (errors.lost("a", "b"), errors.garbled("a", "b")))


def test_a_channel_failure_becomes_the_primitives_io_error() -> None:
    lost = errors.lost("docker://b", "gone")
    read = lost.as_fs_error("read", "/w/a")
    assert isinstance(read, FsError) and read.code == "FS_IO_ERROR" and read.cause is lost
    assert str(read) == 'cannot read "/w/a": the channel to docker://b closed before the answer (gone)'
    for verb in ("write", "edit", "delete", "rename"):
        assert str(lost.as_fs_error(verb, "/w/a")) == (
            f'cannot {verb} "/w/a": the channel to docker://b closed before the answer (gone); the file is unchanged '
            "or completely written (read it to see which)")
    unsent = errors.could_not_start("docker://b", "x")
    assert str(unsent.as_fs_error("write", "/w/a")) == \
        'cannot write "/w/a": the dsh-fs helper could not start over docker://b: x'  # never sent: nothing changed
    late = errors.no_answer_after_abort("docker://b", 0.5)
    assert str(late.as_fs_error("edit", "/w/a")) == (
        'cannot edit "/w/a": aborted, and docker://b did not answer within 0.5 s; the file is unchanged or completely '
        "written (read it to see which)")  # said once
