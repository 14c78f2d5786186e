"""Bearer token files and the token verifier (``mcp/auth.py``): a token file is written only
where nothing was, and read only when it is private to the serving user. Through the
module's public functions, on a real disk (the suite runs as root: "another user" is a
chowned file)."""

from __future__ import annotations

import os
import re
import stat
from typing import Any

import anyio
import pytest

from dsh_fs.mcp.http.auth import (
    TOKEN_PREFIX,
    BearerTokens,
    load_token_file,
    mint_tokens,
    principal_name,
    require_private,
    write_token_file,
)

A = "dshfs_" + "a" * 43
B = "dshfs_" + "b" * 43
_HEADER = "# dsh-fs mcp bearer tokens: one per agent; line order names them agent-1, agent-2, …\n"


def _private(path: str, text: str) -> str:
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)
    os.chmod(path, 0o600)
    return path


# -- writing -------------------------------------------------------------------------------------

def test_a_written_token_file_is_private_fsynced_and_reads_back(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    path = str(tmp_path / "tokens")
    write_token_file(path, [A, B])
    assert open(path, encoding="utf-8").read() == f"{_HEADER}{A}\n{B}\n"
    assert stat.S_IMODE(os.lstat(path).st_mode) == 0o600 and len(synced) == 1
    assert load_token_file(path) == [A, B]


def test_writing_never_overwrites_an_existing_file(tmp_path: Any) -> None:
    path = _private(str(tmp_path / "tokens"), f"{A}\n")
    with pytest.raises(FileExistsError):
        write_token_file(path, [B])
    assert open(path).read() == f"{A}\n"


def test_writing_never_goes_through_a_dangling_symlink(tmp_path: Any) -> None:
    target = tmp_path / "elsewhere"
    link = str(tmp_path / "tokens")
    os.symlink(target, link)
    with pytest.raises(FileExistsError):
        write_token_file(link, [A])
    assert not target.exists() and os.path.islink(link)


def test_a_failed_write_leaves_no_partial_file(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken)
    path = str(tmp_path / "tokens")
    with pytest.raises(OSError, match="Input/output error"):
        write_token_file(path, [A])
    assert not os.path.lexists(path)


# -- reading -------------------------------------------------------------------------------------

def test_a_private_file_owned_by_another_user_is_refused(tmp_path: Any) -> None:
    path = _private(str(tmp_path / "tokens"), f"{A}\n")
    other = os.geteuid() + 4242
    os.chown(path, other, -1)
    with pytest.raises(ValueError, match=re.escape(f"token file {path} is owned by uid {other}, not by this user "
                                                   f"({os.geteuid()})")):
        load_token_file(path)


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o620, 0o602, 0o610, 0o601, 0o660])
def test_a_file_others_can_reach_is_refused_with_the_fix(tmp_path: Any, mode: int) -> None:
    path = _private(str(tmp_path / "tokens"), f"{A}\n")
    os.chmod(path, mode)
    with pytest.raises(ValueError, match=re.escape(
            f"token file {path} is accessible by other users (mode {mode:04o}): run chmod 600 {path}")):
        load_token_file(path)


def test_a_symlink_is_refused_even_to_a_private_file(tmp_path: Any) -> None:
    real = _private(str(tmp_path / "real"), f"{A}\n")
    link = str(tmp_path / "tokens")
    os.symlink(real, link)
    with pytest.raises(ValueError, match=re.escape(f"token file {link} is a symlink: give the file itself")):
        load_token_file(link)


@pytest.mark.timeout(60)
def test_a_missing_file_and_a_directory_and_a_fifo(tmp_path: Any) -> None:
    with pytest.raises(FileNotFoundError):
        load_token_file(str(tmp_path / "none"))
    directory = tmp_path / "dir"
    directory.mkdir(mode=0o700)
    with pytest.raises(ValueError, match="is not a regular file$"):
        load_token_file(str(directory))
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo, 0o600)
    with pytest.raises(ValueError, match="is not a regular file$"):
        load_token_file(fifo)  # opened non-blocking: nothing to wait for (the timeout mark guards it)


def test_the_file_format(tmp_path: Any) -> None:
    path = _private(str(tmp_path / "tokens"), f"# comment\n\n  {A}  \n#{B}\n{B}\n")
    assert load_token_file(path) == [A, B]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "holds no token"),
        ("# only a comment\n\n", "holds no token"),
        (f"{A}\nshort\n", "line 2: a token is 16-512 characters of A-Z a-z 0-9 - . _ ~ + / ="),
        (f"{A}\n{'x' * 513}\n", "line 2: a token is 16-512 characters of A-Z a-z 0-9 - . _ ~ + / ="),
        (f"{A} {B}\n", "line 1: a token is 16-512 characters of A-Z a-z 0-9 - . _ ~ + / ="),
        (f"{A}\n{B}\n\n{A}\n", "line 4: repeats the token of agent-1"),
        (f"{B}\n{A}\n{A}\n", "line 3: repeats the token of agent-2"),
    ],
)
def test_bad_contents_name_the_line(tmp_path: Any, text: str, message: str) -> None:
    path = _private(str(tmp_path / "tokens"), text)
    with pytest.raises(ValueError, match=re.escape(f"token file {path} ") + ".*" + re.escape(message) + "$"):
        load_token_file(path)


def test_the_longest_and_shortest_tokens_are_accepted(tmp_path: Any) -> None:
    tokens = ["x" * 16, "y" * 512, "A-Z.a_z~0+9/=" + "q" * 3]
    assert load_token_file(_private(str(tmp_path / "tokens"), "\n".join(tokens))) == tokens


def test_too_large_or_not_utf8(tmp_path: Any) -> None:
    big = _private(str(tmp_path / "big"), "#" * (1 << 20) + "\n")
    with pytest.raises(ValueError, match="is larger than 1 MiB$"):
        load_token_file(big)
    exact = _private(str(tmp_path / "exact"), A + "\n" + "#" * ((1 << 20) - len(A) - 1))
    assert os.path.getsize(exact) == 1 << 20 and load_token_file(exact) == [A]
    raw = str(tmp_path / "raw")
    with open(raw, "wb") as out:
        out.write(A.encode() + b"\n\xff\n")
    os.chmod(raw, 0o600)
    with pytest.raises(ValueError, match="is not UTF-8 text$"):
        load_token_file(raw)


def test_require_private(tmp_path: Any) -> None:
    directory = tmp_path / "d"
    directory.mkdir(mode=0o700)
    require_private(os.lstat(directory), "dir", chmod="chmod 700 d")  # no error
    os.chmod(directory, 0o750)
    with pytest.raises(ValueError, match=re.escape("dir is accessible by other users (mode 0750): run chmod 700 d")):
        require_private(os.lstat(directory), "dir", chmod="chmod 700 d")


# -- tokens and the verifier -------------------------------------------------------------------

def test_minted_tokens_are_256_random_bits_each() -> None:
    tokens = mint_tokens(3)
    assert len(set(tokens)) == 3
    for token in tokens:
        assert token.startswith(TOKEN_PREFIX) and len(token) == len("dshfs_") + 43
        assert re.fullmatch(r"dshfs_[A-Za-z0-9_-]{43}", token)
    assert len(mint_tokens(1)) == 1
    with pytest.raises(ValueError, match="^the number of tokens must be at least 1$"):
        mint_tokens(0)


def test_principals_are_named_in_file_order() -> None:
    assert [principal_name(i) for i in range(3)] == ["agent-1", "agent-2", "agent-3"]


def test_the_verifier_names_the_principal_of_each_token_and_nobody_else() -> None:
    verifier = BearerTokens([A, B])
    assert len(verifier) == 2

    async def check() -> None:
        first, second = await verifier.verify_token(A), await verifier.verify_token(B)
        assert (first.client_id, second.client_id) == ("agent-1", "agent-2")
        assert first.token == "" and first.scopes == []  # the secret is not kept on the request
        for wrong in (A[:-1], A + "a", "", B.upper(), "\ud800"):
            assert await verifier.verify_token(wrong) is None

    anyio.run(check)
    with pytest.raises(ValueError, match="^at least one token is needed$"):
        BearerTokens([])
    with pytest.raises(ValueError, match="^tokens must differ$"):
        BearerTokens([A, B, A])


def test_the_tokens_are_on_disk_before_the_fsync(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "tokens")
    seen: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        seen.append(open(path, encoding="utf-8").read())  # what the fsync makes durable
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    write_token_file(path, [A])
    assert seen == [f"{_HEADER}{A}\n"]


def test_refused_token_files_leave_no_descriptor_open(tmp_path: Any) -> None:
    shared = _private(str(tmp_path / "shared"), f"{A}\n")
    os.chmod(shared, 0o644)
    directory = tmp_path / "dir"
    directory.mkdir(mode=0o700)
    before = len(os.listdir("/proc/self/fd"))
    for path in (shared, str(directory)):
        with pytest.raises(ValueError):
            load_token_file(path)
    assert len(os.listdir("/proc/self/fd")) == before
